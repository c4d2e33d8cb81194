"""One cluster's collected usage as the accounting's input: the spans of every kept workload (the
attempts its earlier bodies showed, closed, and the attempt its latest body shows; one still
running ends at `now`) and the ranges whose usage is complete, in the shape `accounting.account`
takes. Reads the store; decides nothing the pure modules do not."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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


def collected_usage(stores: Iterable[CollectorStore], *, now: int) -> CollectedUsage:
    """The spans and coverage of each store's cluster. A Workload the accounting cannot read raises
    `WorkloadError` naming it; one outside every team's namespace and queue is not counted."""
    spans: list[Span] = []
    coverage: dict[str, list[tuple[int, int]]] = {}
    for store in stores:
        spans.extend(cluster_spans(store, now=now))
        coverage[store.cluster] = [(epoch_seconds(start), epoch_seconds(end))
                                   for start, end in accounted(store.checkpoint().coverage)]
    return CollectedUsage(spans=spans, coverage=coverage)


def cluster_spans(store: CollectorStore, *, now: int) -> list[Span]:
    """Every attempt of every kept workload of the store's cluster, as spans. An attempt is known by
    its start: the latest body's attempt is left out when it was recorded closed already (a body
    replayed after the attempt it showed was closed)."""
    spans: list[Span] = []
    with_attempts = store.uids_with_attempts()
    for workload in store.workloads():
        closed = store.attempts(workload.uid) if workload.uid in with_attempts else []
        for attempt in closed:
            spans.extend(attempt.spans(store.cluster))
        try:
            usage = parse_workload(workload.body, cluster=store.cluster)
        except NotATeamWorkload:
            continue
        if usage.attempt is not None and all(a.start != usage.attempt.start for a in closed):
            spans.extend(usage.spans(now=now))
    return spans
