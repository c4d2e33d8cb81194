"""Idle quota is lent to teams that may borrow, and only lendable quota is (hand-computed)."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate

CHECKED = SimulationSettings(check_invariants=True)


def test_idle_team_lends_its_guarantee() -> None:
    """A is idle; B (guarantee 8, may borrow 100%) runs a 16-GPU job at once, half on A's quota."""
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=100))
    result = simulate(cap, [job("b1", at=0, team="b", gpus=16, duration=3600)], CHECKED)
    b = result.team("b")
    assert b is not None
    assert result.first_admission == {"b1": 0}
    assert (b.gpu_hours_own, b.gpu_hours_borrowed) == (8.0, 8.0)
    assert b.admitted_immediately_within_guarantee == 0  # it needed borrowed GPUs
    assert result.end == 3600 and result.preemptions == 0


@pytest.mark.parametrize(("lender_sharing", "admitted"), [
    pytest.param("Lend", True, id="Lend-lends"),
    pytest.param("LendAndBorrow", True, id="LendAndBorrow-lends"),
    pytest.param("DontLend", False, id="DontLend-keeps-its-guarantee"),
])
def test_only_lending_teams_lend(lender_sharing: str, admitted: bool) -> None:
    cap = cluster(team("a", 8, sharing=lender_sharing), team("b", 8, sharing="LendAndBorrow", borrow=100))  # type: ignore[arg-type]
    result = simulate(cap, [job("b1", at=0, team="b", gpus=16, duration=60),
                            job("b2", at=0, team="b", gpus=8, duration=60)], CHECKED)
    b = result.team("b")
    assert b is not None
    assert ("b1" in result.first_admission) is admitted
    assert b.never_admitted == (0 if admitted else 1)
    assert result.first_admission["b2"] == (60 if admitted else 0)  # b1 goes first when it can


@pytest.mark.parametrize(("idle_sharing", "admitted"), [
    pytest.param(True, True, id="unallocated-capacity-is-lendable"),
    pytest.param(False, False, id="idle-resource-sharing-off"),
])
def test_unallocated_capacity_follows_idle_resource_sharing(idle_sharing: bool, admitted: bool) -> None:
    """8 of 16 GPUs are nobody's guarantee; only idle resource sharing makes them borrowable."""
    cap = cluster(team("b", 8, sharing="LendAndBorrow", borrow=100), idle_sharing=idle_sharing)
    result = simulate(cap, [job("b1", at=0, team="b", gpus=16, duration=60)], CHECKED)
    assert ("b1" in result.first_admission) is admitted


def test_lend_only_team_never_borrows() -> None:
    cap = cluster(team("a", 8), team("b", 8))
    result = simulate(cap, [job("a1", at=0, team="a", gpus=12, duration=60),
                            job("a2", at=0, team="a", gpus=8, duration=60),
                            job("a3", at=0, team="a", gpus=1, duration=60)], CHECKED)
    a = result.team("a")
    assert a is not None
    assert a.never_admitted == 1  # 12 > its 8 guaranteed GPUs, forever
    assert result.first_admission == {"a2": 0, "a3": 60}
    assert a.gpu_hours_borrowed == 0
