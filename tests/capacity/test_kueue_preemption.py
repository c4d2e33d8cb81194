"""Preemption and admission order as Kueue's scheduler decides them, in the four multi-team cases
where the simulator used to disagree (issue 15). Every expected outcome is derived by hand from
Kueue's code (kubernetes-sigs/kueue, pkg/scheduler/preemption/preemption.go,
pkg/scheduler/preemption/fairsharing/ordering.go, pkg/scheduler/fair_sharing_iterator.go,
pkg/scheduler/scheduler.go) and its documentation (https://kueue.sigs.k8s.io/docs/concepts/preemption/)."""

from __future__ import annotations

from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate

CHECKED = SimulationSettings(check_invariants=True)


def test_reclaim_combines_with_evicting_own_lower_priority_jobs() -> None:
    """Fair share off (classicalPreemptions). 16 GPUs; A (Lend) is guaranteed 8 and runs a-low
    (4, low); B (guaranteed 8, may borrow 100%) runs b-own (8) and b-extra (4, borrowed from A).
    At t=100 A submits a-high (8, high). A uses 4 < 8, so B's borrowing job is a candidate, in
    the attempt where A must end within its guarantee (borrowWithinCohort unset): candidates
    b-extra (other ClusterQueue first, CandidatesOrdering) then a-low. Evict b-extra: A would use
    4 + 8 = 12 > 8, no. Evict a-low: A 0 + 8 = 8 <= 8, GPUs 16 - 8 + 8 = 16: fits.
    fillBackWorkloads from the second-to-last: b-extra back would need 20 GPUs: stays evicted.
    So a-high starts at once with 2 evictions (the old rule let it wait: 4 + 8 > 8 ruled reclaim
    out, and a-low alone frees too little)."""
    cap = cluster(team("a", 8), team("b", 8, sharing="LendAndBorrow", borrow=100), fair_share=False)
    jobs = [job("a-low", at=0, team="a", gpus=4, duration=1000),
            job("b-own", at=0, team="b", gpus=8, duration=1000),
            job("b-extra", at=10, team="b", gpus=4, duration=1000),
            job("a-high", at=100, team="a", gpus=8, duration=100, priority="high")]
    result = simulate(cap, jobs, CHECKED)
    a, b = result.team("a"), result.team("b")
    assert a is not None and b is not None
    assert result.first_admission["a-high"] == 100
    assert (a.preemptions_suffered, b.preemptions_suffered, a.preemptions_caused) == (1, 1, 2)
    # At 200 a-high ends: a-low (A's guarantee) and b-extra (borrowing A's idle 4) both fit again.
    assert result.preemptions == 2


def test_fair_share_prefilter_counts_the_teams_own_evictions() -> None:
    """Fair share on. 40 GPUs, all lendable (pool 40); X and Y (LendAndBorrow, weight 1) are
    guaranteed 5 and may borrow 25; Z (Lend) is guaranteed 30. At t=0: x-low (8, low), thirteen
    1-GPU jobs of Y (Y borrows 8: share 8/40 = 0.2) and z-own (18): 39 GPUs used, 1 free.
    At t=10 X submits x-high (10, high). Counting X's own x-low, X's share after admission is
    (10 - 5)/40 = 0.125 <= 0.2, so fair preemption may admit it (without it: (18 - 5)/40 = 0.325,
    which the old pre-filter rejected). fairPreemptions: X's own queue has the highest share with
    the request added (0.325 > 0.2): evict x-low; 1 + 8 = 9 < 10 GPUs free. Then Y (0.2): the
    first Y job passes LessThanOrEqualToFinalShare (X 0.125 <= Y after (12 - 5)/40 = 0.175):
    10 free, fits. Fill back: x-low back needs 41 GPUs: stays evicted. 2 evictions at t=10."""
    cap = cluster(team("x", 5, sharing="LendAndBorrow", borrow=500),
                  team("y", 5, sharing="LendAndBorrow", borrow=500), team("z", 30), capacity=40)
    jobs = ([job("x-low", at=0, team="x", gpus=8, duration=1000), job("z-own", at=0, team="z", gpus=18, duration=1000)]
            + [job(f"y{n:02d}", at=0, team="y", gpus=1, duration=1000) for n in range(13)]
            + [job("x-high", at=10, team="x", gpus=10, duration=100, priority="high")])
    result = simulate(cap, jobs, CHECKED)
    x, y = result.team("x"), result.team("y")
    assert x is not None and y is not None
    assert result.first_admission["x-high"] == 10
    assert (x.preemptions_suffered, y.preemptions_suffered, x.preemptions_caused) == (1, 1, 2)
    assert result.preemptions == 2  # then X 10 (0.125) and Y 12 (0.175): neither may evict the other


