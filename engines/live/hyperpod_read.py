"""The I/O of the live HyperPod scan: read every governed cluster's task-governance objects with
list calls, many objects a page, and compare them with the tree (`engines.live.hyperpod`): one
scan unit per cluster (`engines.live.runner`).

Per cluster: ListComputeQuotas (its summaries carry each quota's config and target, so nothing is
described per quota) and ListClusterSchedulerConfigs, whose summaries carry no configuration at
all: the one config a cluster may have is described. Describe is otherwise called only for a
quota found changed or unmanaged, to say who last changed it (summaries do not carry
LastModifiedBy). Which keys a read returns comes from botocore's SageMaker model, not from a list
kept here.

A cluster that cannot be read makes the scan incomplete (the cluster is named), never "no drift".
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any, Literal

import botocore.session

from engines.hyperpod import driver
from engines.live.hyperpod import GovernedCluster, LiveObject, compare, governed_clusters
from engines.live.items import DriftItem, user_of
from engines.live.runner import CallCounter, Pruner, ScanContext, ScanUnit

PAGE_SIZE = driver.LIST_PAGE


def fields_read_by(kind: driver.Kind, read: Literal["list", "describe"]) -> frozenset[str]:
    """The request keys of `kind` that its List summaries (or its Describe response) return."""
    if read == "list":
        return _returned_members(kind.list_op, kind.list_key) & frozenset(kind.updatable)
    return _returned_members(kind.op("describe"), "") & frozenset(kind.updatable)


@functools.cache
def _returned_members(operation: str, list_key: str) -> frozenset[str]:
    """The members of an operation's output (of each entry of its `list_key` list, if given)."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    shape = model.operation_model("".join(p.capitalize() for p in operation.split("_"))).output_shape
    if list_key:
        shape = shape.members[list_key].member
    return frozenset(shape.members)


def _listed(client: driver.SageMakerClient, kind: driver.Kind, cluster_arn: str, calls: CallCounter) -> list[Any]:
    summaries: list[Any] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"ClusterArn": cluster_arn, "MaxResults": PAGE_SIZE}
        if token:
            kwargs["NextToken"] = token
        page = calls(client, kind.list_op, **kwargs)
        summaries += page.get(kind.list_key, [])
        token = page.get("NextToken")
        if not token:
            return summaries


def read_live(client: driver.SageMakerClient, kind: driver.Kind, cluster_arn: str,
              calls: CallCounter) -> list[LiveObject]:
    """The live objects of `kind` on the cluster (those being deleted left out), described only
    where the summaries carry no configuration."""
    summaries = [s for s in _listed(client, kind, cluster_arn, calls) if s.get("Status") not in driver.GONE]
    listed = fields_read_by(kind, "list")
    if listed:
        return [LiveObject.read(kind, s, listed) for s in summaries]
    described = fields_read_by(kind, "describe")
    return [LiveObject.read(kind, calls(client, kind.op("describe"), **{kind.id_key: s[kind.id_key]}), described)
            for s in summaries]


def scan_cluster(client: driver.SageMakerClient, cluster: GovernedCluster, calls: CallCounter) -> list[DriftItem]:
    quotas = read_live(client, driver.COMPUTE_QUOTA, cluster.arn, calls)
    configs = read_live(client, driver.SCHEDULER_CONFIG, cluster.arn, calls)
    items = compare(cluster, quotas=quotas, scheduler_configs=configs)
    live = {driver.address(driver.COMPUTE_QUOTA, o.name): o for o in quotas}
    return [_attributed(client, item, live[item.address], calls)
            if item.changed_by is None and item.address in live else item for item in items]


def _attributed(client: driver.SageMakerClient, item: DriftItem, live: LiveObject, calls: CallCounter) -> DriftItem:
    """The item with who last changed the object (Describe returns LastModifiedBy; summaries do not)."""
    found = calls(client, driver.COMPUTE_QUOTA.op("describe"), ComputeQuotaId=live.id)
    who = user_of(found.get("LastModifiedBy") or found.get("CreatedBy"))
    return item if who is None else replace(item, changed_by=who)


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit per governed task-governance cluster: its quotas and scheduler config."""
    return [cluster_unit(c) for c in governed_clusters(context.tree, context.specs)]


def cluster_unit(cluster: GovernedCluster) -> ScanUnit:
    return ScanUnit(service="sagemaker", account=cluster.account, region=cluster.region, stack=cluster.stack,
                    what=f"cluster {cluster.cluster} ({cluster.arn})",
                    read=lambda client, calls: scan_cluster(client, cluster, calls), covers=frozenset({cluster.stack}))


def _deleter(kind: driver.Kind) -> Pruner:
    def delete(client: Any, item: DriftItem, calls: CallCounter) -> None:
        calls(client, kind.op("delete"), **{kind.id_key: item.ref[kind.id_key]})
    return Pruner(service="sagemaker", delete=delete)


PRUNERS = {driver.resource_type(k): _deleter(k) for k in (driver.COMPUTE_QUOTA, driver.SCHEDULER_CONFIG)}
