"""The I/O of the live HyperPod scan: read every governed cluster's task-governance objects with
list calls, many objects a page, and compare them with the tree (`engines.live.hyperpod`).

Per cluster: ListComputeQuotas (its summaries carry each quota's config and target, so nothing is
described per quota) and ListClusterSchedulerConfigs, whose summaries carry no configuration at
all: the one config a cluster may have is described. Describe is otherwise called only for a
quota found changed or unmanaged, to say who last changed it (summaries do not carry
LastModifiedBy). Which keys a read returns comes from botocore's SageMaker model, not from a list
kept here.

Clusters are read side by side, at most `concurrency` at a time, with one client per account and
region. The SDK retries throttling and 5xx with its backoff (`aws.max_retries`); what still fails
is classified and makes the scan incomplete (the cluster is named), never "no drift". Every
SageMaker operation the scan calls is counted (the SDK's own retries of one call are not).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

import botocore.session

from engines.aws_clients import AwsClients
from engines.hyperpod import driver
from engines.live.hyperpod import GovernedCluster, LiveObject, compare, governed_clusters
from engines.live.items import DriftItem, LiveScan, ScanFailure, user_of
from engines.outcomes import Failure, guarded
from engines.settings import AwsSettings
from hypergov.model.tree import GovernanceTree
from stacks.spec import StackSpec

ClientFor = Callable[[str, str], driver.SageMakerClient]  # (account, region) -> SageMaker client
DEFAULT_CONCURRENCY = 8
PAGE_SIZE = 100  # the most ListComputeQuotas and ListClusterSchedulerConfigs return a page (MaxResults)


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


class CallCounter:
    """Calls a client operation and counts it (thread-safe: clusters are read side by side)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def __call__(self, client: driver.SageMakerClient, operation: str, **kwargs: Any) -> dict[str, Any]:
        with self._lock:
            self.count += 1
        result: dict[str, Any] = getattr(client, operation)(**kwargs)
        return result


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


def scan_hyperpod(governed: Sequence[GovernedCluster], client_for: ClientFor, *,
                  concurrency: int = DEFAULT_CONCURRENCY) -> LiveScan:
    """Every governed cluster's drift; a cluster that could not be read is a failure, not a clean result."""
    scanned_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    calls = CallCounter()
    client_of = _one_client_per_place(client_for)

    def work(cluster: GovernedCluster) -> list[DriftItem]:
        return scan_cluster(client_of(cluster.account, cluster.region), cluster, calls)

    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(governed) or 1))) as pool:
        outcomes = list(pool.map(lambda c: (c, guarded(work, c)), governed))
    items: list[DriftItem] = []
    failures: list[ScanFailure] = []
    for cluster, outcome in outcomes:
        if isinstance(outcome, Failure):
            failures.append(ScanFailure(cluster.stack, f"cluster {cluster.cluster} ({cluster.arn})", outcome))
        else:
            items += outcome
    return LiveScan(items=tuple(sorted(items, key=lambda i: (i.stack, i.address))), failures=tuple(failures),
                    api_calls=calls.count, seconds=round(time.monotonic() - started, 3), scanned_at=scanned_at,
                    stacks=tuple(sorted({c.stack for c in governed})))


def _one_client_per_place(client_for: ClientFor) -> ClientFor:
    made: dict[tuple[str, str], driver.SageMakerClient] = {}
    lock = threading.Lock()

    def client(account: str, region: str) -> driver.SageMakerClient:
        with lock:  # made once per account and region (assuming a role is an STS call)
            if (account, region) not in made:
                made[(account, region)] = client_for(account, region)
            return made[(account, region)]

    return client


def scan_tree(settings: AwsSettings, tree: GovernanceTree, specs: Iterable[StackSpec], *,
              concurrency: int = DEFAULT_CONCURRENCY) -> LiveScan:
    """The live scan of the task-governance clusters of the cluster stacks among `specs`, with
    clients as the settings say (the embedded endpoint or AWS; a role assumed in member accounts)."""
    governed = governed_clusters(tree, specs)
    clients = AwsClients(settings=settings, partition=tree.org.model.partition if tree.org else "aws")
    if governed:
        clients.require_credentials()
    return scan_hyperpod(governed, lambda account, region: clients.client("sagemaker", region=region,
                                                                            account=account),
                         concurrency=concurrency)
