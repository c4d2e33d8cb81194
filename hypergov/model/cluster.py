"""The cluster layer (`config/clusters/<name>.yaml`): one HyperPod cluster, its EKS cluster, its
capacity per instance type, and its scheduler policy. The cluster's name is its file name."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hypergov.hyperpod_defaults import DEFAULT_FAIR_SHARE, DEFAULT_IDLE_RESOURCE_SHARING
from hypergov.model.accelerators import accelerators_per_instance
from hypergov.model.aws_limits import PRIORITY_CLASSES, PRIORITY_WEIGHT, limit_items, limit_range
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

PriorityWeight = Annotated[int, limit_range(PRIORITY_WEIGHT),
                           Field(description="scheduler weight, 0 (lowest) to 100 (highest); required")]
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

    priority_classes: Annotated[list[PriorityClass], limit_items(PRIORITY_CLASSES)] = Field(
        description="1-10 priority classes (HyperPod allows 10)")
    fair_share: bool = Field(default=DEFAULT_FAIR_SHARE, description=(
        "true: idle compute is lent by fair-share weight, false: first come, first served; "
        "default true, HyperPod's default (FairShare Enabled)"))
    idle_resource_sharing: bool = Field(default=DEFAULT_IDLE_RESOURCE_SHARING, description=(
        "true: capacity no team is guaranteed can be borrowed; default true (AWS documents no default, "
        "so hypergov always writes it)"))


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

    def accelerators(self, instance_type: str) -> int | None:
        """GPUs (or Neuron devices) per instance of `instance_type`: the cluster's override, else the
        built-in table; None when neither knows the type."""
        capacity = self.capacity.get(instance_type)
        return accelerators_per_instance(instance_type, capacity.accelerators_per_instance if capacity else None)

    def priority_class_names(self) -> set[str]:
        return {pc.name for pc in self.scheduler.priority_classes}
