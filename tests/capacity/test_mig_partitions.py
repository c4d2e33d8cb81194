"""MIG partitions (SageMaker `AcceleratorPartition`) in the simulator: an instance type split into
one profile is its own resource counted in slices, and a pod's slices must sit on one instance, so
free slices scattered over instances may not take a job (fragmentation; SEMANTICS.md R7).

Expected outcomes by hand from the documented facts: an ml.p5.48xlarge has 8 H100 GPUs (EC2
DescribeInstanceTypes), and one H100 80GB splits into 2 `3g.40gb` instances (NVIDIA MIG user guide,
"Supported MIG Profiles", https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html),
so one instance holds 8 x 2 = 16 slices and two instances 32. HyperPod gives partitions as quota
per profile (AWS, "Using GPU partitions in Amazon SageMaker HyperPod",
https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-gpu-partitioning.html), and
a pod's MIG devices are devices of the one node it runs on."""

from __future__ import annotations

import pytest
from capacity_builders import cluster, job, team

from capacity import SimulationSettings, simulate
from capacity.placement import Placement, first_fit
from capacity.spec import partition_resource

CHECKED = SimulationSettings(check_invariants=True)
MIG = partition_resource("ml.p5.48xlarge", "mig-3g.40gb")
SLICES = 8 * 2  # 8 H100 per ml.p5.48xlarge x 2 mig-3g.40gb per H100


@pytest.mark.parametrize(("free", "pods", "per_pod", "expected"), [
    # 2 instances of 16 free slices: 2 pods of 10 go one per instance; a third finds 6 + 6 left.
    pytest.param([16, 16], 2, 10, [0, 1], id="two-pods-of-ten-fit"),
    pytest.param([16, 16], 3, 10, None, id="three-pods-of-ten-do-not-although-30-of-32-free"),
    # pods share an instance when it has room: 4 pods of 4 fill the first instance.
    pytest.param([16, 16], 4, 4, [0, 0, 0, 0], id="first-fit-packs-the-first-instance"),
    pytest.param([6, 6], 2, 6, [0, 1], id="scattered-slices-take-small-pods"),
    pytest.param([6, 6], 1, 12, None, id="scattered-slices-refuse-one-large-pod"),
    pytest.param([16], 1, 17, None, id="pod-larger-than-an-instance"),
])
def test_first_fit_places_each_pod_on_one_instance(free: list[int], pods: int, per_pod: int,
                                                    expected: list[int] | None) -> None:
    assert first_fit(free, pods=pods, per_pod=per_pod) == expected


def test_placement_releases_what_it_took() -> None:
    placement = Placement(instances=2, slices_per_instance=SLICES)
    first = placement.place(pods=1, per_pod=10)
    placement.place(pods=1, per_pod=10)
    assert placement.free == [6, 6]
    assert not placement.fits(pods=1, per_pod=10)
    assert placement.fits(pods=1, per_pod=10, freeing=[first])
    placement.release(first)
    assert placement.free == [16, 6]


@pytest.mark.parametrize(("slices", "j3_start", "j4_start"), [
    # Partitioned: j1 and j2 (one 10-slice pod each) take 10 of each instance, leaving 6 + 6; j3's
    # 10-slice pod fits nowhere although 12 slices and 22 of a's guarantee are free, so it waits
    # for j1 to end (t=100); j4's two 6-slice pods take the 6 + 6 when it arrives (t=2: BestEffortFIFO
    # lets it pass j3), so at t=100 only the 10 slices j1 frees are free, and j3 takes them.
    pytest.param({str(MIG): SLICES}, 100, 2, id="partitioned-fragmentation"),
    # The same counts as one pool (no placement): j3 fits when it arrives (30 <= 32), j4 (12) then
    # waits for j1 (t=100): 30 + 12 > 32.
    pytest.param({}, 1, 100, id="same-counts-without-placement"),
])
def test_fragmented_slices_do_not_take_a_pod(slices: dict[str, int], j3_start: int, j4_start: int) -> None:
    cap = cluster(team("a", {str(MIG): 2 * SLICES}), capacity={str(MIG): 2 * SLICES}, slices=slices)
    jobs = [job("j1", at=0, team="a", gpus=10, duration=100, itype=MIG),
            job("j2", at=0, team="a", gpus=10, duration=200, itype=MIG),
            job("j3", at=1, team="a", gpus=10, duration=100, itype=MIG),
            job("j4", at=2, team="a", gpus=12, pods=2, duration=100, itype=MIG)]
    result = simulate(cap, jobs, CHECKED)
    assert result.first_admission == {"j1": 0, "j2": 0, "j3": j3_start, "j4": j4_start}


def test_pod_larger_than_an_instance_never_runs() -> None:
    """17 slices in one pod: one instance holds 16, so the job is never admitted although the
    team's guarantee (32) and the free slices (32) are enough by count."""
    cap = cluster(team("a", {str(MIG): 2 * SLICES}), capacity={str(MIG): 2 * SLICES}, slices={str(MIG): SLICES})
    result = simulate(cap, [job("big", at=0, team="a", gpus=17, duration=100, itype=MIG),
                            job("split", at=0, team="a", gpus=18, pods=2, duration=100, itype=MIG)], CHECKED)
    a = result.team("a")
    assert a is not None
    assert result.first_admission == {"split": 0}  # 2 pods of 9: one per instance
    assert a.never_admitted == 1


@pytest.mark.parametrize("fair_share", [pytest.param(True, id="fair-share"), pytest.param(False, id="fifo")])
def test_guaranteed_slices_are_lent_and_reclaimed(fair_share: bool) -> None:
    """a (16 slices, Lend) and b (16 slices, LendAndBorrow, HyperPod's default 50 %: up to 24) share
    two instances. At t=0 b runs b1 (2 pods of 8 = 16, its guarantee: the first instance) and b2
    (1 pod of 8, borrowed from a's idle slices: the second instance, 8 left). At t=50 a asks for its
    16 slices in 2 pods of 8: only 8 are free, a is under its guarantee and b borrows, so a reclaims
    (Kueue reclaimWithinCohort: Any; HyperPod: lent compute is reclaimed when the owner needs it):
    b2 is evicted, which frees the second instance for both of a's pods, and a1 starts at t=50.
    b2 waits for slices until b1 ends (t=1000) and reruns from zero (no checkpoint in 50 s)."""
    cap = cluster(team("a", {str(MIG): SLICES}), team("b", {str(MIG): SLICES}, sharing="LendAndBorrow"),
                  capacity={str(MIG): 2 * SLICES}, slices={str(MIG): SLICES}, fair_share=fair_share)
    jobs = [job("b1", at=0, team="b", gpus=16, pods=2, duration=1000, itype=MIG),
            job("b2", at=0, team="b", gpus=8, duration=500, itype=MIG),
            job("a1", at=50, team="a", gpus=16, pods=2, duration=2000, itype=MIG)]
    result = simulate(cap, jobs, CHECKED)
    a, b = result.team("a"), result.team("b")
    assert a is not None and b is not None
    assert result.first_admission == {"b1": 0, "b2": 0, "a1": 50}
    assert (a.preemptions_caused, b.preemptions_suffered) == (1, 1)
    assert result.end == 2050  # a1; b2 reran 1000..1500


def test_slices_not_a_whole_number_of_instances_are_refused() -> None:
    cap = cluster(team("a", {str(MIG): 16}), capacity={str(MIG): 20}, slices={str(MIG): SLICES})
    with pytest.raises(Exception, match="not a whole number of instances"):
        simulate(cap, [])
