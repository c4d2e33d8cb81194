"""The clusters a tree declares (`hyperpod.managed: true`), planned and applied as one HyperPod
executor step: `declared_clusters` reads them out of the tree (pure), `ClusterExecutor.plan`
observes each live cluster and decides with `cluster_driver.plan_cluster`, and `cluster_plan`
shows the decisions as an engine `Plan` (one `hyperpod:Cluster:<name>` change per cluster, its
instance counts and GPUs per group, the live status and AWS's failure message), so plans, the
merge-request comment and the audit trail read them as they read every other change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components import arns
from components.tags import cost_tags
from engines.hyperpod import cluster_driver
from engines.hyperpod.cluster_driver import ClusterClient, ClusterPlan, LiveCluster, Waiting
from engines.outcomes import Failure, classify
from engines.plan import Action, ApplyResult, AttributeChange, Plan, ResourceChange, StackName
from hypergov import naming
from hypergov.hyperpod_requests import create_cluster_request
from hypergov.model.tree import GovernanceTree

CLUSTER_TYPE = "sagemaker:Cluster"
CLUSTERS_STACK = StackName("hyperpod-clusters")  # the declared clusters' plan, beside the stacks' plans
_ACTIONS = {"create": Action.CREATE, "adopt": Action.UPDATE, "scale": Action.UPDATE, "decommission": Action.DELETE,
            "none": Action.NOOP}


@dataclass(frozen=True)
class DeclaredCluster:
    """One managed cluster of the tree, as the driver needs it."""

    key: str  # the cluster file's name
    account: str  # account id
    region: str
    request: dict[str, Any]  # CreateCluster, without tags
    tags: dict[str, str]
    adopt: bool
    decommission: bool
    gpus: dict[str, int]  # GPUs per instance, per instance type of its groups

    @property
    def name(self) -> str:
        return str(self.request["ClusterName"])


def declared_clusters(tree: GovernanceTree) -> list[DeclaredCluster]:
    if tree.org is None:
        return []
    org = tree.org.model
    found = []
    for key, sourced in sorted(tree.clusters.items()):
        cluster = sourced.model
        if not cluster.hyperpod.managed:
            continue
        types = {g.instance_type for g in cluster.hyperpod.instance_groups or []}
        found.append(DeclaredCluster(
            key=key, account=arns.account_id(org, cluster.account), region=arns.cluster_region(org, cluster),
            request=create_cluster_request(cluster, eks_cluster_arn=arns.eks_cluster_arn(org, cluster)),
            tags=cost_tags(org, layer="cluster", cluster=(key, cluster)), adopt=cluster.hyperpod.adopt,
            decommission=cluster.hyperpod.decommission, gpus={t: cluster.accelerators(t) or 0 for t in types}))
    return found


ClientFor = Callable[[str, str], ClusterClient]  # (account, region) -> SageMaker client


@dataclass(frozen=True)
class PlannedCluster:
    declared: DeclaredCluster
    plan: ClusterPlan
    arn: str | None = None  # the live cluster's ARN when it was planned (None: not live)


@dataclass
class ClusterExecutor:
    client_for: ClientFor
    waiting: Waiting = field(default_factory=Waiting)
    progress: Callable[[str], None] = lambda line: None
    # (account, region) -> EKS client: a create is refused in the plan when its EKS cluster is
    # missing or in CONFIG_MAP mode (None: left to CreateCluster's own error at apply).
    eks_for: Callable[[str, str], Any] | None = None

    def plan(self, declared: Sequence[DeclaredCluster]) -> list[PlannedCluster]:
        planned = []
        for item in declared:
            observed = cluster_driver.observe_cluster(self.client_for(item.account, item.region), item.name)
            decided = cluster_driver.plan_cluster(desired=item.request, adopt=item.adopt,
                                                  decommission=item.decommission, observed=observed,
                                                  gpus=_gpus_of(item))
            if decided.action == "create" and self.eks_for is not None:
                orchestrator = str(item.request["Orchestrator"]["Eks"]["ClusterArn"])
                mode = cluster_driver.eks_authentication_mode(self.eks_for(item.account, item.region), orchestrator)
                decided = cluster_driver.orchestrator_refusal(decided, eks_cluster_arn=orchestrator, mode=mode)
            planned.append(PlannedCluster(item, decided, arn=observed.arn if observed else None))
        return planned

    def apply(self, planned: Sequence[PlannedCluster]) -> list[Applied]:
        """Carry out each decision; a failure (classified) is reported per cluster."""
        results: list[Applied] = []
        for item in planned:
            if item.plan.refusal is not None or item.plan.action == "none":
                continue
            client = self.client_for(item.declared.account, item.declared.region)
            try:
                live = cluster_driver.apply_cluster(client, item.plan, tags=item.declared.tags,
                                                    waiting=self.waiting, progress=self.progress)
                results.append((item, live, None))
            except Exception as exc:  # every failure is reported per cluster
                results.append((item, None, classify(exc)))
        return results


def _gpus_of(item: DeclaredCluster) -> cluster_driver.GpusPerInstance:
    return lambda instance_type: item.gpus.get(instance_type, 0)


def to_change(plan: ClusterPlan) -> ResourceChange:
    """The cluster's line in a plan: counts per changed group, the GPU change, the live status."""
    attributes = [AttributeChange(path=f"InstanceGroups.{g.name}.InstanceCount ({g.instance_type})",
                                  before=g.before, after=g.after) for g in plan.groups]
    if plan.groups:
        attributes.append(AttributeChange(path="GPUs", before=sum((g.before or 0) * g.gpus_per_instance
                                                                  for g in plan.groups),
                                          after=sum((g.after or 0) * g.gpus_per_instance for g in plan.groups)))
    note = plan.refusal
    if plan.live_status is not None:
        status = f"live status {plan.live_status}" + (f": {plan.failure_message}" if plan.failure_message else "")
        note = f"{note} ({status})" if note else (status if plan.live_status != "InService" else None)
    return ResourceChange(address=f"hyperpod:Cluster:{plan.name}", type=CLUSTER_TYPE, name=plan.name,
                          action=_ACTIONS[plan.action], executor="hyperpod", attributes=tuple(attributes),
                          note=note if plan.refusal else None)