def test_fair_share_reclaim_takes_from_the_highest_share_first() -> None:
    """Fair share on. 20 GPUs, pool 20; A (Lend) is guaranteed 8; B and C (LendAndBorrow, may
    borrow 100%) 6 each. B runs b-own (6) and b-extra (5, admitted t=10): share 5/20 = 0.25;
    C runs c-own (6), c1 (2, t=50) and c2 (1, t=60): share 3/20 = 0.15. All 20 GPUs are used.
    At t=100 A submits a1 (3), within its guarantee, so each pick is unconditional
    (FairSharingPreemptWithinNominal) from the queue with the highest share
    (TargetClusterQueueOrdering.nextTarget): B, its first candidate b-extra (most recently
    admitted): 5 free, fits: 1 eviction. (Victims by priority and recency across teams would be
    c2 then c1, both needed after fill-back: 2 evictions.) Afterwards B's b-extra would raise B
    to 0.25 > C's 0.15, so it evicts nothing; it restarts at t=1000 when b-own ends."""
    cap = cluster(team("a", 8), team("b", 6, sharing="LendAndBorrow", borrow=100),
                  team("c", 6, sharing="LendAndBorrow", borrow=100), capacity=20)
    jobs = [job("b-own", at=0, team="b", gpus=6, duration=1000), job("c-own", at=0, team="c", gpus=6, duration=1000),
            job("b-extra", at=10, team="b", gpus=5, duration=1000), job("c1", at=50, team="c", gpus=2, duration=1000),
            job("c2", at=60, team="c", gpus=1, duration=1000), job("a1", at=100, team="a", gpus=3, duration=100)]
    result = simulate(cap, jobs, CHECKED)
    b, c = result.team("b"), result.team("c")
    assert b is not None and c is not None
    assert result.first_admission["a1"] == 100
    assert (result.preemptions, b.preemptions_suffered, c.preemptions_suffered) == (1, 1, 0)


def test_jobs_within_their_own_quota_of_the_type_are_admitted_first() -> None:
    """Fair share on, two instance types of 8 GPUs. X (guaranteed 4 g) runs x-own (4 g); Y
    (guaranteed 4 g and 4 p, may borrow 100%) runs y-p (8 p): Y's p share (8 - 4)/8 = 0.5 (pool p:
    Y's 4 + 4 unallocated). At t=10 X submits x1 (2 g, borrowing: g share (6 - 4)/8 = 0.25) and Y
    submits y1 (4 g, within its g guarantee; Y's dominant share 0.5). Kueue's fair-sharing
    iterator prefers entries that do not borrow on the flavor they ask for
    (FairSharingPrioritizeNonBorrowing, default on) before comparing shares: y1 first, 0 g free,
    x1 waits; x1 may not evict (Y does not borrow g). y1 ends at 110 and x1 starts: 0
    preemptions. (Ordering by dominant share alone admitted x1 at 10 and at once evicted it for
    y1's reclaim.)"""
    cap = cluster(team("x", {"g": 4}, sharing="LendAndBorrow", borrow=100),
                  team("y", {"g": 4, "p": 4}, sharing="LendAndBorrow", borrow=100), capacity={"g": 8, "p": 8})
    jobs = [job("x-own", at=0, team="x", gpus=4, duration=1000, itype="g"),
            job("y-p", at=0, team="y", gpus=8, duration=1000, itype="p"),
            job("x1", at=10, team="x", gpus=2, duration=100, itype="g"),
            job("y1", at=10, team="y", gpus=4, duration=100, itype="g")]
    result = simulate(cap, jobs, CHECKED)
    assert result.first_admission["y1"] == 10
    assert result.first_admission["x1"] == 110
    assert result.preemptions == 0
