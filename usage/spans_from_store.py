"""One cluster's collected usage as the accounting's input: the spans of every kept workload (the
attempts its earlier bodies showed, closed, and the attempt its latest body shows; one still
running ends at `now`) and the ranges whose usage is complete, in the shape `accounting.account`
takes. Reads the store; decides nothing the pure modules do not."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from usage.collector_state import ClosedAttempt
from usage.collector_store import CollectorStore
from usage.coverage import accounted
from usage.spans import Span, epoch_seconds
from usage.workloads import NotATeamWorkload, parse_workload


@dataclass(frozen=True)
class CollectedUsage:
    """`spans` of every team's workload on the clusters read; `coverage` per cluster, the epoch-second
    ranges whose usage is complete (`usage.coverage.accounted`)."""

    spans: list[Span]
    coverage: dict[str, list[tuple[int, int]]]


def collected_usage(stores: Iterable[CollectorStore], *, now: int, since_day: str | None = None) -> CollectedUsage:
    """The spans and coverage of each store's cluster. A Workload the accounting cannot read raises
    `WorkloadError` naming it; one outside every team's namespace and queue is not counted.
    `since_day` (YYYY-MM-DD): leave out workloads retired before it (they ran before it)."""
    spans: list[Span] = []
    coverage: dict[str, list[tuple[int, int]]] = {}
    for store in stores:
        spans.extend(cluster_spans(store, now=now, since_day=since_day))
        coverage[store.cluster] = [(epoch_seconds(start), epoch_seconds(end))
                                   for start, end in accounted(store.checkpoint().coverage)]
    return CollectedUsage(spans=spans, coverage=coverage)


def cluster_spans(store: CollectorStore, *, now: int, since_day: str | None = None) -> list[Span]:
    """Every attempt of every workload of the store's cluster, as spans: the retired workloads
    (their recorded attempts and the last body's) and the live ones not retired. An attempt is
    known by its start: the latest body's attempt is left out when it was recorded closed already
    (a body replayed after the attempt it showed was closed)."""
    spans: list[Span] = []
    retired = store.retired(since_day)
    bodies: Mapping[str, Mapping[str, Any]] | None = None
    for record in retired.values():
        read = record.spans(store.cluster)  # its last attempt as read when it was retired
        if read is None:  # read under other rules (or unreadable then): from its last body, now
            bodies = store.retired_bodies(since_day) if bodies is None else bodies
            read = _attempt_spans(store.cluster, bodies.get(record.uid, {}), list(record.attempts), now)
        spans.extend(read)
    with_attempts = store.uids_with_attempts()
    for workload in store.live_workloads():
        if workload.uid in retired:
            continue  # a deletion replayed after a crash: the retired record is the workload's
        closed = store.attempts(workload.uid) if workload.uid in with_attempts else []
        spans.extend(_attempt_spans(store.cluster, workload.body, closed, now))
    return spans


def _attempt_spans(cluster: str, body: Mapping[str, Any], closed: list[ClosedAttempt], now: int) -> list[Span]:
    spans = [span for attempt in closed for span in attempt.spans(cluster)]
    try:
        usage = parse_workload(body, cluster=cluster)
    except NotATeamWorkload:
        return spans
    if usage.attempt is not None and all(a.start != usage.attempt.start for a in closed):
        spans.extend(usage.spans(now=now))
    return spans
