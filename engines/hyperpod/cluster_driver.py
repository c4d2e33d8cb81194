"""HyperPod clusters declared in the tree, through boto3: no Terraform provider has the resource
(pulumi-aws-native's `sagemaker.Cluster` declares the same request for `pulumi up`).

Decide, then act, as `engines.hyperpod.driver` does for quotas: `observe_cluster` reads the live
cluster, `plan_cluster` decides without I/O (create, adopt, scale, decommission, or a refusal the
user reads), and `apply_cluster` carries the decision out and waits for the status AWS documents
(`Creating` -> `InService`, `Updating` -> `InService`, `Deleting` -> gone) with a timeout,
reporting progress. A scale is an UpdateCluster naming only the groups that change.

Ownership: hypergov tags what it creates or adopts (`OWNER_TAG`). A live cluster of a declared
name without that tag is not touched until the tree says `adopt: true`; the adoption plan lists
exactly what would change.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from botocore.exceptions import ClientError

from engines.hyperpod import driver

ClusterAction = Literal["create", "adopt", "scale", "decommission", "none"]
OWNER_TAG = "hypergov:managed"  # value "true": hypergov created or adopted the cluster
SETTLED = "InService"
BUSY = frozenset({"Creating", "Updating", "Deleting", "SystemUpdating", "RollingBack"})


class ClusterClient(driver.SageMakerClient, Protocol):
    """The cluster operations besides the task-governance ones (boto3's SageMaker client fits)."""

    def describe_cluster(self, **kwargs: Any) -> dict[str, Any]: ...
    def create_cluster(self, **kwargs: Any) -> dict[str, Any]: ...
    def update_cluster(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_cluster(self, **kwargs: Any) -> dict[str, Any]: ...


@dataclass(frozen=True)
class LiveGroup:
    name: str
    instance_type: str
    count: int  # the target count (InstanceCount) the group was last given


@dataclass(frozen=True)
class LiveCluster:
    arn: str
    status: str
    failure_message: str | None
    groups: Mapping[str, LiveGroup]
    specs: Mapping[str, Mapping[str, Any]]  # group name -> its specification as DescribeCluster returns it
    settings: Mapping[str, Any]  # NodeRecovery, Orchestrator, ...
    tags: Mapping[str, str]

    @property
    def owned(self) -> bool:
        return self.tags.get(OWNER_TAG) == "true"


@dataclass(frozen=True)
class GroupChange:
    """One instance group's count before and after (None: the group does not exist then)."""

    name: str
    instance_type: str
    before: int | None
    after: int | None
    gpus_per_instance: int

    @property
    def gpu_delta(self) -> int:
        return ((self.after or 0) - (self.before or 0)) * self.gpus_per_instance


@dataclass(frozen=True)
class ClusterPlan:
    name: str
    action: ClusterAction
    request: Mapping[str, Any] = field(default_factory=dict)  # CreateCluster / UpdateCluster request
    groups: tuple[GroupChange, ...] = ()
    changed: tuple[str, ...] = ()  # dotted request paths that differ from the live cluster
    live_status: str | None = None
    failure_message: str | None = None
    refusal: str | None = None  # expected, for the user: nothing is done

    @property
    def gpu_delta(self) -> int:
        return sum(g.gpu_delta for g in self.groups)


def observe_cluster(client: ClusterClient, name: str) -> LiveCluster | None:
    try:
        found = client.describe_cluster(ClusterName=name)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("ResourceNotFound", "ValidationException"):
            return None
        raise
    # DescribeCluster names a group's count TargetCount (and its minimum MinCount); as request fields:
    specs = {g["InstanceGroupName"]: {**g, "InstanceCount": g.get("TargetCount", g.get("InstanceCount")),
                                      **({"MinInstanceCount": g["MinCount"]} if "MinCount" in g else {})}
             for g in found.get("InstanceGroups", [])}
    groups = {n: LiveGroup(n, str(g.get("InstanceType", "")), int(g.get("TargetCount", g.get("InstanceCount", 0))))
              for n, g in specs.items()}
    tags = client.list_tags(ResourceArn=found["ClusterArn"]).get("Tags", [])
    settings: dict[str, Any] = {k: found[k] for k in ("NodeRecovery", "Orchestrator") if k in found}
    return LiveCluster(arn=found["ClusterArn"], status=str(found["ClusterStatus"]),
                       failure_message=found.get("FailureMessage"), groups=groups, specs=specs, settings=settings,
                       tags={t["Key"]: t.get("Value", "") for t in tags})


GpusPerInstance = Callable[[str], int]
# EKS `accessConfig.authenticationMode` values that serve access entries (EKS API reference); HyperPod's
# CreateCluster refuses an EKS orchestrator in CONFIG_MAP mode.
ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")


def eks_authentication_mode(eks: Any, eks_cluster_arn: str) -> str | None:
    """The orchestrating EKS cluster's authentication mode; None when it does not exist."""
    try:
        found = eks.describe_cluster(name=eks_cluster_arn.rsplit("/", 1)[-1])["cluster"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return None
        raise
    return str((found.get("accessConfig") or {}).get("authenticationMode", "CONFIG_MAP"))


def orchestrator_refusal(plan: ClusterPlan, *, eks_cluster_arn: str, mode: str | None) -> ClusterPlan:
    """A create refused before anything is done when its EKS cluster is missing or cannot serve
    access entries (pure); any other plan as it is."""
    if plan.action != "create":
        return plan
    eks_name = eks_cluster_arn.rsplit("/", 1)[-1]
    if mode is None:
        why = f"its EKS cluster '{eks_name}' does not exist (create it first, or fix eks.cluster_name)"
    elif mode not in ACCESS_ENTRY_MODES:
        why = (f"its EKS cluster '{eks_name}' uses authentication mode {mode}; HyperPod needs access entries: "
               f"aws eks update-cluster-config --name {eks_name} "
               "--access-config authenticationMode=API_AND_CONFIG_MAP")
    else:
        return plan
    return dataclasses.replace(plan, action="none", request={}, refusal=f"HyperPod cluster '{plan.name}' cannot be "
                               f"created: {why}")


def plan_cluster(*, desired: Mapping[str, Any], adopt: bool, decommission: bool, observed: LiveCluster | None,
                 gpus: GpusPerInstance) -> ClusterPlan:
    """What turns `observed` into the CreateCluster request `desired` (pure)."""
    name = str(desired["ClusterName"])
    seen = observed.status if observed else None
    failure = observed.failure_message if observed else None
    if decommission:
        if observed is None:
            return ClusterPlan(name, "none")
        gone = tuple(GroupChange(g.name, g.instance_type, g.count, None, gpus(g.instance_type))
                     for g in sorted(observed.groups.values(), key=lambda g: g.name))
        return ClusterPlan(name, "decommission", {"ClusterName": name}, gone, live_status=seen, failure_message=failure)
    wanted = {g["InstanceGroupName"]: g for g in desired["InstanceGroups"]}
    if observed is None:
        new = tuple(GroupChange(n, g["InstanceType"], None, g["InstanceCount"], gpus(g["InstanceType"]))
                    for n, g in sorted(wanted.items()))
        return ClusterPlan(name, "create", desired, new, changed=tuple(sorted(desired)))
    retyped = sorted(n for n, g in wanted.items() if n in observed.groups
                     and observed.groups[n].instance_type != g["InstanceType"])
    if retyped:
        return ClusterPlan(name, "none", refusal=(
            f"the instance type of group(s) {', '.join(retyped)} cannot change (AWS: create a new instance "
            "group instead); give the new type a new group name"), live_status=seen, failure_message=failure)
    request, groups, changed = _update(name, desired, wanted, observed, gpus)
    if not observed.owned and not adopt:  # shown, not done: what adopting it would change
        return ClusterPlan(name, "none", {}, groups, changed, refusal=(
            f"HyperPod cluster '{name}' already exists and hypergov does not manage it: review what adopting "
            "it changes and set 'hyperpod.adopt: true' to take it over"), live_status=seen, failure_message=failure)
    if observed.status in BUSY or observed.status == "Failed":
        why = f": {observed.failure_message}" if observed.failure_message else ""
        return ClusterPlan(name, "none", {}, groups, changed, refusal=(
            f"HyperPod cluster '{name}' is {observed.status}{why}; plan again once it is InService"),
            live_status=seen, failure_message=failure)
    if adopt and not observed.owned:
        return ClusterPlan(name, "adopt", request, groups, changed, live_status=seen, failure_message=failure)
    action: ClusterAction = "scale" if len(request) > 1 else "none"
    return ClusterPlan(name, action, request if action == "scale" else {}, groups, changed,
                       live_status=seen, failure_message=failure)


def _update(name: str, desired: Mapping[str, Any], wanted: Mapping[str, Mapping[str, Any]], observed: LiveCluster,
            gpus: GpusPerInstance) -> tuple[dict[str, Any], tuple[GroupChange, ...], tuple[str, ...]]:
    """The UpdateCluster request naming only the groups that differ (whole specifications, as
    UpdateCluster takes them), the groups' count changes, and the dotted paths that differ."""
    differing = {n: driver.differences(g, observed.specs[n]) if n in observed.specs else [] for n, g in wanted.items()}
    changed_specs = {n: g for n, g in wanted.items() if n not in observed.specs or differing[n]}
    removed = sorted(set(observed.groups) - set(wanted))
    groups = tuple(
        [GroupChange(n, g["InstanceType"], observed.groups[n].count if n in observed.groups else None,
                     g["InstanceCount"], gpus(g["InstanceType"])) for n, g in sorted(changed_specs.items())]
        + [GroupChange(n, observed.groups[n].instance_type, observed.groups[n].count, None,
                       gpus(observed.groups[n].instance_type)) for n in removed])
    changed = [f"InstanceGroups.{n}.{p}" for n in sorted(changed_specs) for p in differing[n]]
    changed += [f"InstanceGroups.{n} (new)" for n in sorted(changed_specs) if n not in observed.specs]
    changed += [f"InstanceGroups.{n} (deleted)" for n in removed]
    request: dict[str, Any] = {"ClusterName": name}
    if changed_specs:
        request["InstanceGroups"] = [dict(changed_specs[n]) for n in sorted(changed_specs)]
    if removed:
        request["InstanceGroupsToDelete"] = removed
    if "NodeRecovery" in desired and desired["NodeRecovery"] != observed.settings.get("NodeRecovery"):
        request["NodeRecovery"] = desired["NodeRecovery"]
        changed.append("NodeRecovery")
    return request, groups, tuple(changed)


Progress = Callable[[str], None]


@dataclass(frozen=True)
class Waiting:
    """How long to wait for a status transition and how often to look."""

    timeout_s: float = 3600.0  # AWS: creating a cluster takes minutes to tens of minutes
    poll_s: float = 15.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


class ClusterTimeoutError(TimeoutError):
    """The cluster did not reach the status in time; it may still get there (a temporary failure)."""


class ClusterFailedError(RuntimeError):
    """The cluster reached `Failed`; the message is AWS's FailureMessage."""


def wait_for(client: ClusterClient, name: str, *, gone: bool, waiting: Waiting,
             progress: Progress) -> LiveCluster | None:
    """Poll until the cluster is InService (or gone, for a delete); report each status seen."""
    deadline = waiting.clock() + waiting.timeout_s
    last: str | None = None
    while True:
        live = observe_cluster(client, name)
        status = "gone" if live is None else live.status
        if status != last:
            progress(f"cluster {name}: {status}")
            last = status
        if (live is None) if gone else (live is not None and live.status == SETTLED):
            return live
        if live is not None and live.status == "Failed":
            raise ClusterFailedError(f"cluster {name} failed: {live.failure_message or 'no FailureMessage'}")
        if waiting.clock() >= deadline:
            raise ClusterTimeoutError(f"cluster {name} is still {status} after {waiting.timeout_s:.0f}s")
        waiting.sleep(waiting.poll_s)


def apply_cluster(client: ClusterClient, plan: ClusterPlan, *, tags: Mapping[str, str], waiting: Waiting,
                  progress: Progress) -> LiveCluster | None:
    """Carry out `plan`; returns the live cluster afterwards (None after a decommission)."""
    if plan.refusal is not None or plan.action == "none":
        return None
    owner = {**tags, OWNER_TAG: "true"}
    if plan.action == "create":
        client.create_cluster(**plan.request, Tags=[{"Key": k, "Value": v} for k, v in sorted(owner.items())])
        return wait_for(client, plan.name, gone=False, waiting=waiting, progress=progress)
    if plan.action == "decommission":
        _decommission(client, plan.name, waiting=waiting, progress=progress)
        return None
    live = observe_cluster(client, plan.name)
    assert live is not None
    if len(plan.request) > 1:
        client.update_cluster(**plan.request)
    if plan.action == "adopt":
        client.add_tags(ResourceArn=live.arn, Tags=[{"Key": k, "Value": v} for k, v in sorted(owner.items())])
    return wait_for(client, plan.name, gone=False, waiting=waiting, progress=progress)


def _decommission(client: ClusterClient, name: str, *, waiting: Waiting, progress: Progress) -> None:
    """The scheduler config, then the compute quotas, then the cluster (AWS refuses to delete a
    cluster that still has either)."""
    live = observe_cluster(client, name)
    if live is None:
        return
    for kind in (driver.SCHEDULER_CONFIG, driver.COMPUTE_QUOTA):
        for object_name, object_id in sorted(driver.live_ids(client, kind, cluster_arn=live.arn).items()):
            getattr(client, kind.op("delete"))(**{kind.id_key: object_id})
            progress(f"cluster {name}: deleted {kind.noun} {object_name}")
    client.delete_cluster(ClusterName=name)
    wait_for(client, name, gone=True, waiting=waiting, progress=progress)
