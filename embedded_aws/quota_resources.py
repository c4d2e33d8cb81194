"""What SageMaker checks and fills in a compute quota's resources beyond the service model:
instance types the cluster has, each once; MIG profiles the instance type offers; borrow limits
only where the team borrows; and the amounts it derives by ratio.

The derivation follows the API reference of `ComputeQuotaResourceConfig`: given accelerators
only, "SageMaker AI automatically allocates ratio-based values for [vCPU and MemoryInGiB] based
on the number of accelerators you provide" (16 of 32 accelerators: ratio 0.5); given vCPU only,
memory by the same ratio and "Accelerators are set to 0"; given memory only, vCPU by ratio and
accelerators 0. The ratio is taken per instance (16 of 32 accelerators on 4 instances of 8 is
the same 0.5 of the type's vCPU and memory). Partitions are stored as given: AWS says vCPU and
memory follow "the accelerator partition count" but documents no formula, and Count (whole
instances) is stored as given as well. Only the guarantees (`ComputeQuotaResources`) are
completed; `AbsoluteBorrowLimits` caps are stored exactly as sent.
"""

from __future__ import annotations

import copy
from typing import Any

from embedded_aws.errors import sm_validation
from embedded_aws.sagemaker_clusters import HyperPodCluster
from hypergov.model import partitions
from hypergov.model.accelerators import accelerators_per_instance
from hypergov.model.instance_specs import instance_spec


def check_quota_config(config: dict[str, Any], cluster: HyperPodCluster) -> None:
    """Raise the ValidationException SageMaker answers for a config the model alone accepts."""
    available = {spec.get("InstanceType") for spec in cluster.groups.values()}
    sharing = config.get("ResourceSharingConfig", {})
    lists = {"ComputeQuotaResources": config.get("ComputeQuotaResources", []),
             "AbsoluteBorrowLimits": sharing.get("AbsoluteBorrowLimits", [])}
    for member, resources in lists.items():
        seen: set[str] = set()
        for resource in resources:
            itype = resource["InstanceType"]
            if itype not in available:
                raise sm_validation(f"Instance type {itype} is not in cluster {cluster.name} "
                                    f"(it has {', '.join(sorted(t for t in available if t))}).")
            if itype in seen:
                raise sm_validation(f"Instance type {itype} appears more than once in {member}.")
            seen.add(itype)
            _check_partition(resource)
    for key in ("BorrowLimit", "AbsoluteBorrowLimits"):
        if key in sharing and sharing.get("Strategy") != "LendAndBorrow":
            raise sm_validation(f"{key} is only allowed with the LendAndBorrow resource sharing strategy.")


def _check_partition(resource: dict[str, Any]) -> None:
    partition = resource.get("AcceleratorPartition")
    if partition is None:
        return
    itype, profile = resource["InstanceType"], partition["Type"]
    offered = partitions.profiles(itype)
    if not offered:
        raise sm_validation(f"Instance type {itype} does not support accelerator partitions.")
    if profile not in offered:
        raise sm_validation(f"Accelerator partition type {profile} is not supported on instance type {itype} "
                            f"(supported: {', '.join(offered)}).")
    if "Accelerators" in resource:
        raise sm_validation(f"Give either Accelerators or AcceleratorPartition for instance type {itype}, not both.")


def completed(config: dict[str, Any]) -> dict[str, Any]:
    """The config as SageMaker stores it: each guarantee with its ratio-derived amounts."""
    done = copy.deepcopy(config)
    for resource in done.get("ComputeQuotaResources", []):
        _derive(resource)
    return done


def _derive(resource: dict[str, Any]) -> None:
    spec = instance_spec(resource["InstanceType"])
    per_accelerator = accelerators_per_instance(resource["InstanceType"]) or 0
    if spec is None or "Count" in resource or "AcceleratorPartition" in resource:
        return
    given = {k for k in ("Accelerators", "VCpu", "MemoryInGiB") if k in resource}
    if given == {"Accelerators"} and per_accelerator:
        ratio = resource["Accelerators"] / per_accelerator
        resource["VCpu"], resource["MemoryInGiB"] = ratio * spec.vcpu, ratio * spec.memory_gib
    elif given == {"VCpu"}:
        resource["MemoryInGiB"] = resource["VCpu"] / spec.vcpu * spec.memory_gib
        resource["Accelerators"] = 0
    elif given == {"MemoryInGiB"}:
        resource["VCpu"] = resource["MemoryInGiB"] / spec.memory_gib * spec.vcpu
        resource["Accelerators"] = 0
