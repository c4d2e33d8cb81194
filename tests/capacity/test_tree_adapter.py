"""The example config tree seen by the simulator: instances become GPUs, HyperPod defaults are
applied, and the tree's workload classes shape the synthetic trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from capacity.adapter import AdapterError, cluster_capacities, cluster_capacity, generate_for_tree, workloads_for_tree
from capacity.spec import InstanceTypeName
from capacity.synth import TraceShape
from hypergov.validate import load_valid_tree
from tests.quota_fields_tree import tree_with_new_fields

CONFIG = Path(__file__).resolve().parents[2] / "config"
P5 = InstanceTypeName("ml.p5.48xlarge")


def test_gpu_west_capacity_and_quotas() -> None:
    tree = load_valid_tree(CONFIG)
    cap = cluster_capacity(tree, "gpu-west")
    assert cap.capacity_gpus == {"ml.g5.12xlarge": 16 * 4, "ml.p5.48xlarge": 32 * 8}
    teams = {str(t.name): t for t in cap.teams}
    assert sorted(teams) == ["nlp", "recsys", "speech", "vision"]  # research has no quota here
    assert teams["nlp"].guaranteed_gpus == {"ml.p5.48xlarge": 12 * 8}
    assert teams["recsys"].borrow_limit_gpus(P5) == 32 * 25 // 100
    assert teams["vision"].borrow_limit_gpus(P5) == 96 * 50 // 100
    assert teams["speech"].sharing == "DontLend" and not teams["speech"].preempt_own_lower_priority
    assert [(p.name, p.weight) for p in cap.priority_classes] == [("inference", 100), ("training", 60),
                                                                  ("experimentation", 20)]
    assert cap.problems() == []


def test_every_cluster_is_simulatable() -> None:
    caps = cluster_capacities(load_valid_tree(CONFIG))
    assert [c.name for c in caps] == ["gpu-west", "trn-east"]
    assert all(c.problems() == [] for c in caps)


def test_workloads_follow_quotas_and_classes() -> None:
    tree = load_valid_tree(CONFIG)
    by_key = {(str(w.team), w.cluster): w for w in workloads_for_tree(tree)}
    nlp_trn = by_key[("nlp", "trn-east")]
    assert nlp_trn.instance_types == (("ml.trn1.32xlarge", 128.0, 256),)  # guarantee + 100% borrow, class max
    assert nlp_trn.priorities == (("training", 1.0),)  # its pretraining class
    assert nlp_trn.max_duration == 14 * 86400
    jobs = generate_for_tree(tree, shape=TraceShape(jobs=500, days=2), seed=3)
    assert len(jobs) == 500
    assert {(j.team, j.cluster) for j in jobs} <= set(by_key)


def test_finer_quota_units_and_absolute_borrow_limits() -> None:
    """tests/quota_fields_tree.py on gpu-west (ml.p5.48xlarge: 8 GPUs, ml.g5.12xlarge: 4 GPUs per
    instance). vision: 10 p5 instances = 80 GPUs, 8 g5 accelerators; absolute limits replace its 50%
    (AbsoluteBorrowLimits, "regardless of the percentage-based BorrowLimit"): p5 16 accelerators,
    g5 1 instance = 4 GPUs. recsys: 4 g5 instances = 16 GPUs; its 14 p5 `mig-1g.10gb` partitions are
    14 slices of their own resource (SEMANTICS.md R7): the whole-GPU p5 guarantees (nlp 12 + vision
    10 instances) keep 22 of the 32 instances whole (176 GPUs), the other 10 are taken as split into
    1g.10gb, 8 H100 x 7 per GPU (NVIDIA "Supported MIG Profiles") = 56 slices each, 560 in all.
    speech: g5 in vCPU and memory, no whole GPU."""
    cap = cluster_capacity(tree_with_new_fields(), "gpu-west")
    teams = {str(t.name): t for t in cap.teams}
    g5 = InstanceTypeName("ml.g5.12xlarge")
    vision = teams["vision"]
    assert vision.guaranteed_gpus == {P5: 80, g5: 8}
    assert (vision.borrow_limit_gpus(P5), vision.borrow_limit_gpus(g5)) == (16, 4)
    recsys = teams["recsys"]
    mig = InstanceTypeName("ml.p5.48xlarge:mig-1g.10gb")
    assert recsys.guaranteed_gpus == {P5: 0, g5: 16, mig: 14}
    assert cap.capacity_gpus == {g5: 16 * 4, P5: 22 * 8, mig: 10 * 56}
    assert cap.slices_per_instance == {mig: 56}
    assert recsys.absolute_borrow_gpus == {}
    assert teams["speech"].guaranteed_gpus == {g5: 0}
    assert cap.problems() == []


def test_two_mig_profiles_on_one_instance_type_are_refused_by_name() -> None:
    """The simulator splits the partitioned instances of a type into one profile (SEMANTICS.md R7),
    so a tree whose teams ask for p5 slices of two profiles (recsys mig-1g.10gb, speech
    mig-3g.40gb: both NVIDIA H100 80 GB profiles, so each alone is valid) is refused with both
    profiles named and the fix, not simulated with one of them silently."""
    tree = tree_with_new_fields(speech_resources={"ml.p5.48xlarge": "{partition: {profile: mig-3g.40gb, count: 2}}"})
    with pytest.raises(AdapterError) as refused:
        cluster_capacity(tree, "gpu-west")
    message = str(refused.value)
    assert "ml.p5.48xlarge" in message and "mig-1g.10gb, mig-3g.40gb" in message
    assert "one profile per instance type" in message
