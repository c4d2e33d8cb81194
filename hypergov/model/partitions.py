"""Accelerator partitions (NVIDIA Multi-Instance GPU profiles) per HyperPod instance type: which
`AcceleratorPartition.Type` values a compute quota may give on an instance type, and how many
partitions of each one GPU can be split into. One table, one place.

Sources:
- Which instance types support GPU partitioning, and that the profiles depend on the instance
  type: AWS, "Using GPU partitions in Amazon SageMaker HyperPod",
  https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-gpu-partitioning.html
  (A100: ml.p4d.24xlarge; H100: ml.p5.48xlarge; H200: ml.p5e.48xlarge, ml.p5en.48xlarge; and the
  Blackwell types), and the API reference of `AcceleratorPartitionConfig.Type` ("The available
  profile types depend on the instance type"), whose enum (botocore's `MIGProfileType`) bounds
  every profile below (a test checks each one is in it).
- The profiles of each GPU, their compute and memory slices and how many fit on one GPU: NVIDIA,
  "Supported MIG Profiles", https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html
  (A100-40GB: 1g.5gb x7, 1g.10gb x4, 2g.10gb x3, 3g.20gb x2, 4g.20gb x1, 7g.40gb x1; the 80 GB,
  H100, H200, B200 and GB200 tables have the same layout with their memory sizes in the names).
  The GPU of each instance type is EC2's (DescribeInstanceTypes GpuInfo: p4d A100 40 GB, p4de
  A100 80 GB, p5 H100 80 GB, p5e/p5en H200 141 GB, p6-b200 B200 180 GB, p6e-gb200 GB200 186 GB).

`ml.p6-b300.48xlarge` (B300) is left out: its profiles (mig-1g.34gb ...) are not in the API's
`MIGProfileType` enum, so no compute quota can give them today.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

COMPUTE_SLICES = 7  # GPCs per MIG-capable GPU (NVIDIA: "up to seven" instances)
MEMORY_SLICES = 8  # memory slices per GPU (NVIDIA's fractions of memory are eighths)


class Profile(NamedTuple):
    """One MIG profile on one GPU model: its compute and memory slices and how many fit on a GPU."""

    name: str  # as the SageMaker API spells it: mig-<g>g.<memory>gb
    compute_slices: int
    memory_slices: int
    per_gpu: int


# NVIDIA's layout, the same on A100, H100, H200, B200 and GB200: (compute, memory slices, per GPU)
# of the small 1g, the large 1g, 2g, 3g, 4g and 7g profile.
_LAYOUT = ((1, 1, 7), (1, 2, 4), (2, 2, 3), (3, 4, 2), (4, 4, 1), (7, 8, 1))


def _gpu(*names: str) -> dict[str, Profile]:
    return {n: Profile(n, c, m, k) for n, (c, m, k) in zip(names, _LAYOUT, strict=True)}


_A100_40GB = _gpu("mig-1g.5gb", "mig-1g.10gb", "mig-2g.10gb", "mig-3g.20gb", "mig-4g.20gb", "mig-7g.40gb")
_80GB = _gpu("mig-1g.10gb", "mig-1g.20gb", "mig-2g.20gb", "mig-3g.40gb", "mig-4g.40gb", "mig-7g.80gb")
_H200 = _gpu("mig-1g.18gb", "mig-1g.35gb", "mig-2g.35gb", "mig-3g.71gb", "mig-4g.71gb", "mig-7g.141gb")
_B200 = _gpu("mig-1g.23gb", "mig-1g.45gb", "mig-2g.45gb", "mig-3g.90gb", "mig-4g.90gb", "mig-7g.180gb")
_GB200 = _gpu("mig-1g.23gb", "mig-1g.47gb", "mig-2g.47gb", "mig-3g.93gb", "mig-4g.93gb", "mig-7g.186gb")

PROFILES_BY_TYPE: dict[str, dict[str, Profile]] = {
    "ml.p4d.24xlarge": _A100_40GB,
    "ml.p4de.24xlarge": _80GB,  # A100 80 GB: NVIDIA's 80 GB names, as H100's
    "ml.p5.48xlarge": _80GB,
    "ml.p5e.48xlarge": _H200,
    "ml.p5en.48xlarge": _H200,
    "ml.p6-b200.48xlarge": _B200,
    "ml.p6e-gb200.36xlarge": _GB200,
}


def profiles(instance_type: str) -> dict[str, Profile]:
    """The MIG profiles one GPU of `instance_type` offers (empty: the type cannot be partitioned)."""
    return PROFILES_BY_TYPE.get(instance_type, {})


def profile(instance_type: str, name: str) -> Profile | None:
    return profiles(instance_type).get(name)


def gpu_share(found: Profile) -> Fraction:
    """The share of one GPU a partition takes, exactly: the larger of its compute and memory share
    (a 1g.10gb on H100 takes 1/7 of the compute, 1/8 of the memory: 1/7): other partitions can
    have neither the compute nor the memory slices it holds."""
    return max(Fraction(found.compute_slices, COMPUTE_SLICES), Fraction(found.memory_slices, MEMORY_SLICES))


def gpu_fraction(found: Profile) -> float:
    """`gpu_share` as a float (for display and GPU-equivalent totals)."""
    return float(gpu_share(found))
