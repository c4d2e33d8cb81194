"""Gang admission: a job gets all its GPUs at once or none, and smaller jobs may pass a blocked
one (BestEffortFIFO)."""

from __future__ import annotations

from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate


def test_gang_job_is_never_half_admitted() -> None:
    """6 of 8 GPUs are busy until t=100: the 4-GPU job waits for all four, the 2-GPU job that
    arrives later fits at once."""
    cap = cluster(team("t", 8), capacity=8)
    jobs = [job("big", at=0, team="t", gpus=6, duration=100), job("gang", at=10, team="t", gpus=4, duration=50),
            job("small", at=20, team="t", gpus=2, duration=10)]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True, sample_interval=5))
    assert result.first_admission == {"big": 0, "gang": 100, "small": 20}
    used = dict(zip(result.series.times, (sum(row) for row in result.series.used), strict=True))
    assert all(used[t] in (6, 8) for t in range(10, 100, 5))  # 6 + (2 while 'small' runs), never 6 + part of 4
    assert used[100] == 4
    assert result.end == 150


def test_job_larger_than_the_cluster_never_runs_and_blocks_nobody() -> None:
    cap = cluster(team("t", 8, sharing="LendAndBorrow", borrow=500), capacity=8)
    result = simulate(cap, [job("huge", at=0, team="t", gpus=9, duration=10),
                            job("ok", at=5, team="t", gpus=8, duration=10)], SimulationSettings(check_invariants=True))
    t = result.team("t")
    assert t is not None and t.never_admitted == 1
    assert result.first_admission == {"ok": 5}
