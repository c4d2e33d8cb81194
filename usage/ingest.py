"""From what the collector kept to the warehouse: per cluster, the spans of its workloads and the
ranges it watched are accounted month by month (`usage.accounting`) and the intervals written as
that month's partition (`usage.warehouse`). Clusters are independent, so they are accounted in
parallel processes (one per core); a cluster's months in one pass over its store.

A month is final once the collector's coverage of the cluster reaches its end: it is then accounted
once and kept, so later trees and a pruned store do not rewrite it. A month still open is
accounted again on every run (its last intervals fill in as the collector catches up).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from usage.accounting import Pool, account
from usage.collector_store import CollectorStore
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
    store = CollectorStore.of(job.state_dir, job.cluster)
    collected = collected_usage([store], now=job.now)
    coverage = collected.coverage.get(job.cluster, [])
    covered_until = max((end for _, end in coverage), default=None)
    warehouse = Warehouse(job.warehouse)
    months = job.months or _covered_months(coverage, job.now)
    accounted: list[str] = []
    kept: list[str] = []
    for month in months:
        start, end = month_window(month)
        if warehouse.is_final(job.cluster, month) and not job.refinalise:
            kept.append(month)
            continue
        accounts = account(collected.spans, job.pools, start=start, end=min(end, job.now), coverage=collected.coverage)
        final = covered_until is not None and covered_until >= end
        warehouse.write_month(job.cluster, month, accounts, final=final)
        accounted.append(month)
    return ClusterAccounted(job.cluster, tuple(accounted), tuple(kept), len(collected.spans))


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
    """Every month from the first covered instant to `now` (months with a gap are accounted too:
    their missing intervals are what the report must show)."""
    if not coverage:
        return ()
    first = min(start for start, _ in coverage)
    months: list[str] = []
    moment = first
    while moment < now:
        month = month_of(moment)
        months.append(month)
        moment = month_window(month)[1]
    return tuple(months)
