"""The cluster layer (`config/clusters/<name>.yaml`): one HyperPod cluster, its EKS cluster, its
capacity per instance type, and its scheduler policy. The cluster's name is its file name."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hypergov.model.aws_limits import aws_range
from hypergov.model.common import (
    EksClusterName,
    HyperPodClusterArn,
    HyperPodClusterName,
    InstanceType,
    Principal,
    PriorityClassName,
    Region,
    StrictModel,
    Tags,
)

PriorityWeight = Annotated[int, aws_range("sagemaker", "PriorityWeight"), Field(description="scheduler weight, 0-100")]
InstanceCount = Annotated[int, Field(ge=0, le=100_000, description="number of instances")]
AcceleratorCount = Annotated[int, Field(ge=0, le=64, description="GPUs/accelerators per instance")]


class HyperPodRef(StrictModel):
    cluster_name: HyperPodClusterName
    arn: HyperPodClusterArn | None = None


class EksRef(StrictModel):
    cluster_name: EksClusterName


class InstanceCapacity(StrictModel):
    """How many instances of one type the cluster has. `accelerators_per_instance` overrides the
    built-in table (needed only for instance types hypergov does not know)."""

    instances: InstanceCount
    accelerators_per_instance: AcceleratorCount | None = None


class PriorityClass(StrictModel):
    name: PriorityClassName
    weight: PriorityWeight


class SchedulerPolicy(StrictModel):
    """HyperPod task governance's cluster scheduler config (or Kueue's, in plain-EKS mode)."""

    priority_classes: list[PriorityClass] = Field(min_length=1, max_length=10)
    fair_share: bool = True
    idle_resource_sharing: bool = True


class Cluster(StrictModel):
    account: str = Field(description="name of an account in org.yaml")
    region: Region | None = Field(default=None, description="defaults to the org's home_region")
    owner: Principal
    hyperpod: HyperPodRef
    eks: EksRef
    task_governance: bool = Field(default=True, description=(
        "true: HyperPod task governance owns Kueue (compute quotas + scheduler config); "
        "false: plain-EKS mode, hypergov declares Kueue queues itself"))
    capacity: dict[InstanceType, InstanceCapacity] = Field(min_length=1)
    scheduler: SchedulerPolicy
    tags: Tags = Field(default_factory=dict)

    def priority_class_names(self) -> set[str]:
        return {pc.name for pc in self.scheduler.priority_classes}
