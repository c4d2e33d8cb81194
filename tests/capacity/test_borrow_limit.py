"""A borrowing team never holds more than its guarantee plus its borrow limit (HyperPod's default
limit is 50% of the guarantee)."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate


@pytest.mark.parametrize(("borrow", "b2_start", "never"), [
    # default 50%: 8 + 4 = 12 GPUs; b2 (1 GPU) waits for b1 although 4 GPUs are idle; 16 never fits.
    pytest.param(None, 100, 1, id="default-50-percent"),
    pytest.param(50, 100, 1, id="explicit-50-percent"),
    # 100%: 16 GPUs; b2 fits beside b1, and b3 runs once both are done.
    pytest.param(100, 0, 0, id="100-percent"),
])
def test_borrow_limit_is_respected(borrow: int | None, b2_start: int, never: int) -> None:
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=borrow))
    jobs = [job("b1", at=0, team="b", gpus=12, duration=100), job("b2", at=0, team="b", gpus=1, duration=100),
            job("b3", at=0, team="b", gpus=16, duration=100)]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True, sample_interval=10))
    b = result.team("b")
    assert b is not None
    assert result.first_admission["b1"] == 0
    assert result.first_admission["b2"] == b2_start
    assert b.never_admitted == never
    limit = 8 + 8 * (50 if borrow is None else borrow) // 100
    assert max(row[result.series.teams.index("b")] for row in result.series.used) <= limit
    assert b.borrow_limit_gpus == {"gpu": limit - 8}
