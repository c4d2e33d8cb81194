"""The indexed engine (capacity/queue_index.py, the ledger's share ranking, the bounds and lazy
targets of fair-share victim selection) decides exactly what the plain scanning engine decides:
same admissions, preemptions, waits and GPU-hours, on random contended clusters and on a
benchmark-shaped trace. The reference is tests/capacity/reference_engine.py (the simulator as it
was before the indexes, issue 15)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_engine import reference_simulate

from benchmarks.bench_capacity import cluster as bench_cluster
from benchmarks.bench_capacity import trace as bench_trace
from capacity import ClusterCapacity, Job, SimulationSettings, simulate
from capacity.spec import InstanceTypeName, JobId, PriorityClass, TeamName, TeamQuota

TYPES = (InstanceTypeName("p5"), InstanceTypeName("g5"))
PRIORITIES = (PriorityClass("high", 100), PriorityClass("mid", 50), PriorityClass("low", 10))


@st.composite
def contended(draw: st.DrawFn) -> tuple[ClusterCapacity, list[Job], SimulationSettings]:
    """Few GPUs, many teams that borrow, many jobs: queues build up and preemption is frequent."""
    types = TYPES[:draw(st.integers(1, 2))]
    capacity = {t: draw(st.integers(4, 32)) for t in types}
    left = dict(capacity)
    teams = []
    for n in range(draw(st.integers(2, 6))):
        guaranteed = {}
        for t in types:
            guaranteed[t] = draw(st.integers(0, left[t]))
            left[t] -= guaranteed[t]
        teams.append(TeamQuota(
            name=TeamName(f"team{n}"), guaranteed_gpus=guaranteed,
            sharing=draw(st.sampled_from(["Lend", "DontLend", "LendAndBorrow", "LendAndBorrow"])),
            borrow_limit_percent=draw(st.sampled_from([None, 50, 100, 300])),
            fair_share_weight=draw(st.integers(0, 4)), preempt_own_lower_priority=draw(st.booleans()),
            absolute_borrow_gpus={t: draw(st.integers(0, 16)) for t in types if draw(st.booleans())}))
    cap = ClusterCapacity(name="ref", capacity_gpus=capacity, teams=tuple(teams), priority_classes=PRIORITIES,
                          fair_share=draw(st.booleans()), idle_resource_sharing=draw(st.booleans()))
    jobs = [Job(id=JobId(f"j{n}"), submit=draw(st.integers(0, 600)),
                team=TeamName(f"team{draw(st.integers(0, len(teams) - 1))}"),
                instance_type=draw(st.sampled_from(types)), gpus=draw(st.integers(1, 12)),
                duration=draw(st.integers(1, 400)), priority=draw(st.sampled_from(["high", "mid", "low"])))
            for n in range(draw(st.integers(0, 60)))]
    run = SimulationSettings(progress=draw(st.sampled_from(["restart", "checkpoint"])),
                             checkpoint_interval=draw(st.integers(1, 200)))
    return cap, jobs, run


@settings(max_examples=300, deadline=None)
@given(contended())
def test_indexed_engine_decides_as_the_scanning_one(scenario: tuple[ClusterCapacity, list[Job],
                                                                    SimulationSettings]) -> None:
    cap, jobs, run = scenario
    fast, plain = simulate(cap, jobs, run), reference_simulate(cap, jobs, run)
    assert fast.first_admission == plain.first_admission
    assert fast.as_dict() == plain.as_dict()


@pytest.mark.parametrize(("teams", "jobs", "days", "fair_share"), [
    pytest.param(50, 3000, 0.3, True, id="benchmark-shape-fair-share"),
    pytest.param(50, 3000, 0.3, False, id="benchmark-shape-first-come-first-serve"),
    pytest.param(200, 3000, 0.3, True, id="many-teams"),
])
def test_benchmark_shaped_trace_gives_the_same_result(teams: int, jobs: int, days: float, fair_share: bool) -> None:
    cap = bench_cluster(teams)
    cap = ClusterCapacity(name=cap.name, capacity_gpus=cap.capacity_gpus, teams=cap.teams,
                          priority_classes=cap.priority_classes, fair_share=fair_share)
    trace = bench_trace(cap, jobs=jobs, days=days, seed=5)
    fast, plain = simulate(cap, trace), reference_simulate(cap, trace)
    assert fast.preemptions > 0  # the trace exercises preemption, not only admission
    assert fast.as_dict() == plain.as_dict()
    assert fast.first_admission == plain.first_admission


def test_borrowers_with_infinite_shares() -> None:
    """Found by the random test: with fair-share weight 0 every borrowing share is infinite, so a
    borrower's share stays equal to the preemptor's after an eviction and LessThanOrEqualToFinalShare
    passes; the fair-share bound must not skip a borrower whose share only equals the preemptor's.
    x (no guarantee, absolute limit 2) fills a's lent 2 GPUs; y (no guarantee, limit 1) arrives at t=0
    too and gets in at t=1 by evicting x's settled job."""
    teams = (TeamQuota(name=TeamName("a"), guaranteed_gpus={TYPES[0]: 2}, sharing="Lend", fair_share_weight=0),
             TeamQuota(name=TeamName("x"), guaranteed_gpus={}, sharing="LendAndBorrow",
                       absolute_borrow_gpus={TYPES[0]: 2}, fair_share_weight=0),
             TeamQuota(name=TeamName("y"), guaranteed_gpus={}, sharing="LendAndBorrow",
                       absolute_borrow_gpus={TYPES[0]: 1}, fair_share_weight=0))
    cap = ClusterCapacity(name="inf", capacity_gpus={TYPES[0]: 4}, teams=teams, priority_classes=PRIORITIES,
                          idle_resource_sharing=False)
    jobs = [Job(id=JobId(f"x{n:02d}"), submit=0, team=TeamName("x"), instance_type=TYPES[0], gpus=1,
                duration=2 if n == 0 else 1, priority="high") for n in range(20)]
    jobs.append(Job(id=JobId("y"), submit=0, team=TeamName("y"), instance_type=TYPES[0], gpus=1, duration=1,
                    priority="high"))
    fast, plain = simulate(cap, jobs), reference_simulate(cap, jobs)
    assert plain.first_admission["y"] == 1
    assert fast.as_dict() == plain.as_dict()
    assert fast.first_admission == plain.first_admission
