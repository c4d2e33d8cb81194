"""Pools from the example tree (config/): capacity and guarantees in units of the kind (a GPU is
56 units, a vCPU 1000), each team's strategy, the cluster's idle-resource sharing."""

from __future__ import annotations

from hypergov.validate import validate_files
from tests.example_tree import example_files
from usage.accounting import Pool
from usage.adapter import pools_for_tree
from usage.resources import ResourceKind

RECSYS_P5 = "    instances:\n      ml.p5.48xlarge: 4\n      ml.g5.12xlarge: 4\n"


def _pools(files: dict[str, bytes]) -> dict[tuple[str, str, ResourceKind], Pool]:
    report = validate_files(files)
    assert report.ok, report.problems
    return {p.key: p for p in pools_for_tree(report.tree)}


def test_gpu_west_pools() -> None:
    """gpu-west: 32 p5 (8 H100, 192 vCPU each), 16 g5.12xlarge (4 A10G, 48 vCPU each).
    p5 GPUs: 32 * 8 * 56 = 14336 units, recsys 4 instances = 4 * 8 * 56 = 1792.
    g5 GPUs: 16 * 4 * 56 = 3584 units; speech (DontLend) 8 instances = 8 * 4 * 56 = 1792.
    g5 vCPUs: 16 * 48 * 1000 = 768000 millicores; speech 8 * 48 * 1000 = 384000."""
    pools = _pools(example_files())

    p5 = pools[("gpu-west", "ml.p5.48xlarge", ResourceKind.GPU)]
    g5 = pools[("gpu-west", "ml.g5.12xlarge", ResourceKind.GPU)]
    g5_cpu = pools[("gpu-west", "ml.g5.12xlarge", ResourceKind.VCPU)]
    assert (p5.capacity, p5.guarantees["recsys"], p5.shares_idle) == (14336, 1792, True)
    assert (g5.capacity, g5.guarantees["speech"], g5.strategy("speech")) == (3584, 1792, "DontLend")
    assert (g5_cpu.capacity, g5_cpu.guarantees["speech"]) == (768000, 384000)


def test_trainium_counts_neuron_devices() -> None:
    """trn-east: trn1.32xlarge has 16 Trainium devices; 16 instances = 256 devices, each counted in
    halves (a Trainium device holds two NeuronCores, so a NeuronCore request is one unit): 512."""
    pool = _pools(example_files())[("trn-east", "ml.trn1.32xlarge", ResourceKind.NEURON_DEVICE)]

    assert pool.capacity == 256 * 2


def test_a_mig_partition_guarantee_is_its_share_of_a_gpu() -> None:
    """recsys guarantees 4 mig-3g.40gb partitions of p5 instead of 4 instances. On H100 a 3g.40gb
    holds 3/7 of the compute and 4/8 of the memory: 1/2 GPU = 28 of 56 units; 4 * 28 = 112 units."""
    files = example_files()
    recsys = files["projects/recsys.yaml"].decode()
    assert RECSYS_P5 in recsys
    files["projects/recsys.yaml"] = recsys.replace(RECSYS_P5, (
        "    instances:\n      ml.g5.12xlarge: 4\n"
        "    resources:\n      ml.p5.48xlarge: {partition: {profile: mig-3g.40gb, count: 4}}\n")).encode()

    pool = _pools(files)[("gpu-west", "ml.p5.48xlarge", ResourceKind.GPU)]

    assert pool.guarantees["recsys"] == 112
