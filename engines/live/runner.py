"""How a live scan reads: units of work (one service, one account and region, one read), run side
by side with bounded concurrency per service, every API call counted, every failure classified.

Each service's scan module (`engines.live.hyperpod_read`, `.iam`, `.eks`, ...) turns the scan's
context (the tree, every stack's desired objects) into `ScanUnit`s; `run_units` runs them with
one client per service, account and region. The SDK retries throttling and 5xx with its own
backoff (`aws.max_retries`, standard mode: exponential with jitter); what still fails makes the
scan incomplete, naming what could not be read, and is never "no drift".
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engines.desired import DesiredKubeObject, DesiredLookup, DesiredObject
from engines.kube import KubeApi
from engines.live.items import DriftItem, LiveScan, ScanFailure
from engines.outcomes import Failure, guarded
from hypergov.gc_tuning import bulk_work
from hypergov.model.tree import GovernanceTree
from stacks.spec import StackSpec

DEFAULT_CONCURRENCY = 8  # units of one service in flight at once
ServiceClientFor = Callable[[str, str | None, str], Any]  # (service, account or None: the caller's, region) -> client


class CallCounter:
    """Calls a client operation and counts it, per service (thread-safe: units run side by side).
    The SDK's own retries of one call are not counted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_service: Counter[str] = Counter()

    @property
    def count(self) -> int:
        return sum(self.by_service.values())

    def add(self, service: str, n: int = 1) -> None:
        with self._lock:
            self.by_service[service] += n

    def __call__(self, client: Any, operation: str, **kwargs: Any) -> dict[str, Any]:
        self.add(_service_of(client))
        result: dict[str, Any] = getattr(client, operation)(**kwargs)
        return result

    def pages(self, client: Any, operation: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every page of a paginated operation (botocore's paginator: it knows each operation's
        token names), one counted call per page."""
        for page in client.get_paginator(operation).paginate(**kwargs):
            self.add(_service_of(client))
            yield page


def _service_of(client: Any) -> str:
    meta = getattr(client, "meta", None)
    return str(meta.service_model.service_name) if meta is not None else "unknown"


@dataclass(frozen=True)
class ScanContext:
    """What every service's scan starts from: the tree compared with, all its stacks and their
    desired objects (all, whatever the filters: "declared nowhere" needs every stack's)."""

    tree: GovernanceTree
    specs: tuple[StackSpec, ...]
    desired: tuple[DesiredObject, ...]
    caller_account: str | None = None  # the account the ambient credentials act in (the management account)
    kube: tuple[DesiredKubeObject, ...] = ()  # every stack's Kubernetes objects
    # cluster -> its Kubernetes API, for the clusters with a kubeconfig (`kubernetes.kube_apis_of`)
    kube_apis: Mapping[str, Callable[[], KubeApi]] = field(default_factory=dict)
    lookups: tuple[DesiredLookup, ...] = ()  # the reads the desired objects' placeholders come from

    def account_of(self, obj: DesiredObject) -> str | None:
        return obj.account or self.caller_account


@dataclass(frozen=True)
class ScanUnit:
    service: str  # the boto3 service name of the client `read` gets
    account: str | None  # None: the caller's own account
    region: str
    stack: str  # the stack a failure of this unit leaves unread
    what: str  # what it reads, for the failure line: "IAM of account 111122223333"
    read: Callable[[Any, CallCounter], Sequence[DriftItem]]  # (client, calls) -> items
    covers: frozenset[str] | None = None  # the stacks whose items it can report (None: any)
    client: Callable[[], Any] | None = None  # its own client (a Kubernetes API), instead of a boto3 one


@dataclass(frozen=True)
class Pruner:
    """How an unmanaged item of one type is deleted (`hypergov drift --prune-unmanaged`): with a
    client of `service` in the item's account and region; the item's `ref` names the object."""

    service: str
    delete: Callable[[Any, DriftItem, CallCounter], None]
    # The client is the Kubernetes API of the item's cluster (`DriftItem.cluster`), not a boto3 client.
    per_cluster: bool = False


def pruning_client(pruner: Pruner, item: DriftItem, client_for: ServiceClientFor,
                   kube_apis: Mapping[str, Callable[[], KubeApi]]) -> Any:
    """The client `pruner.delete` gets for `item`: its cluster's Kubernetes API, or a client of the
    pruner's service in the item's account and region."""
    if not pruner.per_cluster:
        return client_for(pruner.service, item.account, item.region)
    if item.cluster is None or item.cluster not in kube_apis:
        raise LookupError(f"no kubeconfig for cluster {item.cluster}: cannot delete {item.address}")
    return kube_apis[item.cluster]()


def run_units(units: Sequence[ScanUnit], client_for: ServiceClientFor, *, stacks: Sequence[str],
              concurrency: int = DEFAULT_CONCURRENCY, calls: CallCounter | None = None) -> LiveScan:
    """Every unit run, at most `concurrency` of one service at a time; a unit that fails is a
    `ScanFailure` and the others are still reported."""
    scanned_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    calls = calls or CallCounter()
    client_of = one_client_per_place(client_for)
    gates: dict[str, threading.Semaphore] = {s: threading.Semaphore(max(1, concurrency))
                                             for s in {u.service for u in units}}

    def work(unit: ScanUnit) -> Sequence[DriftItem]:
        with gates[unit.service]:
            client = unit.client() if unit.client else client_of(unit.service, unit.account, unit.region)
            return unit.read(client, calls)

    workers = max(1, min(len(units), concurrency * max(1, len(gates))))
    with bulk_work(), ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(lambda u: (u, guarded(work, u)), units))
    items: list[DriftItem] = []
    failures: list[ScanFailure] = []
    for unit, outcome in outcomes:
        if isinstance(outcome, Failure):
            failures.append(ScanFailure(unit.stack, unit.what, outcome))
        else:
            items += outcome
    return LiveScan(items=tuple(sorted(items, key=lambda i: (i.stack, i.address))), failures=tuple(failures),
                    api_calls=calls.count, seconds=round(time.monotonic() - started, 3), scanned_at=scanned_at,
                    stacks=tuple(sorted(stacks)), calls_by_service=dict(sorted(calls.by_service.items())))


def one_client_per_place(client_for: ServiceClientFor) -> ServiceClientFor:
    made: dict[tuple[str, str | None, str], Any] = {}
    lock = threading.Lock()

    def client(service: str, account: str | None, region: str) -> Any:
        with lock:  # made once per service, account and region (assuming a role is an STS call)
            key = (service, account, region)
            if key not in made:
                made[key] = client_for(service, account, region)
            return made[key]

    return client


def by_place(objects: Sequence[DesiredObject], context: ScanContext) -> Mapping[tuple[str | None, str],
                                                                                 list[DesiredObject]]:
    """Desired objects grouped by the account and region they live in."""
    grouped: dict[tuple[str | None, str], list[DesiredObject]] = {}
    for obj in objects:
        grouped.setdefault((context.account_of(obj), obj.region), []).append(obj)
    return grouped
