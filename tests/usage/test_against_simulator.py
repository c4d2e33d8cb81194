"""The usage accounting against the capacity simulator: two independent implementations of the
same quota semantics. A week of the example org's synthetic trace runs through the simulator
(its ledger integrates each team's own and borrowed GPU-seconds as it goes); the admission
attempts it made become Kueue Workloads in a collector's store (`usage.replay`), which are read,
accounted and stored in the warehouse like collected ones. Each team's own and borrowed GPU-hours
must be the simulator's, and so must the cluster's total."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from capacity import SimulationSettings, simulate
from capacity.adapter import cluster_capacity, generate_for_tree
from capacity.synth import TraceShape
from hypergov.model.instance_specs import instance_spec
from hypergov.validate import validate_dir
from usage.accounting import account
from usage.adapter import cluster_pools
from usage.collector_state import Checkpoint
from usage.collector_store import CollectorStore
from usage.coverage import CoveredRange
from usage.replay import replayed_jobs, write_replay
from usage.resources import ResourceKind
from usage.spans_from_store import collected_usage
from usage.trace import collected_trace
from usage.warehouse import Warehouse, month_of

CONFIG = Path(__file__).resolve().parents[2] / "config"
EPOCH = 1772323200  # 2026-03-01T00:00:00Z: trace second 0


@pytest.mark.parametrize("cluster", ["gpu-west", "trn-east"])
def test_every_teams_own_and_borrowed_hours_are_the_simulators(tmp_path: Path, cluster: str) -> None:
    tree = validate_dir(CONFIG).tree
    capacity = cluster_capacity(tree, cluster)
    jobs = [j for j in generate_for_tree(tree, shape=TraceShape(jobs=900, days=7), seed=11) if j.cluster == cluster]
    result = simulate(capacity, jobs, SimulationSettings(record_attempts=True))
    assert result.preemptions > 0 and any(t.gpu_hours_borrowed > 0 for t in result.teams)  # a week worth checking
    store = CollectorStore(tmp_path / "usage" / cluster, cluster)
    vcpus = {itype: spec.vcpu // accelerators for itype in capacity.capacity_gpus
             if (spec := instance_spec(itype)) and (accelerators := tree.clusters[cluster].model.accelerators(itype))}
    write_replay(store, replayed_jobs(jobs, result.attempts), epoch=EPOCH, end=result.end, vcpus_per_accelerator=vcpus)
    start, end = EPOCH + result.start, EPOCH + result.end
    store.save(Checkpoint(resource_version="1", coverage=(
        CoveredRange(_utc(start - 300), _utc(end + 300), "list"),)))  # watched the whole run: no interval missing
    collected = collected_usage([store], now=end)
    accounts = account(collected.spans, cluster_pools(tree, cluster), start=start, end=end, coverage=collected.coverage)

    accelerator_pools = [a for a in accounts if a.pool.kind is not ResourceKind.VCPU]
    for team in result.teams:
        own = sum(float(a.own[a.teams.index(team.team)].sum()) for a in accelerator_pools if team.team in a.teams)
        borrowed = sum(float(a.borrowed[a.teams.index(team.team)].sum()) for a in accelerator_pools
                       if team.team in a.teams)
        assert own == pytest.approx(team.gpu_hours_own, rel=1e-9, abs=1e-6), team.team
        assert borrowed == pytest.approx(team.gpu_hours_borrowed, rel=1e-9, abs=1e-6), team.team
    used = sum(float(a.used.sum()) for a in accelerator_pools)
    assert used == pytest.approx(result.used_gpu_hours, rel=1e-9)

    warehouse = Warehouse(tmp_path / "warehouse")
    warehouse.write_month(cluster, month_of(start), accounts, final=True)
    period = warehouse.period(start - start % 300, end)  # from the interval holding the start
    stored: dict[str, float] = {}
    for row in period.teams:
        if row.kind is not ResourceKind.VCPU:
            stored[row.team] = stored.get(row.team, 0.0) + row.own
    assert stored == pytest.approx({t.team: t.gpu_hours_own for t in result.teams if t.team in stored})


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def test_the_collected_trace_gives_back_the_jobs_that_ran(tmp_path: Path) -> None:
    """Each job the simulator ran once to its end comes back from the store as it was submitted:
    same submit time, team, instance type, GPUs, work and priority; a preempted one's work is its
    last attempt (what Kueue's objects show)."""
    tree = validate_dir(CONFIG).tree
    capacity = cluster_capacity(tree, "gpu-west")
    jobs = [j for j in generate_for_tree(tree, shape=TraceShape(jobs=300, days=2), seed=5) if j.cluster == "gpu-west"]
    result = simulate(capacity, jobs, SimulationSettings(record_attempts=True))
    store = CollectorStore(tmp_path / "usage" / "gpu-west", "gpu-west")
    replayed = replayed_jobs(jobs, result.attempts)
    write_replay(store, replayed, epoch=EPOCH, end=result.end + 1, vcpus_per_accelerator={})
    trace = collected_trace([store], since=EPOCH, until=EPOCH + result.end + 1)
    assert trace.skipped == {} and len(trace.jobs) == len(replayed)
    back = {job.id: job for job in trace.jobs}
    once = [r for r in replayed if len(r.attempts) == 1]
    assert len(once) > len(replayed) // 2
    for item in once:
        job = back[f"gpu-west-{item.job.id}".lower()]
        assert (job.submit, job.team, job.instance_type, job.gpus, job.duration, job.priority) == (
            item.job.submit, item.job.team, item.job.instance_type, item.job.gpus, item.job.duration,
            item.job.priority)
    for item in replayed:
        last = item.attempts[-1]
        assert back[f"gpu-west-{item.job.id}".lower()].duration == last.end - last.start
