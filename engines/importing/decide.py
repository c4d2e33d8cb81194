"""`hypergov import`, decided purely: what the live org runs (`engines.importing.live`, read by
`engines.importing.read`) and the tree kept from --keep-from in; the documents of the imported
tree, each value with a comment saying where it came from, and the report of what the tree
cannot say out. No I/O: the command writes the documents and renders the report.

The mapping (README "Starting from a live org"): one cluster file per HyperPod cluster named as
the cluster (`decide_cluster`), one project file per HyperPod team (the team keeps its name:
`ComputeQuotaTarget.TeamName`; `decide_project`), org.yaml kept (the org-wide policy lives in no
cluster) with the accounts, regions and instance types the clusters use added. The imported tree
is validated with hypergov's own validator; each error is a report item.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engines.importing.decide_access import SSO_ROLE_PATH, TeamMembers, members_from_entries
from engines.importing.decide_cluster import ClusterDecision, decide_cluster
from engines.importing.decide_project import CostAllocation, TeamFound, decide_project
from engines.importing.live import ClusterRead, KeptTree, LiveBudget, LiveOrg
from engines.importing.report import ImportItem, ImportReport
from engines.importing.yaml_doc import Document, Path, render
from hypergov import naming
from hypergov.problems import Severity
from hypergov.validate import validate_files


@dataclass(frozen=True)
class ImportOptions:
    adopt: bool = False  # clusters written managed + adopt (their instance groups) instead of referenced
    owner: str | None = None  # a cluster's owner when the kept tree names none


@dataclass(frozen=True)
class ImportedTree:
    documents: tuple[Document, ...]
    copied: Mapping[str, bytes]  # files kept whole (workload classes of imported teams)
    report: ImportReport

    def files(self) -> dict[str, bytes]:
        out = {d.path: render(d).encode() for d in self.documents}
        return {**out, **self.copied}


def _org_document(kept: KeptTree, live: LiveOrg) -> tuple[Document, dict[str, str]]:
    """org.yaml as kept, with the clusters' accounts, regions and instance types added; account id -> name."""
    org: dict[str, Any] = dict(kept.org)
    comments: dict[Path, str] = {}
    accounts = [dict(a) for a in org.get("accounts") or []]
    names = {str(a["id"]): str(a["name"]) for a in accounts}
    regions = list(org.get("allowed_regions") or [])
    types = list(org.get("allowed_instance_types") or [])
    for read in live.clusters:
        c = read.cluster
        if c.account not in names:
            names[c.account] = f"account-{c.account}"
            accounts.append({"name": names[c.account], "id": c.account})
            comments[("accounts", len(accounts) - 1)] = f"the account of {c.arn}"
        if c.region not in regions:
            regions.append(c.region)
            comments[("allowed_regions", len(regions) - 1)] = f"the region of {c.arn}"
        for spec in c.groups.values():
            if spec["InstanceType"] not in types:
                types.append(spec["InstanceType"])
                comments[("allowed_instance_types", len(types) - 1)] = f"an instance group of {c.name}"
    org.update(accounts=accounts, allowed_regions=regions, allowed_instance_types=types)
    header = (f"Organization layer: kept from {kept.source} (no cluster holds the org-wide policy); the accounts, "
              "regions and instance types the imported clusters use are added.")
    return Document(path="org.yaml", data=org, comments=comments, header=header), names


def _is_known(org: Mapping[str, Any]) -> Callable[[str], bool]:
    """Cluster-wide principals org.yaml accounts for: platform admins, hypergov's platform role, and
    Identity Center roles when org.yaml names Identity Center platform admins."""
    admins = {str(p) for p in org.get("platform_admins") or []}
    sso_admins = any(p.startswith("identitycenter:") for p in admins)

    def known(principal: str) -> bool:
        return (principal in admins or f":role{naming.PLATFORM_ADMIN_ROLE_PATH}" in principal
                or (sso_admins and SSO_ROLE_PATH in principal))
    return known


