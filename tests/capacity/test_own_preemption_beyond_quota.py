"""Where HyperPod's documentation and Kueue disagree (SEMANTICS.md P2): with fair share off, a job
larger than its team's guarantee evicts the team's own lower-priority job and borrows the rest.
HyperPod's policies page describes PreemptTeamTasks as serving the team's tasks within its quota
([HP-POL] https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-operate-console-ui-governance-policies.html);
Kueue's classicalPreemptions tries the team's own lower-priority workloads with borrowing allowed
([K-SRC] pkg/scheduler/preemption/preemption.go, withinClusterQueue: LowerPriority). The planner
follows Kueue, which is the scheduler HyperPod task governance runs. Outcome computed by hand."""

from __future__ import annotations

from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate


def test_job_beyond_the_guarantee_evicts_its_own_lower_priority_job_and_borrows() -> None:
    """24 GPUs: a (8, Lend) runs 8 of its own; b (8, LendAndBorrow, borrow 100% = up to 16) runs
    b-low (8, low) from t=0; 8 GPUs are nobody's (idle sharing on). At t=10 b-high (12 GPUs, high)
    arrives: 8 + 12 = 20 > 16, so it cannot start beside b-low. Evicting b-low leaves b at 12 <= 16,
    hardware 16 - 8 + 12 = 20 <= 24: Kueue admits b-high at t=10 (borrowing 4); b-low waits for it."""
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=100), capacity=24, fair_share=False)
    jobs = [job("a1", at=0, team="a", gpus=8, duration=1000),
            job("b-low", at=0, team="b", gpus=8, duration=500, priority="low"),
            job("b-high", at=10, team="b", gpus=12, duration=300, priority="high")]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True, checkpoint_interval=1000))
    b = result.team("b")
    assert b is not None
    assert result.first_admission == {"a1": 0, "b-low": 0, "b-high": 10}
    assert (b.preemptions_caused, b.preemptions_suffered, result.preemptions) == (1, 1, 1)
