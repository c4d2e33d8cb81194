"""Idle capacity is split by fair-share weight (dominant resource share), at admission and, when
a team arrives late, by preemption (hand-computed: X weighs 2, Y weighs 1)."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate
from capacity.spec import ClusterCapacity, Job


def _setup(*, fair_share: bool = True) -> ClusterCapacity:
    # 40 GPUs; Z lends 30 idle ones; X and Y are guaranteed 5 each and may borrow 25 more.
    return cluster(team("x", 5, sharing="LendAndBorrow", borrow=500, weight=2),
                   team("y", 5, sharing="LendAndBorrow", borrow=500, weight=1),
                   team("z", 30), capacity=40, fair_share=fair_share)


def _backlog(name: str, at: int) -> list[Job]:
    return [job(f"{name}{n:02d}", at=at, team=name, gpus=1, duration=10_000) for n in range(40)]


def _usage_at(result: object, t: int) -> dict[str, int]:
    series = result.series  # type: ignore[attr-defined]
    row = series.used[series.times.index(t)]
    return dict(zip(series.teams, row, strict=True))


def test_idle_capacity_is_split_by_weight_at_admission() -> None:
    """Both teams queue 40 one-GPU jobs at once: the 30 borrowable GPUs go 2:1 (X borrows 20,
    Y 10), where both weighted shares are 20/40/2 = 10/40/1 = 0.25."""
    result = simulate(_setup(), _backlog("x", 0) + _backlog("y", 0),
                      SimulationSettings(check_invariants=True, sample_interval=5))
    assert _usage_at(result, 5) == {"x": 25, "y": 15, "z": 0}
    assert result.preemptions == 0


def test_late_team_takes_its_fair_share_by_preemption() -> None:
    """Y borrows its whole limit (25) before X arrives; X then evicts Y's jobs one by one while
    X's share after admission stays <= Y's share after eviction: 15 evictions, 2:1 again."""
    result = simulate(_setup(), _backlog("y", 0) + _backlog("x", 10),
                      SimulationSettings(check_invariants=True, sample_interval=5))
    assert _usage_at(result, 5) == {"x": 0, "y": 30, "z": 0}
    assert _usage_at(result, 15) == {"x": 25, "y": 15, "z": 0}
    x, y = result.team("x"), result.team("y")
    assert x is not None and y is not None
    assert (x.preemptions_caused, y.preemptions_suffered) == (15, 15)
    assert result.scheduler_cutoffs == 0


@pytest.mark.parametrize(("weights", "expected"), [
    pytest.param((1, 1), {"x": 20, "y": 20}, id="equal-weights-split-evenly"),
    # 3:1 would be 22.5 : 7.5 borrowed GPUs; 23 : 7 has the lower largest share (0.192 vs 0.2).
    pytest.param((3, 1), {"x": 28, "y": 12}, id="3-to-1"),
])
def test_split_follows_the_weights(weights: tuple[int, int], expected: dict[str, int]) -> None:
    cap = cluster(team("x", 5, sharing="LendAndBorrow", borrow=500, weight=weights[0]),
                  team("y", 5, sharing="LendAndBorrow", borrow=500, weight=weights[1]),
                  team("z", 30), capacity=40)
    result = simulate(cap, _backlog("x", 0) + _backlog("y", 0), SimulationSettings(sample_interval=5))
    usage = _usage_at(result, 5)
    assert {k: usage[k] for k in ("x", "y")} == expected


def test_first_come_first_served_without_fair_share() -> None:
    """Fair share off (HyperPod FCFS idle allocation): Y came first and keeps what it borrowed."""
    result = simulate(_setup(fair_share=False), _backlog("y", 0) + _backlog("x", 10),
                      SimulationSettings(check_invariants=True, sample_interval=5))
    assert _usage_at(result, 15) == {"x": 10, "y": 30, "z": 0}
    assert result.preemptions == 0