def cluster_plan(planned: Sequence[PlannedCluster], *, source_commit: str | None = None) -> Plan:
    """The clusters' decisions as one engine plan (stack `hyperpod-clusters`)."""
    notes = tuple(f"{p.plan.name}: {p.plan.refusal}" for p in planned if p.plan.refusal)
    notes += tuple(f"{p.plan.name}: live status {p.plan.live_status}"
                   + (f" ({p.plan.failure_message})" if p.plan.failure_message else "")
                   for p in planned if p.plan.live_status not in (None, "InService"))
    notes += tuple(f"{p.plan.name}: {'would change' if p.plan.refusal else 'changes'} {', '.join(p.plan.changed)}"
                   for p in planned if p.plan.changed and p.plan.action != "create")
    notes += tuple(f"{p.plan.name}: {p.plan.gpu_delta:+d} GPUs" for p in planned if p.plan.gpu_delta)
    return Plan(stack=CLUSTERS_STACK, engine="hyperpod", changes=tuple(
        to_change(p.plan) for p in planned), source_commit=source_commit, notes=notes)


Applied = tuple[PlannedCluster, LiveCluster | None, Failure | None]


def apply_result(plan: Plan, results: Sequence[Applied]) -> ApplyResult:
    by_name = {c.name: c for c in plan.changes}
    applied = tuple(by_name[p.plan.name] for p, _, failure in results if failure is None)
    failed = tuple((by_name[p.plan.name], failure) for p, _, failure in results if failure is not None)
    return ApplyResult(stack=plan.stack, applied=applied, failed=failed)


def live_arns(planned: Sequence[PlannedCluster], applied: Sequence[Applied] = ()) -> dict[str, str]:
    """Cluster file name -> the ARN of its live cluster: as planned, or as the apply left it (a
    created cluster); a decommissioned one has none."""
    arns = {p.declared.key: p.arn for p in planned if p.arn is not None}
    arns.update({p.declared.key: live.arn for p, live, _ in applied if live is not None})
    for p, _, failure in applied:
        if failure is None and p.plan.action == "decommission":
            arns.pop(p.declared.key, None)
    return arns


def with_cluster_arns(tree: GovernanceTree, arns: Mapping[str, str]) -> GovernanceTree:
    """The tree as the stacks are declared from: each managed cluster that names no `hyperpod.arn`
    carries its live cluster's (pure). SageMaker generates the ARN's last part, so for a cluster
    hypergov creates it can only come from AWS; the tree's own ARN, when written, stays."""
    clusters = dict(tree.clusters)
    for key, sourced in tree.clusters.items():
        ref = sourced.model.hyperpod
        if ref.managed and ref.arn is None and key in arns:
            model = sourced.model.model_copy(update={"hyperpod": ref.model_copy(update={"arn": arns[key]})})
            clusters[key] = dataclasses.replace(sourced, model=model)
    return dataclasses.replace(tree, clusters=clusters)


def awaiting_cluster(tree: GovernanceTree) -> dict[str, str]:
    """Cluster stack -> why it cannot be planned yet: a managed task-governance cluster with no
    ARN (neither in the tree nor live) is still to be created, and its scheduler config and
    quotas bind to the ARN SageMaker will give it (`tree` as `with_cluster_arns` returns it)."""
    return {naming.cluster_stack(key): (f"planned once HyperPod cluster '{s.model.hyperpod.cluster_name}' is created: "
                                      "its scheduler config and compute quotas bind to the ARN SageMaker gives it")
            for key, s in sorted(tree.clusters.items())
            if s.model.hyperpod.managed and not s.model.hyperpod.decommission and s.model.task_governance
            and s.model.hyperpod.arn is None}
