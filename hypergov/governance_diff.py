"""What a change to the governance tree means, from the two trees alone (no engine, no AWS), so
a reviewer judges the change, not the resource addresses it touches: per project its guarantees
(instances and GPUs per cluster and instance type), lending, fair-share weight, priority classes,
members and permissions per persona, budget and workload classes; per cluster its capacity, the
GPUs all teams are guaranteed against the GPUs it has, and its priority classes; for the org its
boundary, persona policies and platform admins; and, for each, every other field by path.

Values compare as HyperPod applies them: the models fill in HyperPod's defaults
(`hypergov.hyperpod_defaults`) and the borrow limit compares as
`ClusterQuota.effective_borrow_limit_percent`, so a field left out and the same field written
with its default are no change, and a change shows the value in effect. GPUs come from the one
accelerators table (`hypergov.model.accelerators`, overridden per cluster where it says so).

Pure: two validated trees in, a frozen `GovernanceDiff` out (`hypergov.governance_markdown`
renders it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from hypergov.model.accelerators import accelerators_per_instance
from hypergov.model.cluster import Cluster
from hypergov.model.common import PERSONAS, is_identity_center
from hypergov.model.org import Organization
from hypergov.model.project import ClusterQuota, Project
from hypergov.model.tree import GovernanceTree
from hypergov.model.workload import WorkloadClass

T = TypeVar("T")
Status = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class Change(Generic[T]):
    """One value before and after the change."""

    before: T
    after: T


@dataclass(frozen=True)
class Entry:
    """A list item added or removed: a principal, an action pattern, a priority class. `group`
    says which list (a persona, `allow` / `deny` of the boundary); empty when there is one list."""

    value: str
    added: bool
    group: str = ""


@dataclass(frozen=True)
class FieldChange:
    """Any other field, by its dotted path in the YAML file, as text; None where it is absent."""

    path: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class QuotaChange:
    """A team's guarantee of one instance type on one cluster (0: no guarantee). GPUs are None
    where the accelerators per instance are unknown."""

    team: str
    cluster: str
    instance_type: str
    instances: Change[int]
    gpus: Change[int | None]


@dataclass(frozen=True)
class SharingChange:
    """How a team lends and borrows on one cluster. The strategy is None where the team has no
    quota there; the borrow limit is None where the strategy never borrows."""

    cluster: str
    strategy: Change[str | None]
    borrow_limit_percent: Change[int | None]


@dataclass(frozen=True)
class BudgetChange:
    """The project's monthly budget (None: no budget) and its alert thresholds."""

    monthly_usd: Change[int | None]
    alert_at_percent: Change[tuple[int, ...]]


@dataclass(frozen=True)
class WorkloadClassDiff:
    name: str
    status: Status
    fields: tuple[FieldChange, ...]


@dataclass(frozen=True)
class ProjectDiff:
    name: str
    status: Status
    quotas: tuple[QuotaChange, ...]
    sharing: tuple[SharingChange, ...]
    fair_share_weight: Change[int | None] | None
    allowed_priority_classes: tuple[Entry, ...]
    members: tuple[Entry, ...]  # group: the persona
    permissions: tuple[Entry, ...]  # extra_permissions; group: the persona
    budget: BudgetChange | None
    workload_classes: tuple[WorkloadClassDiff, ...]
    fields: tuple[FieldChange, ...]  # description, cost centre, tags, preemption


@dataclass(frozen=True)
class CapacityChange:
    instance_type: str
    instances: Change[int]
    gpus: Change[int | None]


@dataclass(frozen=True)
class PriorityClassChange:
    """A scheduler priority class; its weight is None where the class is absent."""

    name: str
    weight: Change[int | None]


@dataclass(frozen=True)
class ClusterDiff:
    """A cluster that changed, or whose teams' guarantees changed. GPU totals are None where an
    instance type's accelerators are unknown; a cluster absent on one side has 0."""

    name: str
    status: Status
    guaranteed_gpus: Change[int | None]
    capacity_gpus: Change[int | None]
    capacity: tuple[CapacityChange, ...]
    priority_classes: tuple[PriorityClassChange, ...]
    fields: tuple[FieldChange, ...]  # scheduler switches, account, region, owner, task governance, tags

    @property
    def only_guarantees(self) -> bool:
        """Only the teams' guarantees on it changed, not the cluster file."""
        return self.status == "changed" and not (self.capacity or self.priority_classes or self.fields)


