"""Within a team, urgent jobs evict the team's own lower-priority jobs only when the team allows
it (HyperPod PreemptTeamTasks / Kueue withinClusterQueue: LowerPriority)."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate


@pytest.mark.parametrize(("preempt_own", "urgent_start", "preemptions"), [
    pytest.param(True, 100, 1, id="LowerPriority"),
    pytest.param(False, 1000, 0, id="Never"),
])
def test_urgent_job_preempts_own_lower_priority(preempt_own: bool, urgent_start: int, preemptions: int) -> None:
    cap = cluster(team("t", 8, preempt_own=preempt_own), capacity=8)
    jobs = [job("batch", at=0, team="t", gpus=8, duration=1000, priority="low"),
            job("urgent", at=100, team="t", gpus=8, duration=100, priority="high")]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True))
    assert result.first_admission["urgent"] == urgent_start
    assert result.preemptions == preemptions


def test_equal_priority_never_preempts() -> None:
    cap = cluster(team("t", 8), capacity=8)
    jobs = [job("first", at=0, team="t", gpus=8, duration=1000, priority="high"),
            job("second", at=100, team="t", gpus=8, duration=100, priority="high")]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True))
    assert result.first_admission["second"] == 1000
    assert result.preemptions == 0


def test_higher_priority_is_admitted_first_from_the_queue() -> None:
    cap = cluster(team("t", 8), capacity=8)
    jobs = [job("running", at=0, team="t", gpus=8, duration=100, priority="high"),
            job("low", at=10, team="t", gpus=8, duration=100, priority="low"),
            job("high", at=20, team="t", gpus=8, duration=100, priority="high")]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True))
    assert result.first_admission == {"running": 0, "high": 100, "low": 200}
