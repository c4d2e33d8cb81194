"""vCPUs and memory (GiB) per HyperPod instance type: what a compute quota given in vCPU or
MemoryInGiB is measured against (`ComputeQuotaResourceConfig.VCpu` / `.MemoryInGiB`).

The figures are Amazon EC2's (`DescribeInstanceTypes`: `VCpuInfo.DefaultVCpus`,
`MemoryInfo.SizeInMiB` / 1024) for the EC2 type under each `ml.` type of botocore's SageMaker
`ClusterInstanceType` enum, as moto 5.2's copy of that catalogue carries them; a test checks the
table against it entry by entry (tests/validation/test_instance_specs.py). `ml.p6e-gb200.36xlarge`
is not in that catalogue, so it is not here: a vCPU or memory quota on it is not checked against
the cluster's capacity.
Accelerators per instance are `hypergov.model.accelerators`' (one source per fact).
"""

from __future__ import annotations

from typing import NamedTuple


class InstanceSpec(NamedTuple):
    vcpu: int
    memory_gib: float


_BY_TYPE: dict[str, tuple[int, float]] = {
    "ml.c5.12xlarge": (48, 96), "ml.c5.18xlarge": (72, 144), "ml.c5.24xlarge": (96, 192),
    "ml.c5.2xlarge": (8, 16), "ml.c5.4xlarge": (16, 32), "ml.c5.9xlarge": (36, 72),
    "ml.c5.large": (2, 4), "ml.c5.xlarge": (4, 8), "ml.c5n.18xlarge": (72, 192),
    "ml.c5n.2xlarge": (8, 21), "ml.c5n.4xlarge": (16, 42), "ml.c5n.9xlarge": (36, 96),
    "ml.c5n.large": (2, 5.25), "ml.c6a.12xlarge": (48, 96), "ml.c6a.16xlarge": (64, 128),
    "ml.c6a.24xlarge": (96, 192), "ml.c6a.2xlarge": (8, 16), "ml.c6a.32xlarge": (128, 256),
    "ml.c6a.48xlarge": (192, 384), "ml.c6a.4xlarge": (16, 32), "ml.c6a.8xlarge": (32, 64),
    "ml.c6a.large": (2, 4), "ml.c6a.xlarge": (4, 8), "ml.c6g.12xlarge": (48, 96),
    "ml.c6g.16xlarge": (64, 128), "ml.c6g.2xlarge": (8, 16), "ml.c6g.4xlarge": (16, 32),
    "ml.c6g.8xlarge": (32, 64), "ml.c6g.large": (2, 4), "ml.c6g.medium": (1, 2),
    "ml.c6g.xlarge": (4, 8), "ml.c6i.12xlarge": (48, 96), "ml.c6i.16xlarge": (64, 128),
    "ml.c6i.24xlarge": (96, 192), "ml.c6i.2xlarge": (8, 16), "ml.c6i.32xlarge": (128, 256),
    "ml.c6i.4xlarge": (16, 32), "ml.c6i.8xlarge": (32, 64), "ml.c6i.large": (2, 4),
    "ml.c6i.xlarge": (4, 8), "ml.c7g.12xlarge": (48, 96), "ml.c7g.16xlarge": (64, 128),
    "ml.c7g.2xlarge": (8, 16), "ml.c7g.4xlarge": (16, 32), "ml.c7g.8xlarge": (32, 64),
    "ml.c7g.large": (2, 4), "ml.c7g.medium": (1, 2), "ml.c7g.xlarge": (4, 8),
    "ml.c8a.16xlarge": (64, 128), "ml.c8g.12xlarge": (48, 96), "ml.c8g.16xlarge": (64, 128),
    "ml.c8g.24xlarge": (96, 192), "ml.c8g.2xlarge": (8, 16), "ml.c8g.48xlarge": (192, 384),
    "ml.c8g.4xlarge": (16, 32), "ml.c8g.8xlarge": (32, 64), "ml.c8g.large": (2, 4),
    "ml.c8g.medium": (1, 2), "ml.c8g.xlarge": (4, 8), "ml.g4dn.12xlarge": (48, 192),
    "ml.g4dn.16xlarge": (64, 256), "ml.g4dn.2xlarge": (8, 32), "ml.g4dn.4xlarge": (16, 64),
    "ml.g4dn.8xlarge": (32, 128), "ml.g4dn.xlarge": (4, 16), "ml.g5.12xlarge": (48, 192),
    "ml.g5.16xlarge": (64, 256), "ml.g5.24xlarge": (96, 384), "ml.g5.2xlarge": (8, 32),
    "ml.g5.48xlarge": (192, 768), "ml.g5.4xlarge": (16, 64), "ml.g5.8xlarge": (32, 128),
    "ml.g5.xlarge": (4, 16), "ml.g6.12xlarge": (48, 192), "ml.g6.16xlarge": (64, 256),
    "ml.g6.24xlarge": (96, 384), "ml.g6.2xlarge": (8, 32), "ml.g6.48xlarge": (192, 768),
    "ml.g6.4xlarge": (16, 64), "ml.g6.8xlarge": (32, 128), "ml.g6.xlarge": (4, 16),
    "ml.g6e.12xlarge": (48, 384), "ml.g6e.16xlarge": (64, 512), "ml.g6e.24xlarge": (96, 768),
    "ml.g6e.2xlarge": (8, 64), "ml.g6e.48xlarge": (192, 1536), "ml.g6e.4xlarge": (16, 128),
    "ml.g6e.8xlarge": (32, 256), "ml.g6e.xlarge": (4, 32), "ml.g7.12xlarge": (48, 192),
    "ml.g7.24xlarge": (96, 384), "ml.g7.2xlarge": (8, 32), "ml.g7.48xlarge": (192, 768),
    "ml.g7.4xlarge": (16, 64), "ml.g7.8xlarge": (32, 128), "ml.g7e.12xlarge": (48, 512),
    "ml.g7e.24xlarge": (96, 1024), "ml.g7e.2xlarge": (8, 64), "ml.g7e.48xlarge": (192, 2048),
    "ml.g7e.4xlarge": (16, 128), "ml.g7e.8xlarge": (32, 256), "ml.gr6.4xlarge": (16, 128),
    "ml.gr6.8xlarge": (32, 256), "ml.i3en.12xlarge": (48, 384), "ml.i3en.24xlarge": (96, 768),
    "ml.i3en.2xlarge": (8, 64), "ml.i3en.3xlarge": (12, 96), "ml.i3en.6xlarge": (24, 192),
    "ml.i3en.large": (2, 16), "ml.i3en.xlarge": (4, 32), "ml.m5.12xlarge": (48, 192),
    "ml.m5.16xlarge": (64, 256), "ml.m5.24xlarge": (96, 384), "ml.m5.2xlarge": (8, 32),
    "ml.m5.4xlarge": (16, 64), "ml.m5.8xlarge": (32, 128), "ml.m5.large": (2, 8),
    "ml.m5.xlarge": (4, 16), "ml.m6a.12xlarge": (48, 192), "ml.m6a.16xlarge": (64, 256),
    "ml.m6a.24xlarge": (96, 384), "ml.m6a.2xlarge": (8, 32), "ml.m6a.32xlarge": (128, 512),
    "ml.m6a.48xlarge": (192, 768), "ml.m6a.4xlarge": (16, 64), "ml.m6a.8xlarge": (32, 128),
    "ml.m6a.large": (2, 8), "ml.m6a.xlarge": (4, 16), "ml.m6g.12xlarge": (48, 192),
    "ml.m6g.16xlarge": (64, 256), "ml.m6g.2xlarge": (8, 32), "ml.m6g.4xlarge": (16, 64),
    "ml.m6g.8xlarge": (32, 128), "ml.m6g.large": (2, 8), "ml.m6g.medium": (1, 4),
    "ml.m6g.xlarge": (4, 16), "ml.m6i.12xlarge": (48, 192), "ml.m6i.16xlarge": (64, 256),
    "ml.m6i.24xlarge": (96, 384), "ml.m6i.2xlarge": (8, 32), "ml.m6i.32xlarge": (128, 512),
    "ml.m6i.4xlarge": (16, 64), "ml.m6i.8xlarge": (32, 128), "ml.m6i.large": (2, 8),
    "ml.m6i.xlarge": (4, 16), "ml.m7g.12xlarge": (48, 192), "ml.m7g.16xlarge": (64, 256),
    "ml.m7g.2xlarge": (8, 32), "ml.m7g.4xlarge": (16, 64), "ml.m7g.8xlarge": (32, 128),
    "ml.m7g.large": (2, 8), "ml.m7g.medium": (1, 4), "ml.m7g.xlarge": (4, 16),
    "ml.m7i.12xlarge": (48, 192), "ml.m7i.16xlarge": (64, 256), "ml.m7i.24xlarge": (96, 384),
    "ml.m7i.2xlarge": (8, 32), "ml.m7i.48xlarge": (192, 768), "ml.m7i.4xlarge": (16, 64),
    "ml.m7i.8xlarge": (32, 128), "ml.m7i.large": (2, 8), "ml.m7i.xlarge": (4, 16),
    "ml.m8a.16xlarge": (64, 256), "ml.m8g.12xlarge": (48, 192), "ml.m8g.16xlarge": (64, 256),
    "ml.m8g.24xlarge": (96, 384), "ml.m8g.2xlarge": (8, 32), "ml.m8g.48xlarge": (192, 768),
    "ml.m8g.4xlarge": (16, 64), "ml.m8g.8xlarge": (32, 128), "ml.m8g.large": (2, 8),
    "ml.m8g.medium": (1, 4), "ml.m8g.xlarge": (4, 16), "ml.p4d.24xlarge": (96, 1152),
    "ml.p4de.24xlarge": (96, 1152), "ml.p5.48xlarge": (192, 2048), "ml.p5.4xlarge": (16, 256),
    "ml.p5e.48xlarge": (192, 2048), "ml.p5en.48xlarge": (192, 2048), "ml.p6-b200.48xlarge": (192, 2048),
    "ml.p6-b300.48xlarge": (192, 4096), "ml.r5d.16xlarge": (64, 512), "ml.r6i.12xlarge": (48, 384),
    "ml.r6i.16xlarge": (64, 512), "ml.r6i.24xlarge": (96, 768), "ml.r6i.2xlarge": (8, 64),
    "ml.r6i.32xlarge": (128, 1024), "ml.r6i.4xlarge": (16, 128), "ml.r6i.8xlarge": (32, 256),
    "ml.r6i.large": (2, 16), "ml.r6i.xlarge": (4, 32), "ml.r7i.12xlarge": (48, 384),
    "ml.r7i.16xlarge": (64, 512), "ml.r7i.24xlarge": (96, 768), "ml.r7i.2xlarge": (8, 64),
    "ml.r7i.48xlarge": (192, 1536), "ml.r7i.4xlarge": (16, 128), "ml.r7i.8xlarge": (32, 256),
    "ml.r7i.large": (2, 16), "ml.r7i.xlarge": (4, 32), "ml.t3.2xlarge": (8, 32),
    "ml.t3.large": (2, 8), "ml.t3.medium": (2, 4), "ml.t3.xlarge": (4, 16),
    "ml.trn1.32xlarge": (128, 512), "ml.trn1n.32xlarge": (128, 512), "ml.trn2.3xlarge": (12, 128),
    "ml.trn2.48xlarge": (192, 2048),
}


def instance_spec(instance_type: str) -> InstanceSpec | None:
    """The vCPUs and memory of one instance of `instance_type`; None when the table lacks it."""
    found = _BY_TYPE.get(instance_type)
    return InstanceSpec(*found) if found else None


def known_instance_types() -> frozenset[str]:
    return frozenset(_BY_TYPE)
