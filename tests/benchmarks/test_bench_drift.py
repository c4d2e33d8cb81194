"""The drift benchmark's own machinery on a small org: the live state seeded with boto3 from the
desired state scans clean with every registered scanner (the seeder creates what an apply
creates), and each injected drift is found as its kind with nothing else reported (a drift of a
service no registered scanner reads is "not scanned", never "found")."""

from __future__ import annotations

from benchmarks.bench_drift import run
from benchmarks.synthetic import generate_org


def test_a_seeded_org_scans_clean_and_every_injected_drift_is_found() -> None:
    result = run(projects=6, clusters=2, seed=3, sample=1, concurrency=4, baseline=False)
    assert result["clean_scan"]["complete"] and result["clean_scan"]["items"] == 0, result["clean_scan"]
    assert result["unexpected"] == [], result["unexpected"]
    assert all(found is not False for found in result["drifts"].values()), result["drifts"]
    assert result["drifts"]["a compute quota's instance count raised"] is True  # HyperPod is always scanned
    assert result["seed"]["objects"] == result["desired_objects"] + result["hyperpod_objects"]
    assert result["drifts_ok"]


def test_the_default_synthetic_org_is_unchanged_by_the_task_governance_option() -> None:
    assert generate_org(projects=12, clusters=4, seed=5) == generate_org(projects=12, clusters=4, seed=5,
                                                                         plain_eks_every=4)
    every = generate_org(projects=12, clusters=4, seed=5, plain_eks_every=None)
    assert all(b"task_governance: true" in every[f"clusters/c{i:02d}.yaml"] for i in range(4))