@dataclass(frozen=True)
class OrgDiff:
    permission_boundary: tuple[Entry, ...]  # group: allow / deny
    persona_actions: tuple[Entry, ...]  # group: the persona
    platform_admins: tuple[Entry, ...]
    fields: tuple[FieldChange, ...]


@dataclass(frozen=True)
class GovernanceDiff:
    org: OrgDiff | None
    clusters: tuple[ClusterDiff, ...]
    projects: tuple[ProjectDiff, ...]

    @property
    def empty(self) -> bool:
        return self.org is None and not self.clusters and not self.projects

    @property
    def identity_center_members(self) -> tuple[str, ...]:
        """The distinct Identity Center principals added or removed: project members and
        platform admins, sorted (what the summary looks up in the identity store)."""
        entries = [*(e for p in self.projects for e in p.members), *(self.org.platform_admins if self.org else ())]
        return tuple(sorted({e.value for e in entries if is_identity_center(e.value)}))


def diff_governance(base: GovernanceTree, head: GovernanceTree) -> GovernanceDiff:
    """Every governance change from `base` to `head` (both validated), unchanged entities left out."""
    workloads = _workloads_by_team(base, head)
    projects = tuple(p for name in sorted(set(base.projects) | set(head.projects))
                     if (p := _project_diff(name, base, head, workloads.get(name, ()))) is not None)
    touched = {q.cluster for p in projects for q in p.quotas}
    touched |= {f.path.split(".")[1] for p in projects for f in p.fields if f.path.startswith("quotas.")}
    clusters = tuple(c for name in sorted(set(base.clusters) | set(head.clusters))
                     if (c := _cluster_diff(name, base, head, guarantees_changed=name in touched)) is not None)
    return GovernanceDiff(org=_org_diff(base, head), clusters=clusters, projects=projects)


def _status(before: object | None, after: object | None) -> Status:
    return "added" if before is None else "removed" if after is None else "changed"


def _entries(before: Iterable[str], after: Iterable[str], group: str = "") -> list[Entry]:
    old, new = dict.fromkeys(before), dict.fromkeys(after)  # ordered sets: the file's order
    return ([Entry(v, False, group) for v in old if v not in new]
            + [Entry(v, True, group) for v in new if v not in old])


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value)


def _flatten(value: Any, path: str, out: dict[str, str]) -> dict[str, str]:
    """Leaves of a model dump by dotted path (list items of objects by index); None is absent."""
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        for index, item in enumerate(value):
            _flatten(item, f"{path}[{index}]", out)
    elif value is not None:
        out[path] = _text(value)
    return out


def _field_changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> tuple[FieldChange, ...]:
    old, new = _flatten(before or {}, "", {}), _flatten(after or {}, "", {})
    return tuple(FieldChange(path, old.get(path), new.get(path)) for path in sorted(set(old) | set(new))
                 if old.get(path) != new.get(path))


def _per_instance(cluster: Cluster | None, instance_type: str) -> int | None:
    if cluster is None:
        return accelerators_per_instance(instance_type)
    return cluster.accelerators(instance_type)


def _gpus(instances: int, cluster: Cluster | None, instance_type: str) -> int | None:
    if instances == 0:
        return 0
    per = _per_instance(cluster, instance_type)
    return None if per is None else instances * per


def _cluster_model(tree: GovernanceTree, name: str) -> Cluster | None:
    found = tree.clusters.get(name)
    return found.model if found is not None else None


# --- projects ---------------------------------------------------------------------------------

_PROJECT_EXPLICIT = {"quotas", "members", "extra_permissions", "budget", "fair_share_weight",
                     "allowed_priority_classes"}


# Quota fields the explicit quota and sharing rows do not show: listed as field changes.
_QUOTA_FIELDS = {"resources", "absolute_borrow_limits"}


def _project_fields(project: Project) -> dict[str, Any]:
    """The project's fields shown as plain field changes: everything without its own row, and of
    each quota its finer-unit guarantees and absolute borrow limits."""
    fields = project.model_dump(mode="json", exclude=_PROJECT_EXPLICIT)
    quotas = {c: q.model_dump(mode="json", include=_QUOTA_FIELDS, exclude_none=True)
              for c, q in sorted(project.quotas.items())}
    return {**fields, "quotas": {c: q for c, q in quotas.items() if any(q.values())}}


