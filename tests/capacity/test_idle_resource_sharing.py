"""The scheduler config's IdleResourceSharing ([HP-SC] SchedulerConfig,
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_SchedulerConfig.html): "When
enabled, unallocated resources are automatically calculated and made available for entities to
borrow". Disabled, only the idle guarantees of lending teams can be borrowed ([K-CQ]: borrowing
fits in the unused nominal quota of the cohort). SEMANTICS.md R5; outcomes computed by hand."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate

CHECKED = SimulationSettings(check_invariants=True)


@pytest.mark.parametrize(("idle_sharing", "starts", "borrowed_gpu_hours"), [
    # 24 GPUs: a guaranteed 8 (Lend, idle), b 8 (LendAndBorrow, borrow 200% = up to 24), 8 nobody's.
    # Enabled: pool = a's 8 + 8 unallocated; b1 (8 own) + b2 (8) + b3 (8) all run at t=0 on 16 borrowed.
    pytest.param(True, {"b1": 0, "b2": 0, "b3": 0}, 16.0, id="enabled-unallocated-is-borrowable"),
    # Disabled: pool = a's 8 only; b3 waits until b1/b2 end at t=3600, and b borrows 8 GPUs for 1 h then 0.
    pytest.param(False, {"b1": 0, "b2": 0, "b3": 3600}, 8.0, id="disabled-only-lent-guarantees"),
])
def test_unallocated_capacity_is_borrowable_only_with_idle_resource_sharing(
        idle_sharing: bool, starts: dict[str, int], borrowed_gpu_hours: float) -> None:
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=200), capacity=24,
                  idle_sharing=idle_sharing)
    jobs = [job(f"b{n}", at=0, team="b", gpus=8, duration=3600) for n in (1, 2, 3)]
    result = simulate(cap, jobs, CHECKED)
    b = result.team("b")
    assert b is not None
    assert result.first_admission == starts
    assert b.gpu_hours_borrowed == borrowed_gpu_hours


@pytest.mark.parametrize("idle_sharing", [pytest.param(True, id="enabled"), pytest.param(False, id="disabled")])
def test_lent_guarantee_is_borrowable_either_way(idle_sharing: bool) -> None:
    """All 16 GPUs are guaranteed (nothing unallocated): b borrows a's idle 8 GPUs whatever the setting."""
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=100), idle_sharing=idle_sharing)
    result = simulate(cap, [job("b1", at=0, team="b", gpus=16, duration=60)], CHECKED)
    assert result.first_admission == {"b1": 0}