def _teams(decisions: Mapping[str, ClusterDecision], reads: Mapping[str, ClusterRead],
           items: list[ImportItem]) -> dict[str, TeamFound]:
    teams: dict[str, TeamFound] = {}
    for key, read in sorted(reads.items()):
        for quota in read.quotas:
            team = str((quota.fields.get("ComputeQuotaTarget") or {}).get("TeamName"))
            found = teams.setdefault(team, TeamFound())
            if key in found.quotas:
                items.append(ImportItem(kind="not-expressible", object=f"ComputeQuota {key}/{team} ({quota.arn})",
                                        why=f"a second quota of team {team} on {key}; the tree holds one per team "
                                        "and cluster", live=dict(quota.fields), file=f"projects/{team}.yaml"))
                continue
            found.quotas[key] = quota
            found.classes[key] = decisions[key].priority_classes
            if quota.name != naming.compute_quota_name(team, key):
                items.append(ImportItem(kind="renamed", object=f"ComputeQuota {key}/{team} ({quota.arn})", why=(
                    f"hypergov names this quota {naming.compute_quota_name(team, key)}; a plan would replace it "
                    "(delete, create)"), live={"Name": quota.name}, file=f"projects/{team}.yaml"))
    return teams


def _kept_plain_quotas(kept: KeptTree, decisions: Mapping[str, ClusterDecision], teams: dict[str, TeamFound],
                       items: list[ImportItem]) -> dict[str, dict[str, Any]]:
    """Quotas on plain-EKS clusters (Kueue ClusterQueues in Kubernetes, not read): team -> cluster -> kept entry."""
    out: dict[str, dict[str, Any]] = {}
    for team, project in sorted(kept.projects.items()):
        for cluster, quota in sorted((project.get("quotas") or {}).items()):
            decision = decisions.get(cluster)
            if decision is None or decision.task_governance:
                continue
            out.setdefault(team, {})[cluster] = quota
            teams.setdefault(team, TeamFound()).classes[cluster] = decision.priority_classes
            items.append(ImportItem(kind="kept", object=f"Kueue ClusterQueue {naming.kueue_cluster_queue(team)} on "
                                    f"{cluster}", why=f"{cluster} runs plain EKS: team {team}'s quota there is a "
                                    f"Kueue object in Kubernetes, not read; kept from {kept.source}",
                                    file=f"projects/{team}.yaml"))
    return out


def _budgets(live: LiveOrg, org_name: str, teams: Mapping[str, TeamFound],
             items: list[ImportItem]) -> dict[str, list[LiveBudget]]:
    """hypergov's budgets (`<org>-<team>-monthly`) per team; one of a team the import did not find is an item."""
    per_team: dict[str, list[LiveBudget]] = {}
    prefix, suffix = f"{org_name}-", "-monthly"
    for budget in live.budgets:
        if not (budget.name.startswith(prefix) and budget.name.endswith(suffix)):
            continue
        team = budget.name[len(prefix):-len(suffix)]
        if team in teams:
            per_team.setdefault(team, []).append(budget)
        else:
            items.append(ImportItem(kind="unmatched-budget", object=f"budget {budget.name} (account {budget.account})",
                                    why=f"named as hypergov names a project's budget, but no imported cluster has a "
                                    f"team {team}", live={"BudgetLimit": f"{budget.amount} {budget.unit}",
                                                         "TimeUnit": budget.time_unit}))
    return per_team


def validation_items(files: Mapping[str, bytes]) -> tuple[ImportItem, ...]:
    """Each error hypergov's validator finds in the imported tree, as a report item."""
    report = validate_files(files, display_root="")
    return tuple(ImportItem(kind="invalid", object=f"{p.pos}", why=(
        f"{p.rule}: {p.message} (the values are the live org's, see the file's comments; {p.hint})"),
        file=p.pos.file.lstrip("/")) for p in report.problems if p.severity is Severity.ERROR)