def _project_diff(name: str, base: GovernanceTree, head: GovernanceTree,
                  workloads: tuple[WorkloadClassDiff, ...]) -> ProjectDiff | None:
    before = base.projects[name].model if name in base.projects else None
    after = head.projects[name].model if name in head.projects else None
    if before == after and not workloads:
        return None
    weight = Change(before.fair_share_weight if before else None, after.fair_share_weight if after else None)
    diff = ProjectDiff(
        name=name, status=_status(before, after),
        quotas=_quota_changes(name, before, after, base, head),
        sharing=_sharing_changes(before, after),
        fair_share_weight=weight if weight.before != weight.after else None,
        allowed_priority_classes=tuple(_entries(before.allowed_priority_classes if before else (),
                                                after.allowed_priority_classes if after else ())),
        members=tuple(e for persona in PERSONAS for e in _entries(
            before.members.of(persona) if before else (), after.members.of(persona) if after else (), persona)),
        permissions=tuple(e for persona in PERSONAS for e in _entries(
            before.extra_permissions.of(persona) if before else (),
            after.extra_permissions.of(persona) if after else (), persona)),
        budget=_budget_change(before, after),
        workload_classes=workloads,
        fields=_field_changes(_project_fields(before) if before else None,
                              _project_fields(after) if after else None),
    )
    # the models differ, yet nothing HyperPod applies does: a default written out or left out
    return None if diff.status == "changed" and not _any_change(diff) else diff


def _any_change(diff: ProjectDiff) -> bool:
    return bool(diff.quotas or diff.sharing or diff.fair_share_weight or diff.allowed_priority_classes
                or diff.members or diff.permissions or diff.budget or diff.workload_classes or diff.fields)


def _quota_changes(team: str, before: Project | None, after: Project | None, base: GovernanceTree,
                   head: GovernanceTree) -> tuple[QuotaChange, ...]:
    old = before.quotas if before else {}
    new = after.quotas if after else {}
    changes: list[QuotaChange] = []
    for cluster in sorted(set(old) | set(new)):
        was = old[cluster].instances if cluster in old else {}
        now = new[cluster].instances if cluster in new else {}
        base_cluster, head_cluster = _cluster_model(base, cluster), _cluster_model(head, cluster)
        for itype in sorted(set(was) | set(now)):
            count = Change(was.get(itype, 0), now.get(itype, 0))
            gpus = Change(_gpus(count.before, base_cluster, itype), _gpus(count.after, head_cluster, itype))
            if count.before != count.after or gpus.before != gpus.after:
                changes.append(QuotaChange(team, cluster, itype, count, gpus))
    return tuple(changes)


def _borrow_limit(quota: ClusterQuota | None) -> int | None:
    if quota is None or quota.sharing != "LendAndBorrow":
        return None
    return quota.effective_borrow_limit_percent()


def _sharing_changes(before: Project | None, after: Project | None) -> tuple[SharingChange, ...]:
    old = before.quotas if before else {}
    new = after.quotas if after else {}
    changes: list[SharingChange] = []
    for cluster in sorted(set(old) | set(new)):
        was, now = old.get(cluster), new.get(cluster)
        strategy: Change[str | None] = Change(was.sharing if was else None, now.sharing if now else None)
        limit = Change(_borrow_limit(was), _borrow_limit(now))
        if strategy.before != strategy.after or limit.before != limit.after:
            changes.append(SharingChange(cluster, strategy, limit))
    return tuple(changes)


def _budget_change(before: Project | None, after: Project | None) -> BudgetChange | None:
    old = before.budget if before else None
    new = after.budget if after else None
    if old == new:
        return None
    return BudgetChange(
        monthly_usd=Change(old.monthly_usd if old else None, new.monthly_usd if new else None),
        alert_at_percent=Change(tuple(old.alert_at_percent) if old else (),
                                tuple(new.alert_at_percent) if new else ()))


def _workloads_by_team(base: GovernanceTree, head: GovernanceTree) -> dict[str, tuple[WorkloadClassDiff, ...]]:
    found: dict[str, list[WorkloadClassDiff]] = defaultdict(list)
    for key in sorted(set(base.workloads) | set(head.workloads)):
        before: WorkloadClass | None = base.workloads[key].model if key in base.workloads else None
        after: WorkloadClass | None = head.workloads[key].model if key in head.workloads else None
        if before == after:
            continue
        found[key[0]].append(WorkloadClassDiff(key[1], _status(before, after), _field_changes(
            before.model_dump(mode="json") if before else None, after.model_dump(mode="json") if after else None)))
    return {team: tuple(diffs) for team, diffs in found.items()}


# --- clusters ---------------------------------------------------------------------------------

