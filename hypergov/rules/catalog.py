"""Every rule id hypergov can report, with a title and what it protects. Ids are stable: CI
pipelines and reviewers refer to them, so an id is never reused for a different check."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleInfo:
    id: str
    family: str
    title: str


RULES: tuple[RuleInfo, ...] = (
    RuleInfo("SYN001", "syntax", "YAML syntax error or unreadable value"),
    RuleInfo("SYN002", "syntax", "duplicate key in a mapping"),
    RuleInfo("SYN003", "syntax", "empty file"),
    RuleInfo("SYN004", "syntax", "more than one YAML document in a file"),
    RuleInfo("SYN005", "syntax", "file too large, too deep, or not UTF-8"),
    RuleInfo("SYN006", "syntax", "YAML merge key ('<<') used"),
    RuleInfo("SYN007", "syntax", "required file missing (org.yaml)"),
    RuleInfo("SYN008", "syntax", "unexpected file in the config tree"),
    RuleInfo("SYN009", "syntax", "tree entry that is not a regular file (link, directory named *.yaml, "
                                 "device, FIFO, socket, Git submodule)"),
    RuleInfo("SYN010", "syntax", "two paths differ only in case or Unicode form"),
    RuleInfo("SCH001", "schema", "unknown key"),
    RuleInfo("SCH002", "schema", "wrong type (no silent coercion)"),
    RuleInfo("SCH003", "schema", "missing required key"),
    RuleInfo("SCH004", "schema", "value out of range, too long, or not matching its pattern"),
    RuleInfo("PERM001", "permissions", "a project role grants an action outside the org's maximum boundary"),
    RuleInfo("PERM002", "permissions", "a project role grants an action the boundary denies"),
    RuleInfo("PERM003", "permissions",
             "an escalation action (one that could remove, rewrite or get around the boundary) is grantable"),
    RuleInfo("PERM004", "permissions", "a persona's org-wide policy reaches outside the boundary"),
    RuleInfo("PERM005", "permissions",
             "an action pattern too complex, or a boundary too large, to check within hypergov's bounds"),
    RuleInfo("PERM006", "permissions", "a project grants a persona an action above the persona's ceiling"),
    RuleInfo("PERM007", "permissions", "org.yaml grants a persona more than its ceiling, or an opt-out lifts nothing"),
    RuleInfo("CAP001", "capacity", "guaranteed quotas exceed the cluster's capacity for an instance type"),
    RuleInfo("CAP002", "capacity", "borrow limit (percentage or absolute) set without the LendAndBorrow strategy"),
    RuleInfo("CAP003", "capacity", "borrowing on a cluster whose idle-resource sharing is off (lent quota only)"),
    RuleInfo("CAP004", "capacity", "a team borrows on a cluster where no team lends"),
    RuleInfo("CAP005", "capacity", "a cluster offers an instance type the org does not allow"),
    RuleInfo("CAP006", "capacity", "a workload class asks for more GPUs per job than the team can ever get"),
    RuleInfo("CAP007", "capacity", "a quota amount in a unit the instance type does not have "
                                   "(a MIG profile its GPU does not offer, accelerators on a type without any)"),
    RuleInfo("CAP008", "capacity", "guaranteed MIG partitions exceed what the cluster's GPUs can be split into"),
    RuleInfo("CAP009", "capacity", "absolute borrow limits inconsistent with the percentage limit or the capacity"),
    RuleInfo("CAP010", "capacity", "a quota in MIG partitions, vCPU or memory on a plain-EKS cluster"),
    RuleInfo("CLU001", "clusters", "an instance group of a declared cluster runs a type the org does not allow"),
    RuleInfo("CLU002", "clusters", "decommissioning a cluster on which projects still hold quota"),
    RuleInfo("REF001", "references", "unknown cluster"),
    RuleInfo("REF002", "references", "instance type not offered by the cluster"),
    RuleInfo("REF003", "references", "unknown priority class"),
    RuleInfo("REF004", "references", "workload class of an unknown project"),
    RuleInfo("REF005", "references", "unknown account, or region the org does not allow"),
    RuleInfo("REF006", "references", "workload class priority not allowed for its project"),
    RuleInfo("REF007", "references", "HyperPod ARN missing (task governance) or of another account or region"),
    RuleInfo("REF008", "references", "an Identity Center member, but org.yaml names no Identity Center instance"),
    RuleInfo("IDN001", "identity", "name invalid, or a name derived from it too long for where it is written "
                                   "(label value, namespace, object name)"),
    RuleInfo("IDN002", "identity", "derived IAM role / policy / budget name invalid or too long"),
    RuleInfo("IDN003", "identity", "tag key or value invalid (reserved prefix, length)"),
    RuleInfo("IDN004", "identity", "name not unique across the organization"),
    RuleInfo("IDN005", "identity", "project without a ProjectLead"),
    RuleInfo("IDN006", "identity", "platform administrator outside the org layer"),
    RuleInfo("IDN007", "identity", "invisible or bidirectional-control character in a value"),
    RuleInfo("IDN008", "identity", "a principal holds more than one persona in the same project"),
    RuleInfo("IDN009", "identity", "a principal outside the org's accounts and partition (unless trusted)"),
    RuleInfo("COST001", "cost", "project lacks a tag the org requires"),
    RuleInfo("COST002", "cost", "project lacks a valid cost centre"),
    RuleInfo("COST003", "cost", "project lacks a monthly budget"),
    RuleInfo("COST004", "cost", "project sets a tag hypergov owns"),
    RuleInfo("COST005", "cost", "org.yaml prices an instance type the org does not allow"),
)

BY_ID = {r.id: r for r in RULES}
