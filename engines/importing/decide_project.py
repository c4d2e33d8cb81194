"""A team's project file from its live compute quotas, access entries and budgets, decided
without I/O.

Read live: the quotas per cluster (`decide_quota`), the fair-share weight and preemption (one
value per team in the tree: differing values across clusters are a report item, the first
cluster's written), the members (`decide_access`), the project's tags and cost centre (a team's
quota carries them: hypergov tags it with the project tag, the cost centre and the project's
tags), the budget (hypergov's `<org>-<team>-monthly` in every account, the monthly amount split
over them, summed back). Kept from --keep-from when given (the live org does not hold them): the
description, allowed priority classes, extra permissions, Git-host handles and Identity Center
members. Without it a team may use every priority class of its clusters (nothing live restricts
it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from engines.importing.decide_access import TeamMembers
from engines.importing.decide_quota import decode_quota
from engines.importing.live import LiveBudget, LiveTaskObject
from engines.importing.report import ImportItem
from engines.importing.yaml_doc import Document, Path
from hypergov.model.common import PERSONAS, is_identity_center

KEPT_FIELDS = ("description", "extra_permissions", "members_on_git_host")


@dataclass
class TeamFound:
    """What the clusters said about one team: its quota per cluster, with each cluster's classes."""

    quotas: dict[str, LiveTaskObject] = field(default_factory=dict)  # cluster -> quota
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # cluster -> its priority classes


@dataclass(frozen=True)
class CostAllocation:
    project_tag: str
    cost_centre_tag: str


def _budget(team: str, budgets: Sequence[LiveBudget], comments: dict[Path, str],
            items: list[ImportItem]) -> dict[str, Any] | None:
    if not budgets:
        return None
    total = sum((Decimal(b.amount) for b in budgets), Decimal(0))
    rounded = int(total.to_integral_value())
    if abs(total - rounded) > Decimal("0.01") * len(budgets):
        items.append(ImportItem(kind="not-expressible", object=f"budgets {', '.join(b.name for b in budgets)}",
                                why=f"monthly limits sum to {total} USD; the tree holds whole dollars ({rounded} "
                                "written)", live={"amounts": [b.amount for b in budgets]},
                                file=f"projects/{team}.yaml"))
    thresholds = set()
    for b in budgets:
        for n in b.notifications:
            if (n.get("NotificationType"), n.get("ComparisonOperator"), n.get("ThresholdType", "PERCENTAGE")) != (
                    "ACTUAL", "GREATER_THAN", "PERCENTAGE"):
                items.append(ImportItem(kind="not-expressible", object=f"budget {b.name} (account {b.account})",
                                        why="a notification other than actual spend above a percentage; the tree's "
                                        "alert_at_percent says only those", live=dict(n),
                                        file=f"projects/{team}.yaml"))
                continue
            thresholds.add(int(Decimal(str(n["Threshold"]))))
    comments[("budget",)] = "AWS Budgets " + ", ".join(f"{b.name} ({b.account}: {b.amount} {b.unit})"
                                                         for b in budgets)
    return {"monthly_usd": rounded, "alert_at_percent": sorted(thresholds)}


