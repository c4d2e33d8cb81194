"""A lender that needs its quota back evicts the borrower; the borrower requeues with its
progress policy (hand-computed times)."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate


@pytest.mark.parametrize(("progress", "interval", "end", "lost_gpu_s"), [
    # b1 ran 400 s when evicted; restart redoes all 1,000 s from t=700.
    pytest.param("restart", 300, 700 + 1000, 400 * 16, id="restart"),
    # a checkpoint at 300 s keeps 300 s of work: 700 s remain from t=700; 100 s x 16 GPUs lost.
    pytest.param("checkpoint", 300, 700 + 700, 100 * 16, id="checkpoint"),
])
def test_borrower_is_preempted_when_owner_returns(progress: str, interval: int, end: int, lost_gpu_s: int) -> None:
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=100))
    jobs = [job("b1", at=0, team="b", gpus=16, duration=1000), job("a1", at=400, team="a", gpus=8, duration=300)]
    settings = SimulationSettings(progress=progress, checkpoint_interval=interval, check_invariants=True)  # type: ignore[arg-type]
    result = simulate(cap, jobs, settings)
    a, b = result.team("a"), result.team("b")
    assert a is not None and b is not None
    assert result.first_admission == {"b1": 0, "a1": 400}  # the owner waits not a second
    assert (a.preemptions_caused, b.preemptions_suffered, result.preemptions) == (1, 1, 1)
    assert a.guarantee_honoured == a.fit_guarantee_at_submit == 1
    assert result.end == end
    assert b.lost_gpu_hours == pytest.approx(lost_gpu_s / 3600)
    assert b.completed == 1


def test_reclaim_takes_only_what_the_borrower_borrows() -> None:
    """B runs 8 GPUs on its own quota and 4 borrowed ones as two jobs; A's return evicts only
    the most recently admitted job, which is enough."""
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=100))
    jobs = [job("b-own", at=0, team="b", gpus=8, duration=1000), job("b-extra", at=10, team="b", gpus=8, duration=1000),
            job("a1", at=100, team="a", gpus=4, duration=100)]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True))
    assert result.preemptions == 1
    assert result.first_admission["a1"] == 100
    assert result.first_admission["b-own"] == 0
    b = result.team("b")
    assert b is not None and b.preemptions_suffered == 1
