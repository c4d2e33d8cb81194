"""Invariants over random clusters and traces (hypothesis): allocations never exceed capacity
or a team's limit, running jobs hold exactly their GPUs, a team within its guarantee never waits
while its guarantee is free or lent out, scheduling always settles, and the simulation is
deterministic and independent of the order the trace lists its jobs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from capacity import ClusterCapacity, Job, SimulationSettings, simulate
from capacity.spec import InstanceTypeName, JobId, PriorityClass, TeamName, TeamQuota

TYPES = (InstanceTypeName("p5"), InstanceTypeName("g5"))
PRIORITIES = (PriorityClass("high", 100), PriorityClass("mid", 50), PriorityClass("low", 10))


@st.composite
def clusters(draw: st.DrawFn) -> ClusterCapacity:
    types = TYPES[:draw(st.integers(1, 2))]
    capacity = {t: draw(st.integers(1, 24)) for t in types}
    n_teams = draw(st.integers(1, 4))
    left = dict(capacity)
    teams = []
    for n in range(n_teams):
        guaranteed = {}
        for t in types:
            guaranteed[t] = draw(st.integers(0, left[t]))  # guarantees never exceed the hardware
            left[t] -= guaranteed[t]
        teams.append(TeamQuota(
            name=TeamName(f"team{n}"), guaranteed_gpus=guaranteed,
            sharing=draw(st.sampled_from(["Lend", "DontLend", "LendAndBorrow"])),
            borrow_limit_percent=draw(st.sampled_from([None, 0, 25, 100, 300])),
            fair_share_weight=draw(st.integers(0, 4)), preempt_own_lower_priority=draw(st.booleans())))
    return ClusterCapacity(name="prop", capacity_gpus=capacity, teams=tuple(teams), priority_classes=PRIORITIES,
                           fair_share=draw(st.booleans()), idle_resource_sharing=draw(st.booleans()))


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[ClusterCapacity, list[Job], SimulationSettings]:
    cap = draw(clusters())
    teams = [t.name for t in cap.teams] + ["stranger"]
    jobs = [Job(id=JobId(f"j{n}"), submit=draw(st.integers(0, 400)), team=TeamName(draw(st.sampled_from(teams))),
                instance_type=draw(st.sampled_from(sorted(cap.capacity_gpus))), gpus=draw(st.integers(1, 26)),
                duration=draw(st.integers(1, 300)), priority=draw(st.sampled_from(["high", "mid", "low", "other"])))
            for n in range(draw(st.integers(0, 30)))]
    run = SimulationSettings(progress=draw(st.sampled_from(["restart", "checkpoint"])),
                             checkpoint_interval=draw(st.integers(1, 200)), check_invariants=True)
    return cap, jobs, run


@settings(max_examples=250, deadline=None)
@given(scenarios())
def test_invariants_hold_after_every_instant(scenario: tuple[ClusterCapacity, list[Job], SimulationSettings]) -> None:
    cap, jobs, run = scenario
    result = simulate(cap, jobs, run)  # raises InvariantViolation at the first broken instant
    assert result.scheduler_cutoffs == 0
    own_plus_borrowed = sum(t.gpu_hours_own + t.gpu_hours_borrowed for t in result.teams)
    assert abs(own_plus_borrowed - result.used_gpu_hours) < 1e-6
    done = {j.id for j in jobs if j.id in result.first_admission}
    work = sum(j.gpus * j.duration for j in jobs if j.id in done) / 3600
    lost = sum(t.lost_gpu_hours for t in result.teams)
    if sum(t.completed for t in result.teams) == len(done):
        assert abs(result.used_gpu_hours - work - lost) < 1e-6  # GPU time = useful work + thrown-away work


@settings(max_examples=100, deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_simulation_is_deterministic(scenario: tuple[ClusterCapacity, list[Job], SimulationSettings],
                                     rnd: object) -> None:
    cap, jobs, run = scenario
    shuffled = list(jobs)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    first = simulate(cap, jobs, run)
    again = simulate(cap, shuffled, run)
    assert first.as_dict() == again.as_dict()
    assert first.first_admission == again.first_admission