_CLUSTER_EXPLICIT: dict[str, Any] = {"capacity": True, "scheduler": {"priority_classes"}}


def guaranteed_gpus(tree: GovernanceTree, cluster: str) -> int | None:
    """The GPUs every team together is guaranteed on `cluster` (0 when it is not in the tree):
    whole instances times their GPUs, plus guarantees given in accelerators (MIG partitions, vCPU
    and memory are no whole GPUs)."""
    model = _cluster_model(tree, cluster)
    total = 0
    for project in tree.projects.values():
        quota = project.model.quotas.get(cluster)
        for itype, count in (quota.instances.items() if quota else ()):
            gpus = _gpus(count, model, itype)
            if gpus is None:
                return None
            total += gpus
        total += sum(a.accelerators or 0 for a in (quota.resources.values() if quota else ()))
    return total


def capacity_gpus(cluster: Cluster | None) -> int | None:
    """The GPUs the cluster has (0 when it is not in the tree)."""
    total = 0
    for itype, capacity in (cluster.capacity.items() if cluster else ()):
        gpus = _gpus(capacity.instances, cluster, itype)
        if gpus is None:
            return None
        total += gpus
    return total


def _cluster_diff(name: str, base: GovernanceTree, head: GovernanceTree, *,
                  guarantees_changed: bool) -> ClusterDiff | None:
    before, after = _cluster_model(base, name), _cluster_model(head, name)
    if before == after and not guarantees_changed:
        return None
    capacity = []
    for itype in sorted(set(before.capacity if before else ()) | set(after.capacity if after else ())):
        count = Change(before.capacity[itype].instances if before and itype in before.capacity else 0,
                       after.capacity[itype].instances if after and itype in after.capacity else 0)
        gpus = Change(_gpus(count.before, before, itype), _gpus(count.after, after, itype))
        if count.before != count.after or gpus.before != gpus.after:
            capacity.append(CapacityChange(itype, count, gpus))
    old = {pc.name: pc.weight for pc in before.scheduler.priority_classes} if before else {}
    new = {pc.name: pc.weight for pc in after.scheduler.priority_classes} if after else {}
    priorities = [PriorityClassChange(pc, Change(old.get(pc), new.get(pc)))
                  for pc in dict.fromkeys([*old, *new]) if old.get(pc) != new.get(pc)]
    diff = ClusterDiff(
        name=name, status=_status(before, after),
        guaranteed_gpus=Change(guaranteed_gpus(base, name), guaranteed_gpus(head, name)),
        capacity_gpus=Change(capacity_gpus(before), capacity_gpus(after)),
        capacity=tuple(capacity), priority_classes=tuple(priorities),
        fields=_field_changes(before.model_dump(mode="json", exclude=_CLUSTER_EXPLICIT) if before else None,
                              after.model_dump(mode="json", exclude=_CLUSTER_EXPLICIT) if after else None),
    )
    # e.g. the table's accelerators written out as an override, or teams swapping guarantees
    unchanged = diff.only_guarantees and diff.guaranteed_gpus.before == diff.guaranteed_gpus.after
    return None if unchanged else diff


# --- the org ----------------------------------------------------------------------------------

_ORG_PERSONAS = (*PERSONAS, "PlatformAdministrator")
_ORG_EXPLICIT: dict[str, Any] = {"permission_boundary": True, "platform_admins": True,
                                 "personas": {p: {"actions"} for p in _ORG_PERSONAS}}


def _persona_actions(org: Organization, persona: str) -> list[str]:
    policy = getattr(org.personas, persona)
    return list(policy.actions) if policy is not None else []


def _org_diff(base: GovernanceTree, head: GovernanceTree) -> OrgDiff | None:
    before = base.org.model if base.org else None
    after = head.org.model if head.org else None
    if before is None or after is None or before == after:
        return None
    boundary = (_entries(before.permission_boundary.allow, after.permission_boundary.allow, "allow")
                + _entries(before.permission_boundary.deny, after.permission_boundary.deny, "deny"))
    actions = [e for p in _ORG_PERSONAS for e in _entries(_persona_actions(before, p), _persona_actions(after, p), p)]
    return OrgDiff(permission_boundary=tuple(boundary), persona_actions=tuple(actions),
                   platform_admins=tuple(_entries(before.platform_admins, after.platform_admins)),
                   fields=_field_changes(before.model_dump(mode="json", exclude=_ORG_EXPLICIT),
                                         after.model_dump(mode="json", exclude=_ORG_EXPLICIT)))
