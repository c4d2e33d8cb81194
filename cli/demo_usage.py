"""The demo's usage step: last month's jobs on the example org's clusters, and the usage report with
its chargeback. No kube-apiserver runs here, so what the collector would have kept comes from the
capacity simulator: the org's synthetic trace replayed under the tree's quotas, each admission it
made written as the Kueue Workload it would have been (`usage.replay`), into the collector's store
in its own format, with the collector's coverage of the month (trn-east's collector was down for
three hours and listed again: those hours are missing, not idle)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from capacity import SimulationSettings, simulate
from capacity.adapter import cluster_capacity, generate_for_tree
from capacity.synth import TraceShape
from hypergov.model.instance_specs import instance_spec
from hypergov.model.tree import GovernanceTree
from usage.collector_state import Checkpoint
from usage.collector_store import CollectorStore
from usage.coverage import CoveredRange
from usage.replay import replayed_jobs, write_replay
from usage.warehouse import month_of, month_window

JOBS, SEED = 4000, 7
GAP_CLUSTER, GAP_DAY, GAP_HOURS = "trn-east", 14, 3


def last_month(now: datetime) -> str:
    return month_of(int((now.replace(day=1, hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1))
                        .timestamp()))


def seed_last_month(tree: GovernanceTree, state_dir: Path, month: str) -> dict[str, int]:
    """The month's simulated Workloads into each cluster's collector store; the workloads per cluster."""
    start, end = month_window(month)
    jobs = generate_for_tree(tree, shape=TraceShape(jobs=JOBS, days=(end - start) / 86400), seed=SEED)
    written: dict[str, int] = {}
    for name in sorted(tree.clusters):
        capacity = cluster_capacity(tree, name)
        mine = [job for job in jobs if job.cluster == name]
        result = simulate(capacity, mine, SimulationSettings(record_attempts=True))
        store = CollectorStore.of(state_dir, name)
        cluster = tree.clusters[name].model
        vcpus = {str(itype): spec.vcpu // per for itype in capacity.capacity_gpus
                 if (spec := instance_spec(itype)) is not None and (per := cluster.accelerators(itype))}
        in_month = [a for a in result.attempts if a.start < end - start]  # admitted before the month ended
        written[name] = write_replay(store, replayed_jobs(mine, in_month), epoch=start,
                                     end=end - start, vcpus_per_accelerator=vcpus)
        store.save(Checkpoint(resource_version="1", coverage=_coverage(name, start, end)))
    return written


def _coverage(cluster: str, start: int, end: int) -> tuple[CoveredRange, ...]:
    first, last = _utc(start), _utc(end)
    if cluster != GAP_CLUSTER:
        return (CoveredRange(first, last, "list"),)
    down = first.replace(day=GAP_DAY, hour=3)
    return (CoveredRange(first, down, "list"), CoveredRange(down + timedelta(hours=GAP_HOURS), last, "list"))


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
