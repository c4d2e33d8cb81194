"""From what the collector kept to the warehouse: per cluster, the spans of its workloads and the
ranges it watched are accounted month by month (`usage.accounting`) and the intervals written as
that month's partition (`usage.warehouse`). Clusters are independent, so they are accounted in
parallel processes (one per core); a cluster's months in one pass over its store.

A month is final once the collector's coverage of the cluster reaches its end: it is then accounted
once and kept, so later trees and a pruned store do not rewrite it. A month still open is
accounted again on every run (its last intervals fill in as the collector catches up).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from usage.accounting import Pool, account
from usage.collector_store import CollectorStore
from usage.coverage import accounted
from usage.spans import epoch_seconds
from usage.spans_from_store import collected_usage
from usage.warehouse import Warehouse, month_of, month_window


@dataclass(frozen=True)
class ClusterJob:
    """One cluster to account: its pools (from the tree) and where its store and the warehouse are."""

    cluster: str
    pools: tuple[Pool, ...]
    state_dir: Path
    warehouse: Path
    now: int
    months: tuple[str, ...] = ()  # empty: every month the collector covered, from its first range
    refinalise: bool = False  # account final months again (a corrected tree, say)


@dataclass(frozen=True)
class ClusterAccounted:
    cluster: str
    accounted: tuple[str, ...]  # months written
    kept_final: tuple[str, ...]  # final months left as they were
    spans: int


def account_cluster(job: ClusterJob) -> ClusterAccounted:
    """Account the job's months of one cluster into the warehouse."""
    with _collection_paused():
        return _account_cluster(job)


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a cluster is read and accounted: the work
    allocates millions of small acyclic objects (decoded Workloads, spans), which make the
    collector rescan everything alive again and again (measured: reading a 50,000-workload store
    took twice as long with it on); nothing made here forms a cycle, so nothing is kept longer."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _account_cluster(job: ClusterJob) -> ClusterAccounted:
    store = CollectorStore.of(job.state_dir, job.cluster)
    warehouse = Warehouse(job.warehouse)
    coverage = [(epoch_seconds(start), epoch_seconds(end)) for start, end in accounted(store.checkpoint().coverage)]
    covered_until = max((end for _, end in coverage), default=None)
    months = [month for month in (job.months or _covered_months(coverage, job.now))
              if job.refinalise or not warehouse.is_final(job.cluster, month)]
    kept = tuple(month for month in (job.months or _covered_months(coverage, job.now)) if month not in months)
    if not months:
        return ClusterAccounted(job.cluster, (), kept, 0)
    since = datetime.fromtimestamp(month_window(min(months))[0], UTC).strftime("%Y-%m-%d")
    collected = collected_usage([store], now=job.now, since_day=since)  # workloads retired before ran before
    for month in months:
        start, end = month_window(month)
        accounts = account(collected.spans, job.pools, start=start, end=min(end, job.now), coverage=collected.coverage)
        warehouse.write_month(job.cluster, month, accounts, final=covered_until is not None and covered_until >= end)
    return ClusterAccounted(job.cluster, tuple(months), kept, len(collected.spans))


def account_clusters(jobs: Sequence[ClusterJob], *, workers: int | None = None,
                     progress: Callable[[str], None] = lambda _: None) -> list[ClusterAccounted]:
    """Every job, in parallel processes when there is more than one cluster and core."""
    workers = min(len(jobs), workers or os.cpu_count() or 1)
    if workers <= 1:
        done = []
        for job in jobs:
            done.append(account_cluster(job))
            progress(f"{job.cluster}: accounted {', '.join(done[-1].accounted) or 'nothing new'}")
        return done
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(account_cluster, jobs))
    for result in results:
        progress(f"{result.cluster}: accounted {', '.join(result.accounted) or 'nothing new'}")
    return results


def _covered_months(coverage: Sequence[tuple[int, int]], now: int) -> tuple[str, ...]:
    """Every month from the first covered instant to the last (up to `now`): months with a gap
    are accounted too, their missing intervals are what the report must show; a month after the
    last is left to the collector's next run (or a report that asks for it)."""
    if not coverage:
        return ()
    first = min(start for start, _ in coverage)
    last = min(now, max(end for _, end in coverage))
    months: list[str] = []
    moment = first
    while moment < last:
        month = month_of(moment)
        months.append(month)
        moment = month_window(month)[1]
    return tuple(months)