def decide_import(live: LiveOrg, kept: KeptTree, options: ImportOptions) -> ImportedTree:
    """The imported tree and its report (see the module docstring)."""
    items: list[ImportItem] = []
    org_doc, account_names = _org_document(kept, live)
    reads = {r.cluster.name: r for r in live.clusters}
    decisions: dict[str, ClusterDecision] = {}
    for key, read in sorted(reads.items()):
        kept_cluster = kept.clusters.get(key)
        owner, source = _owner(kept_cluster, options, kept, key, items)
        decisions[key] = decide_cluster(read, account_name=account_names[read.cluster.account], owner=owner,
                                        owner_source=source, adopt=options.adopt, kept=kept_cluster,
                                        kept_source=f"{kept.source}/clusters/{key}.yaml")
        items += decisions[key].items
    teams = _teams(decisions, reads, items)
    plain = _kept_plain_quotas(kept, decisions, teams, items)
    members: dict[str, TeamMembers] = {}
    for key, read in sorted(reads.items()):
        items += members_from_entries(cluster=key, entries=read.access_entries, org=str(kept.org.get("name", "")),
                                      role_trust=live.role_trust, found=members, role_tags=live.role_tags,
                                      is_known=_is_known(kept.org))
    for team in sorted(set(members) - set(teams)):
        items.append(ImportItem(kind="unmatched-principal", object=f"access entries into {naming.namespace(team)}",
                                why=f"team {team} has no compute quota on the imported clusters; its members "
                                f"{sorted(p for ps in members[team].members.values() for p in ps)} are not imported"))
    budgets = _budgets(live, str(kept.org.get("name", "")), teams, items)
    cost = kept.org.get("cost_allocation") or {}
    allocation = CostAllocation(project_tag=str(cost.get("project_tag", "Project")),
                                cost_centre_tag=str(cost.get("cost_centre_tag", "CostCentre")))
    documents = [org_doc, *(d.document for _, d in sorted(decisions.items()))]
    for team, found in sorted(teams.items()):
        document, found_items = decide_project(team, found, members=members.get(team), budgets=budgets.get(team, []),
                                               cost=allocation, kept=kept.projects.get(team),
                                               kept_source=f"{kept.source}/projects/{team}.yaml")
        if team in plain:
            document = _with_quotas(document, plain[team], kept.source)
        documents.append(document)
        items += found_items
    copied = {path: data for path, data in kept.other_files.items()
              if path.startswith("workloads/") and path.split("/")[1] in teams}
    imported = ImportedTree(documents=tuple(documents), copied=copied, report=ImportReport())
    all_items = tuple(items) + validation_items(imported.files())
    return ImportedTree(documents=imported.documents, copied=copied,
                        report=ImportReport(items=all_items, written=tuple(sorted(imported.files()))))


def _with_quotas(document: Document, quotas: Mapping[str, Any], source: str) -> Document:
    data = dict(document.data)
    data["quotas"] = dict(sorted({**data.get("quotas", {}), **quotas}.items()))
    comments = dict(document.comments)
    comments.update({("quotas", c): f"kept from {source} (a Kueue ClusterQueue, not read)" for c in quotas})
    return Document(path=document.path, data=data, comments=comments, header=document.header)


def _owner(kept_cluster: Mapping[str, Any] | None, options: ImportOptions, kept: KeptTree, key: str,
           items: list[ImportItem]) -> tuple[str, str]:
    """The cluster's owner (the live org does not hold one) and where it came from."""
    if kept_cluster is not None and kept_cluster.get("owner"):
        return str(kept_cluster["owner"]), f"kept from {kept.source}/clusters/{key}.yaml"
    if options.owner:
        return options.owner, "given with --owner"
    admins = [str(p) for p in kept.org.get("platform_admins") or [] if str(p).startswith("arn:")]
    items.append(ImportItem(kind="not-read", object=f"HyperPod cluster {key}", why=(
        "a cluster's owner is not in the live org; " + (f"written as org.yaml's first platform admin {admins[0]} "
                                                         "(give --owner to choose)" if admins else
                                                         "give --owner")), file=f"clusters/{key}.yaml"))
    return (admins[0] if admins else ""), "not in the live org (see the import report)"
