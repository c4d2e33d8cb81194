"""One typed input view per stack: exactly what an org, cluster or project stack is declared
from, computed once from the tree, with the derived facts (a team's effective quota on a
cluster) computed once.

Components take only a view; the affected-stack fingerprint is a hash of the view; engines take
the stack's kind, subject, ARNs and owned names from it. A model a stack reads only part of is
*sliced*: the fields the stack does not read are reset to their defaults (None where there is
none), so a component cannot see what the fingerprint does not hash. That is the point: "a change
the components see but the fingerprint misses" cannot happen, and a stack whose inputs did not
change is not planned.

What each kind reads:
- org: the whole org; every project's cost centre (the tag policy lists them); every cluster's
  account, region and EKS cluster name (the Platform Administrator's access entries).
- cluster: the org without what only validation and the org stack read (trusted accounts, the
  Platform Administrator, persona ceilings); the cluster; per team with quota on it, that quota
  (as HyperPod applies it), its fair-share weight, preemption and cost tags.
- project: the same org slice; the project (without its members' Git-host handles); the clusters
  it has quota on; its workload classes.
No stack reads who approves on the Git host (`platform_admins_on_git_host`, `members_on_git_host`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from hypergov import naming
from hypergov.hyperpod_requests import compute_quota_request, scheduler_config_request
from hypergov.model import partitions
from hypergov.model.cluster import Cluster
from hypergov.model.org import Organization
from hypergov.model.project import Project, QuotaAmount, SharingStrategy
from hypergov.model.tree import GovernanceTree
from hypergov.model.workload import WorkloadClass

StackKind = Literal["org", "cluster", "project"]
M = TypeVar("M", bound=BaseModel)
Slice = Mapping[str, "bool | Slice"]  # field -> True (the whole value) or the slice of a nested model

# Who approves on the Git host (`hypergov codeowners`): no stack reads it, so a change to it replans none.
ORG_GIT_HOST: Slice = {"platform_admins_on_git_host": True}
PROJECT_GIT_HOST: Slice = {"members_on_git_host": True}
# Parts of org.yaml that only validation and the org stack read: a change to the Platform
# Administrator, to a persona's ceiling or to the trusted accounts replans no cluster or project.
ORG_ONLY: Slice = {**ORG_GIT_HOST, "trusted_external_accounts": True, "personas": {
    "PlatformAdministrator": True, "ProjectLead": {"ceiling": True}, "Engineer": {"ceiling": True},
    "Viewer": {"ceiling": True}}}
# The org component reads the Platform Administrator persona only (its role in every account); the
# others' policies and every ceiling are the projects' and validation's.
ORG_STACK_AWAY: Slice = {**ORG_GIT_HOST, "trusted_external_accounts": True, "personas": {
    "ProjectLead": True, "Engineer": True, "Viewer": True}}
# The cluster components read no persona at all (they declare the scheduler config, the quotas and,
# in plain-EKS mode, Kueue objects): an org-wide persona edit replans the projects, not the clusters.
CLUSTER_ONLY_AWAY: Slice = {**ORG_ONLY, "personas": True, "identity_center": True}
ORG_STACK_PROJECT: Slice = {"cost_centre": True}
ORG_STACK_CLUSTER: Slice = {"account": True, "region": True, "eks": {"cluster_name": True}}
CLUSTER_STACK_TEAM: Slice = {"quotas": True, "fair_share_weight": True, "preempt_own_lower_priority": True,
                             "cost_centre": True, "tags": True}


@functools.cache
def _resets(model: type[BaseModel]) -> dict[str, Callable[[], Any]]:
    """Per field, how to make the value a sliced-away field takes: its default (a fresh one from
    its factory), else None. Cached per class: pydantic's get_default inspects the factory's
    signature on every call, which dominated the cost of slicing a 1,000-project org."""
    resets: dict[str, Callable[[], Any]] = {}
    for name, info in model.model_fields.items():
        if info.default_factory is not None:
            resets[name] = info.default_factory  # type: ignore[assignment]  # no validated-data factories here
        else:
            resets[name] = functools.partial(lambda value: value, None if info.is_required() else info.default)
    return resets


def keep_only(model: M, keep: Slice) -> M:
    """`model` with only the `keep` fields; every other field at its default (None if it has none)."""
    values: dict[str, Any] = {}
    for name, reset in _resets(type(model)).items():
        spec = keep.get(name)
        if spec is True:
            values[name] = getattr(model, name)
        elif spec and isinstance(value := getattr(model, name), BaseModel):
            values[name] = keep_only(value, spec)
        else:
            values[name] = reset()
    return type(model).model_construct(_fields_set=set(), **values)


def without(model: M, drop: Slice) -> M:
    """`model` with the `drop` fields reset to their defaults (the inverse of `keep_only`)."""
    values: dict[str, Any] = {}
    for name, reset in _resets(type(model)).items():
        spec, value = drop.get(name), getattr(model, name)
        if spec is True:
            values[name] = reset()
        elif spec and isinstance(value, BaseModel):
            values[name] = without(value, spec)
        else:
            values[name] = value
    return type(model).model_construct(_fields_set=set(), **values)


@dataclass(frozen=True)
class EffectiveQuota:
    """One team's compute quota on one cluster as HyperPod applies it: the borrow limits
    (percentage, absolute) are the written ones (the percentage else HyperPod's default) and only
    exist with LendAndBorrow, accelerators come from the cluster's override or the built-in table.
    Everything that needs these facts reads them here."""

    team: str
    cluster: str
    name: str  # the ComputeQuota's name
    instances: Mapping[str, int]  # instance type -> guaranteed whole instances (sorted)
    accelerators_per_instance: Mapping[str, int]  # every guaranteed or borrowable type; 0 when unknown
    sharing: SharingStrategy
    borrow_limit_percent: int | None
    fair_share_weight: int
    preempt_team_tasks: Literal["LowerPriority", "Never"]
    resources: Mapping[str, QuotaAmount] = field(default_factory=dict)  # type -> finer-unit guarantee
    absolute_borrow_limits: Mapping[str, QuotaAmount] = field(default_factory=dict)  # only with LendAndBorrow

    @property
    def instance_types(self) -> list[str]:
        """Every guaranteed instance type (whole instances or finer units), sorted."""
        return sorted({*self.instances, *self.resources})

    def reachable_instances(self, instance_type: str) -> int:
        """The whole-instance guarantee plus what the team may borrow in instances (before the
        cluster's capacity caps it): an absolute limit in instances, else the percentage."""
        count = self.instances.get(instance_type, 0)
        absolute = self.absolute_borrow_limits.get(instance_type)
        if absolute is not None and absolute.instances is not None:
            return count + absolute.instances
        return count + count * (self.borrow_limit_percent or 0) // 100

    def gpus(self, instance_type: str) -> int:
        """Whole accelerators guaranteed on `instance_type` (MIG partitions, vCPU and memory: 0)."""
        if instance_type in self.instances:
            return self.instances[instance_type] * self.accelerators_per_instance[instance_type]
        amount = self.resources.get(instance_type)
        return amount.accelerators or 0 if amount is not None else 0

    def borrowable_gpus(self, instance_type: str) -> int:
        """Whole accelerators the team may borrow on `instance_type`: an absolute limit on the type
        applies regardless of the percentage (in instances: times accelerators per instance; in
        vCPU, memory or MIG partitions: no whole accelerator), else the percentage of the guarantee."""
        absolute = self.absolute_borrow_limits.get(instance_type)
        if absolute is None:
            return self.gpus(instance_type) * (self.borrow_limit_percent or 0) // 100
        if absolute.instances is not None:
            return absolute.instances * self.accelerators_per_instance.get(instance_type, 0)
        return absolute.accelerators or 0

    def reachable_gpus(self, instance_type: str) -> int:
        """The guaranteed plus the borrowable whole accelerators (before the cluster caps them);
        a guarantee in whole instances borrows whole instances."""
        if instance_type in self.instances and instance_type not in self.absolute_borrow_limits:
            return self.reachable_instances(instance_type) * self.accelerators_per_instance[instance_type]
        return self.gpus(instance_type) + self.borrowable_gpus(instance_type)

    @property
    def reachable_types(self) -> list[str]:
        """Every instance type the team may run on: guaranteed or borrowable."""
        return sorted({*self.instance_types, *self.absolute_borrow_limits})

    def gpu_equivalents(self, instance_type: str) -> float:
        """Guaranteed accelerators counting MIG partitions as the share of a GPU each takes."""
        amount = self.resources.get(instance_type)
        if amount is None or amount.partition is None:
            return float(self.gpus(instance_type))
        found = partitions.profile(instance_type, amount.partition.profile)
        return amount.partition.count * partitions.gpu_fraction(found) if found else 0.0

    @property
    def total_gpus(self) -> float:
        return sum(self.gpu_equivalents(t) for t in self.instance_types)

    def request(self, *, cluster_arn: str) -> dict[str, Any]:
        """The CreateComputeQuota request (without tags), in the API's own shape."""
        return compute_quota_request(self, cluster_arn=cluster_arn)


def effective_quota(team: str, project: Project, cluster_name: str, cluster: Cluster) -> EffectiveQuota:
    quota = project.quotas[cluster_name]
    # The team's strategy as written, whatever the cluster's IdleResourceSharing: that setting
    # only decides whether capacity nobody is guaranteed may be borrowed ("When enabled,
    # unallocated resources are automatically calculated and made available for entities to
    # borrow", SchedulerConfig in the SageMaker API reference); teams still lend and borrow idle
    # guarantees with it disabled.
    sharing = quota.sharing
    borrows = sharing == "LendAndBorrow"
    absolute = dict(sorted(quota.absolute_borrow_limits.items())) if borrows else {}
    types = sorted({*quota.instance_types(), *absolute})
    return EffectiveQuota(
        team=team, cluster=cluster_name, name=naming.compute_quota_name(team, cluster_name),
        instances=dict(sorted(quota.instances.items())),
        accelerators_per_instance={t: cluster.accelerators(t) or 0 for t in types},
        sharing=sharing,
        borrow_limit_percent=quota.effective_borrow_limit_percent() if borrows else None,
        fair_share_weight=project.fair_share_weight,
        preempt_team_tasks="LowerPriority" if project.preempt_own_lower_priority else "Never",
        resources=dict(sorted(quota.resources.items())), absolute_borrow_limits=absolute)


@dataclass(frozen=True)
class OrgView:
    org: Organization
    projects: Mapping[str, Project]  # sliced: ORG_STACK_PROJECT
    clusters: Mapping[str, Cluster]  # sliced: ORG_STACK_CLUSTER
    kind: StackKind = "org"

    @property
    def subject(self) -> str:
        return self.org.name


@dataclass(frozen=True)
class ClusterView:
    org: Organization  # without CLUSTER_ONLY_AWAY (no personas)
    name: str
    cluster: Cluster
    teams: Mapping[str, Project]  # sliced: CLUSTER_STACK_TEAM, quotas on this cluster only
    quotas: Mapping[str, EffectiveQuota]  # team -> its quota here
    kind: StackKind = "cluster"

    @property
    def subject(self) -> str:
        return self.name

    @property
    def hyperpod_arn(self) -> str | None:
        """The HyperPod cluster's ARN when task governance owns its quotas (else None)."""
        arn = self.cluster.hyperpod.arn
        return str(arn) if self.cluster.task_governance and arn else None

    @property
    def owned_quota_suffix(self) -> str:
        """Every compute quota hypergov names on this cluster ends so (`<team>-on-<cluster>`)."""
        return naming.compute_quota_name("", self.name)

    def scheduler_config_request(self, *, cluster_arn: str) -> dict[str, Any]:
        """The CreateClusterSchedulerConfig request (without tags) of this cluster's scheduler policy."""
        scheduler = self.cluster.scheduler
        return scheduler_config_request(
            name=naming.scheduler_config_name(self.name), cluster_arn=cluster_arn,
            priority_classes={pc.name: pc.weight for pc in scheduler.priority_classes},
            fair_share=scheduler.fair_share, idle_resource_sharing=scheduler.idle_resource_sharing,
            description=f"hypergov: scheduler policy of cluster {self.name}")


@dataclass(frozen=True)
class ProjectView:
    org: Organization  # without ORG_ONLY
    team: str
    project: Project
    clusters: Mapping[str, Cluster]  # the clusters it has quota on (and that exist)
    workloads: Mapping[str, WorkloadClass]  # class name -> workload class
    quotas: Mapping[str, EffectiveQuota]  # cluster -> its quota there
    kind: StackKind = "project"

    @property
    def subject(self) -> str:
        return self.team


def org_stack_project(project: Project) -> Project:
    """What the org stack reads of a project."""
    return keep_only(project, ORG_STACK_PROJECT)


def team_on_cluster(project: Project, cluster: str) -> Project:
    """What a cluster stack reads of a team with quota on it (its quota there only)."""
    return keep_only(project.model_copy(update={"quotas": {cluster: project.quotas[cluster]}}), CLUSTER_STACK_TEAM)


StackView = OrgView | ClusterView | ProjectView


def stack_view(tree: GovernanceTree, kind: StackKind, subject: str) -> StackView:
    """The view of one stack of a valid tree."""
    if tree.org is None:
        raise ValueError("a tree without an org has no stacks")
    org = tree.org.model
    if kind == "org":
        return OrgView(org=without(org, ORG_STACK_AWAY),
                       projects={t: org_stack_project(p.model) for t, p in sorted(tree.projects.items())},
                       clusters={c: keep_only(m.model, ORG_STACK_CLUSTER) for c, m in sorted(tree.clusters.items())})
    if kind == "cluster":
        cluster = tree.clusters[subject].model
        on_cluster = {t: p.model for t, p in sorted(tree.projects.items()) if subject in p.model.quotas}
        teams = {t: team_on_cluster(p, subject) for t, p in on_cluster.items()}
        return ClusterView(org=without(org, CLUSTER_ONLY_AWAY), name=subject, cluster=cluster, teams=teams,
                           quotas={t: effective_quota(t, p, subject, cluster) for t, p in on_cluster.items()})
    shared_org = without(org, ORG_ONLY)
    project = without(tree.projects[subject].model, PROJECT_GIT_HOST)
    clusters = {c: tree.clusters[c].model for c in sorted(project.quotas) if c in tree.clusters}
    workloads = {cls: wl.model for (team, cls), wl in sorted(tree.workloads.items()) if team == subject}
    return ProjectView(org=shared_org, team=subject, project=project, clusters=clusters, workloads=workloads,
                       quotas={c: effective_quota(subject, project, c, m) for c, m in clusters.items()})


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", warnings=False)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def fingerprint(view: StackView) -> str:
    """A hash of everything the stack is declared from (the whole view, nothing else)."""
    return hashlib.sha256(json.dumps(_plain(view), sort_keys=True, separators=(",", ":")).encode()).hexdigest()
