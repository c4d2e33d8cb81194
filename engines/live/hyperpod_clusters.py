"""Live drift of the HyperPod clusters the tree declares (`hyperpod.managed: true`), decided
without I/O: a declared cluster that does not run is missing; one that runs with other instance
groups (type or count per group) than the tree's is changed; one that is not InService says its
status and AWS's FailureMessage. The read is one DescribeCluster per cluster
(`cluster_driver.observe_cluster`)."""

from __future__ import annotations

from typing import Any, cast

from engines.hyperpod.cluster_driver import SETTLED, ClusterClient, LiveCluster, observe_cluster
from engines.hyperpod.cluster_executor import DeclaredCluster, declared_clusters
from engines.live.items import AttributeDrift, DriftItem
from engines.live.runner import CallCounter, ScanContext, ScanUnit
from hypergov import naming

CLUSTER_TYPE = "sagemaker:Cluster"


def cluster_drift(declared: DeclaredCluster, live: LiveCluster | None) -> list[DriftItem]:
    stack = naming.cluster_stack(declared.key)
    address = f"hyperpod:Cluster:{declared.name}"

    def item(kind: str, fix: str, attributes: tuple[AttributeDrift, ...] = ()) -> DriftItem:
        return DriftItem(kind="changed" if kind == "changed" else "missing", stack=stack, address=address,
                         type=CLUSTER_TYPE, account=declared.account, region=declared.region, fix=fix,
                         attributes=attributes, cluster=declared.key)
    if declared.decommission:
        return []  # being decommissioned: its plan says what is left
    if live is None:
        return [item("missing", f"hypergov plans CreateCluster {declared.name} (clusters/{declared.key}.yaml)")]
    attributes: list[AttributeDrift] = []
    if live.status != SETTLED:
        attributes.append(AttributeDrift("ClusterStatus", SETTLED, live.status + (
            f": {live.failure_message}" if live.failure_message else "")))
    wanted = {g["InstanceGroupName"]: g for g in declared.request["InstanceGroups"]}
    for name in sorted(set(wanted) | set(live.groups)):
        want, have = wanted.get(name), live.groups.get(name)
        if want is None or have is None:
            attributes.append(AttributeDrift(f"InstanceGroups.{name}", None if want is None else (
                f"{want['InstanceType']} x {want['InstanceCount']}"), None if have is None else (
                f"{have.instance_type} x {have.count}")))
            continue
        if have.instance_type != want["InstanceType"]:
            attributes.append(AttributeDrift(f"InstanceGroups.{name}.InstanceType", want["InstanceType"],
                                             have.instance_type))
        if have.count != want["InstanceCount"]:
            attributes.append(AttributeDrift(f"InstanceGroups.{name}.InstanceCount", want["InstanceCount"], have.count))
    if not attributes:
        return []
    return [item("changed", f"hypergov apply restores the groups of clusters/{declared.key}.yaml (UpdateCluster)",
                 tuple(attributes))]


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit per declared cluster: one DescribeCluster (and ListTags) in its account and region."""
    return [_unit(c) for c in declared_clusters(context.tree)]


class _Counted:
    """A SageMaker client whose every call goes through the scan's call counter."""

    def __init__(self, client: Any, calls: CallCounter) -> None:
        self._client, self._calls = client, calls

    def __getattr__(self, operation: str) -> Any:
        return lambda **kwargs: self._calls(self._client, operation, **kwargs)


def _unit(declared: DeclaredCluster) -> ScanUnit:
    def read(client: Any, calls: CallCounter) -> list[DriftItem]:
        return cluster_drift(declared, observe_cluster(cast(ClusterClient, _Counted(client, calls)), declared.name))
    return ScanUnit(service="sagemaker", account=declared.account, region=declared.region,
                    stack=naming.cluster_stack(declared.key), what=f"HyperPod cluster {declared.name}", read=read,
                    covers=frozenset({naming.cluster_stack(declared.key)}))
