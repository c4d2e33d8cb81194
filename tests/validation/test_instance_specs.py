"""The per-instance-type tables the quota rules measure against agree with their sources:
vCPUs and memory with EC2's DescribeInstanceTypes catalogue (moto's copy of it), MIG profiles with
botocore's `MIGProfileType` enum and NVIDIA's per-GPU counts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import botocore.session
import moto
import pytest

from hypergov.model import partitions
from hypergov.model.instance_specs import instance_spec, known_instance_types

SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")
CLUSTER_TYPES = SAGEMAKER.shape_for("ClusterInstanceType").enum
EC2_FILE = Path(moto.__file__).parent / "ec2/resources/instance_types.json.gz"
EC2_CATALOGUE = json.loads(gzip.decompress(EC2_FILE.read_bytes()))


@pytest.mark.parametrize("instance_type", [t for t in CLUSTER_TYPES if t[3:] in EC2_CATALOGUE])
def test_vcpu_and_memory_are_ec2s(instance_type: str) -> None:
    ec2 = EC2_CATALOGUE[instance_type[3:]]

    spec = instance_spec(instance_type)

    assert spec is not None
    assert spec.vcpu == ec2["VCpuInfo"]["DefaultVCpus"]
    assert spec.memory_gib == ec2["MemoryInfo"]["SizeInMiB"] / 1024


def test_the_table_holds_only_hyperpod_types() -> None:
    assert known_instance_types() <= set(CLUSTER_TYPES)


@pytest.mark.parametrize("instance_type", sorted(partitions.PROFILES_BY_TYPE))
def test_every_profile_is_one_the_api_accepts(instance_type: str) -> None:
    enum = set(SAGEMAKER.shape_for("MIGProfileType").enum)

    assert set(partitions.profiles(instance_type)) <= enum
    assert instance_type in CLUSTER_TYPES


@pytest.mark.parametrize(("instance_type", "gpu_memory_gib"), [
    pytest.param("ml.p4d.24xlarge", 40, id="a100-40gb"),
    pytest.param("ml.p5.48xlarge", 80, id="h100"),
    pytest.param("ml.p5en.48xlarge", 141, id="h200"),
])
def test_the_largest_profile_is_the_whole_gpu(instance_type: str, gpu_memory_gib: int) -> None:
    # NVIDIA: the 7g profile spans the GPU (all compute and memory slices), one per GPU, and its
    # name carries the GPU's memory (7g.40gb on A100-40GB, 7g.80gb on H100, 7g.141gb on H200).
    whole = [p for p in partitions.profiles(instance_type).values() if p.compute_slices == 7]

    assert [(p.name, p.memory_slices, p.per_gpu) for p in whole] == [(f"mig-7g.{gpu_memory_gib}gb", 8, 1)]


@pytest.mark.parametrize(("profile", "per_gpu"), [
    pytest.param("mig-1g.10gb", 7, id="1g-small"), pytest.param("mig-1g.20gb", 4, id="1g-large"),
    pytest.param("mig-2g.20gb", 3, id="2g"), pytest.param("mig-3g.40gb", 2, id="3g"),
    pytest.param("mig-4g.40gb", 1, id="4g"),
])
def test_h100_instances_per_gpu_are_nvidias(profile: str, per_gpu: int) -> None:
    # NVIDIA MIG user guide, H100 MIG profiles: "Number of Instances Available" 7, 4, 3, 2, 1.
    found = partitions.profile("ml.p5.48xlarge", profile)

    assert found is not None and found.per_gpu == per_gpu
