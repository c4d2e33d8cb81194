"""Live drift of HyperPod task-governance objects, decided without I/O.

The desired objects are the requests the cluster stacks apply (`ClusterView`: the scheduler
config and one compute quota per team with quota on the cluster); the live objects are what
SageMaker's List/Describe calls returned. Each is compared the way the driver plans a change
(`engines.hyperpod.driver`): order-insensitive lists sorted, and only the keys the desired request
sets, since SageMaker fills in others (vCPU and memory beside an instance count). A key the read
does not return cannot be compared from it (ListComputeQuotas' summaries carry the config and
target but not the description), so `LiveObject.carries` says which keys the read had.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engines.hyperpod import driver
from engines.live.items import AttributeDrift, DriftItem, DriftKind, iso_time, user_of
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import ClusterView, stack_view
from stacks.spec import StackSpec

_NOT_COMPARED = ("Name", "Tags", "ClusterArn")  # identity (the list is filtered by cluster), tags apart


@dataclass(frozen=True)
class GovernedCluster:
    """What hypergov declares on one task-governance cluster, as SageMaker requests."""

    stack: str
    cluster: str
    arn: str
    scheduler_config: Mapping[str, Any]  # the CreateClusterSchedulerConfig request
    quotas: Mapping[str, Mapping[str, Any]]  # quota name -> its CreateComputeQuota request
    owned_quota_suffix: str  # every quota name hypergov gives on this cluster ends so

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]

    @property
    def account(self) -> str:
        return self.arn.split(":")[4]


def governed_cluster(stack: str, view: ClusterView) -> GovernedCluster | None:
    """The cluster's declared objects; None when hypergov owns none there (no task governance)."""
    arn = view.hyperpod_arn
    if arn is None:
        return None
    quotas = {q.name: q.request(cluster_arn=arn) for _, q in sorted(view.quotas.items())}
    return GovernedCluster(stack=stack, cluster=view.name, arn=arn,
                           scheduler_config=view.scheduler_config_request(cluster_arn=arn), quotas=quotas,
                           owned_quota_suffix=view.owned_quota_suffix)


def governed_clusters(tree: GovernanceTree, specs: Iterable[StackSpec]) -> list[GovernedCluster]:
    """The task-governance clusters of the cluster stacks among `specs`."""
    found = []
    for spec in specs:
        if spec.kind == "cluster":
            view = stack_view(tree, "cluster", spec.subject)
            assert isinstance(view, ClusterView)
            governed = governed_cluster(spec.name, view)
            if governed is not None:
                found.append(governed)
    return found


@dataclass(frozen=True)
class LiveObject:
    """One object as a List or Describe call returned it."""

    id: str
    name: str
    status: str
    fields: Mapping[str, Any]  # the request-shaped keys the read returned
    carries: frozenset[str]  # the request keys that read returns at all (the only ones it can compare)
    changed_by: str | None = None
    changed_at: str | None = None
    arn: str = ""

    @classmethod
    def read(cls, kind: driver.Kind, response: Mapping[str, Any], carries: frozenset[str]) -> LiveObject:
        """From a summary or Describe response; who changed it from LastModifiedBy (else CreatedBy)."""
        return cls(id=str(response[kind.id_key]), name=str(response["Name"]), status=str(response.get("Status", "")),
                   fields={k: response[k] for k in sorted(carries) if k in response}, carries=carries,
                   changed_by=user_of(response.get("LastModifiedBy") or response.get("CreatedBy")),
                   changed_at=iso_time(response.get("LastModifiedTime") or response.get("CreationTime")),
                   arn=str(response.get(kind.arn_key, "")))

    @property
    def gone(self) -> bool:
        return self.status in driver.GONE


def attribute_drift(kind: driver.Kind, desired: Mapping[str, Any], live: LiveObject) -> tuple[AttributeDrift, ...]:
    """The paths where `live` does not carry what `desired` sets, with both values."""
    keys = [k for k in desired if k in live.carries and k not in _NOT_COMPARED]
    want = driver.normalize(kind, {k: desired[k] for k in keys})
    have = driver.normalize(kind, {k: live.fields.get(k) for k in keys})
    return tuple(AttributeDrift(path=p, expected=driver.value_at(want, p), live=driver.value_at(have, p))
                 for p in driver.differences(want, have))


def compare(cluster: GovernedCluster, *, quotas: Sequence[LiveObject],
            scheduler_configs: Sequence[LiveObject]) -> list[DriftItem]:
    """Every changed, missing and unmanaged task-governance object of one cluster."""
    items = _compare_kind(cluster, driver.SCHEDULER_CONFIG,
                          {str(cluster.scheduler_config["Name"]): cluster.scheduler_config}, scheduler_configs)
    items += _compare_kind(cluster, driver.COMPUTE_QUOTA, cluster.quotas, quotas)
    return items


def _compare_kind(cluster: GovernedCluster, kind: driver.Kind, desired: Mapping[str, Mapping[str, Any]],
                  live: Sequence[LiveObject]) -> list[DriftItem]:
    present = {o.name: o for o in live if not o.gone}
    items: list[DriftItem] = []
    for name, request in sorted(desired.items()):
        found = present.get(name)
        if found is None:
            items.append(_item(cluster, kind, name, "missing", f"hypergov apply --stack {cluster.stack} creates it"))
        elif changed := attribute_drift(kind, request, found):
            items.append(_item(cluster, kind, name, "changed", f"hypergov apply --stack {cluster.stack} restores it",
                               attributes=changed, live=found))
    for name, found in sorted(present.items()):
        if name not in desired:
            attributes = tuple(AttributeDrift(k, None, v) for k, v in sorted(found.fields.items()))
            items.append(_item(cluster, kind, name, "unmanaged", _unmanaged_fix(cluster, kind, found),
                               attributes=attributes, live=found))
    return items


def _unmanaged_fix(cluster: GovernedCluster, kind: driver.Kind, found: LiveObject) -> str:
    if kind is driver.SCHEDULER_CONFIG:  # SageMaker allows one per cluster: hypergov's cannot exist beside it
        return (f"delete it: hypergov declares this cluster's scheduler config as "
                f"{cluster.scheduler_config['Name']} (hypergov apply --stack {cluster.stack} then creates it)")
    team = driver.value_at(found.fields, "ComputeQuotaTarget.TeamName")
    declared = [n for n, r in cluster.quotas.items() if driver.value_at(r, "ComputeQuotaTarget.TeamName") == team]
    if declared:  # one quota per team and cluster: hypergov's cannot exist beside it
        return f"delete it: the tree declares team {team}'s quota on {cluster.cluster} as {declared[0]}"
    if found.name.endswith(cluster.owned_quota_suffix):
        return (f"hypergov apply --stack {cluster.stack} deletes it (named as hypergov names quotas; "
                f"no project declares team {team} on {cluster.cluster})")
    return f"delete it, or give team {team} quota on {cluster.cluster} in the tree"


def _item(cluster: GovernedCluster, kind: driver.Kind, name: str, drift: DriftKind, fix: str, *,
          attributes: tuple[AttributeDrift, ...] = (), live: LiveObject | None = None) -> DriftItem:
    return DriftItem(kind=drift, stack=cluster.stack, address=driver.address(kind, name),
                     type=driver.resource_type(kind), account=cluster.account, region=cluster.region, fix=fix,
                     attributes=attributes, changed_by=live.changed_by if live else None,
                     changed_at=live.changed_at if live else None, cluster=cluster.cluster,
                     ref={kind.id_key: live.id} if live else {})
