"""SageMaker's AbsoluteBorrowLimits (ResourceSharingConfig): "When specified, these limits define
the maximum amount of specific resource types ... that an entity can borrow, regardless of the
percentage-based BorrowLimit" ([HP-RSC],
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ResourceSharingConfig.html). In
Kueue terms the cap is the ClusterQueue's borrowingLimit of that flavor, and a nominalQuota of 0
with a borrowingLimit still borrows ([K-CQ] https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/,
"Borrowing limits"). Expected outcomes computed by hand (SEMANTICS.md R4b)."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate

CHECKED = SimulationSettings(check_invariants=True)


@pytest.mark.parametrize(("percent", "absolute", "b2_start", "b3_start", "never"), [
    # 8 guaranteed + 100% = 16 GPUs: b1 (8) + b2 (2) + b3 (1) all run at once; the 12-GPU b4 fits once they end.
    pytest.param(100, None, 0, 0, 0, id="percentage-only"),
    # absolute cap 2 replaces the 100%: 8 + 2 = 10 GPUs; b3 waits for b1/b2 (t=100), b4 (12 > 10) never runs.
    pytest.param(100, 2, 0, 100, 1, id="absolute-cap-below-percentage"),
    # absolute cap 6 above the default 50% (4): 8 + 6 = 14; b3 fits beside b1+b2 (11), b4 (12) fits at t=100.
    pytest.param(None, 6, 0, 0, 0, id="absolute-cap-above-default-percentage"),
    # absolute 0: no borrowing although the percentage allows 100%: only b1 (8) runs at first; b2 + b3 (3)
    # at t=100; b4 (12 > 8) never.
    pytest.param(100, 0, 100, 100, 1, id="absolute-zero"),
])
def test_absolute_limit_caps_borrowing_regardless_of_percentage(percent: int | None, absolute: int | None,
                                                               b2_start: int, b3_start: int, never: int) -> None:
    """a (8, Lend) is idle; b (8, LendAndBorrow) submits 8 + 2 + 1 GPUs at t=0, then a 12-GPU job."""
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=percent,
                                      absolute=None if absolute is None else {"gpu": absolute}))
    jobs = [job("b1", at=0, team="b", gpus=8, duration=100), job("b2", at=0, team="b", gpus=2, duration=100),
            job("b3", at=0, team="b", gpus=1, duration=100), job("b4", at=1, team="b", gpus=12, duration=100)]
    result = simulate(cap, jobs, CHECKED)
    b = result.team("b")
    assert b is not None
    assert result.first_admission["b1"] == 0
    assert (result.first_admission["b2"], result.first_admission["b3"]) == (b2_start, b3_start)
    assert b.never_admitted == never


@pytest.mark.parametrize(("absolute", "admitted", "borrowed_gpu_hours"), [
    # no guarantee of g5 and no absolute limit: the percentage of 0 is 0, so c never gets a g5 GPU.
    pytest.param(None, {}, 0.0, id="no-guarantee-no-borrowing"),
    # absolute limit 4 on g5: c1 (4 GPUs, 1 h) runs at once on a's idle g5 guarantee; c2 (5 GPUs) never.
    pytest.param(4, {"c1": 0}, 4.0, id="no-guarantee-borrows-up-to-the-cap"),
])
def test_team_without_guarantee_borrows_up_to_its_absolute_limit(absolute: int | None, admitted: dict[str, int],
                                                                 borrowed_gpu_hours: float) -> None:
    cap = cluster(team("a", {"g5": 8}), team("c", {"p5": 8}, sharing="LendAndBorrow",
                                            absolute=None if absolute is None else {"g5": absolute}),
                  capacity={"g5": 8, "p5": 8})
    jobs = [job("c1", at=0, team="c", gpus=4, duration=3600, itype="g5"),
            job("c2", at=0, team="c", gpus=5, duration=3600, itype="g5")]
    result = simulate(cap, jobs, CHECKED)
    c = result.team("c")
    assert c is not None
    assert result.first_admission == admitted
    assert c.gpu_hours_borrowed == borrowed_gpu_hours
    assert c.gpu_hours_own == 0.0


@pytest.mark.parametrize("fair_share", [pytest.param(True, id="fair-share"), pytest.param(False, id="fifo")])
def test_owner_reclaims_from_a_borrower_without_guarantee(fair_share: bool) -> None:
    """c borrows all 8 of a's g5 GPUs (absolute limit 8, no g5 guarantee); a submits 8 GPUs at t=100:
    a is under its guarantee, c borrows, so a reclaims (Kueue reclaimWithinCohort: Any; HyperPod:
    lent compute is reclaimed when the owner needs it) and starts at once; c1 requeues and runs
    again when a1 ends (t=100 + 600), from its last checkpoint (none: checkpoint every 1,000 s)."""
    cap = cluster(team("a", {"g5": 8}), team("c", {"p5": 8}, sharing="LendAndBorrow", absolute={"g5": 8}),
                  capacity={"g5": 8, "p5": 8}, fair_share=fair_share)
    jobs = [job("c1", at=0, team="c", gpus=8, duration=500, itype="g5"),
            job("a1", at=100, team="a", gpus=8, duration=600, itype="g5")]
    result = simulate(cap, jobs, SimulationSettings(check_invariants=True, checkpoint_interval=1000))
    a, c = result.team("a"), result.team("c")
    assert a is not None and c is not None
    assert result.first_admission == {"c1": 0, "a1": 100}
    assert (a.preemptions_caused, c.preemptions_suffered) == (1, 1)
    assert result.end == 700 + 500  # c1 restarts from zero at t=700
    assert c.lost_gpu_hours == pytest.approx(8 * 100 / 3600)