def _members(members: TeamMembers | None, kept: Mapping[str, Any], comments: dict[Path, str],
             kept_source: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    kept_members = kept.get("members") or {}
    for persona in PERSONAS:
        live = dict(members.members.get(persona, {})) if members else {}
        sso = [p for p in kept_members.get(persona) or [] if is_identity_center(p)]
        out[persona] = sorted(live) + sso
        for index, principal in enumerate(out[persona]):
            comments[("members", persona, index)] = live.get(
                principal, f"kept from {kept_source} (Identity Center, not read)")
    return out


def decide_project(team: str, found: TeamFound, *, members: TeamMembers | None, budgets: Sequence[LiveBudget],
                   cost: CostAllocation, kept: Mapping[str, Any] | None, kept_source: str) -> tuple[Document,
                                                                                               list[ImportItem]]:
    file = f"projects/{team}.yaml"
    items: list[ImportItem] = []
    comments: dict[Path, str] = {}
    kept_project = kept or {}
    data: dict[str, Any] = {}
    if "description" in kept_project:
        data["description"] = kept_project["description"]
        comments[("description",)] = f"kept from {kept_source}"
    data["members"] = _members(members, kept_project, comments, kept_source)
    kept_members = kept_project.get("members") or {}
    if members is not None and members.identity_center and not any(
            is_identity_center(p) for persona in members.identity_center for p in kept_members.get(persona) or []):
        items.append(ImportItem(kind="not-read", object=f"Identity Center roles of team {team}", why=(
            f"principals of an Identity Center permission set reach team {team} as "
            f"{', '.join(sorted(members.identity_center))}; its assigned groups and users are not read"), file=file))
    quotas, weights, preempts, tags = _quotas(team, found, items, comments)
    comments[("tags",)] = "tags of the team's compute quotas (ListTags), hypergov's and cost keys left out"
    if not tags and members is not None and members.role_tags:
        tags = {k: v for k, v in sorted(members.role_tags.items()) if not k.startswith(("hypergov:", "aws:"))}
        comments[("tags",)] = "tags of hypergov's roles of the team (IAM), hypergov's and cost keys left out"
    cost_centre = tags.pop(cost.cost_centre_tag, None)
    tags.pop(cost.project_tag, None)
    if cost_centre is not None:
        data["cost_centre"] = cost_centre
        comments[("cost_centre",)] = f"its tag {cost.cost_centre_tag}"
    budget = _budget(team, budgets, comments, items)
    if budget is not None:
        data["budget"] = budget
    data["tags"] = tags
    data["quotas"] = quotas
    for name, what, values in (("fair_share_weight", "FairShareWeight", weights),
                               ("preempt_own_lower_priority", "PreemptTeamTasks", preempts)):
        if not any(v is not None for v in values.values()) and name in kept_project:
            data[name] = kept_project[name]  # the team's quotas are Kueue's (plain EKS), not read
            comments[(name,)] = f"kept from {kept_source} (no compute quota of the team was read)"
        else:
            data[name] = _one(team, what, values, items, file)
    data["allowed_priority_classes"] = _classes(found, kept_project, comments, kept_source)
    for name in KEPT_FIELDS[1:]:
        if name in kept_project:
            data[name] = kept_project[name]
            comments[(name,)] = f"kept from {kept_source}"
    if kept is None and members is not None and members.role_tags:
        items.append(ImportItem(kind="not-read", object=f"extra permissions of team {team}", why=(
            "hypergov's persona roles of the team exist, but the permissions a tree added to them (extra_permissions) "
            "are not read back from their IAM policies; none written: give --keep-from with the tree that declared "
            "them, or a plan shows their removal"), file=file))
    header = f"Project layer: team {team}, imported from its live compute quotas, access entries and budgets."
    return Document(path=file, data=data, comments=comments, header=header), items


def _quotas(team: str, found: TeamFound, items: list[ImportItem], comments: dict[Path, str]) -> tuple[
        dict[str, Any], dict[str, Any], dict[str, Any], dict[str, str]]:
    quotas: dict[str, Any] = {}
    weights: dict[str, Any] = {}
    preempts: dict[str, Any] = {}
    tags: dict[str, str] = {}
    for cluster, quota in sorted(found.quotas.items()):
        decoded = decode_quota(quota.fields)
        quotas[cluster] = decoded.entry
        comments[("quotas", cluster)] = f"from CreateComputeQuota {cluster}/{team} ({quota.name}, {quota.arn})"
        for why, live in decoded.problems:
            items.append(ImportItem(kind="not-expressible", object=f"ComputeQuota {cluster}/{team} ({quota.arn})",
                                    why=why, live=live, file=f"projects/{team}.yaml"))
        weights[cluster], preempts[cluster] = decoded.fair_share_weight, decoded.preempt_own_lower_priority
        tags.update({k: v for k, v in quota.tags.items() if not k.startswith(("hypergov:", "aws:"))})
    return quotas, weights, preempts, dict(sorted(tags.items()))


def _one(team: str, what: str, per_cluster: Mapping[str, Any], items: list[ImportItem], file: str) -> Any:
    """The team's one value of a per-team field; differing values across clusters are an item."""
    values = {c: v for c, v in per_cluster.items() if v is not None}
    if len(set(values.values())) > 1:
        first = sorted(values)[0]
        items.append(ImportItem(kind="not-expressible", object=f"ComputeQuotas of team {team}", why=(
            f"{what} differs per cluster; the tree holds one per team ({values[first]} of {first} written, so a "
            "plan changes the others)"), live=dict(sorted(values.items())), file=file))
    default = {"FairShareWeight": 0, "PreemptTeamTasks": True}[what]
    return values[sorted(values)[0]] if values else default


def _classes(found: TeamFound, kept: Mapping[str, Any], comments: dict[Path, str], kept_source: str) -> list[str]:
    common = set.intersection(*(set(c) for c in found.classes.values())) if found.classes else set()
    if "allowed_priority_classes" in kept:
        comments[("allowed_priority_classes",)] = f"kept from {kept_source} (the live org does not restrict a team)"
        return list(kept["allowed_priority_classes"])
    comments[("allowed_priority_classes",)] = ("every class of the team's clusters: the admission policy that may "
                                               "restrict it lives in Kubernetes, not read")
    return sorted(common)
