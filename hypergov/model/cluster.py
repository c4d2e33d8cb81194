"""The cluster layer (`config/clusters/<name>.yaml`): one HyperPod cluster, its EKS cluster, its
capacity per instance type, and its scheduler policy. The cluster's name is its file name."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from hypergov.hyperpod_defaults import DEFAULT_FAIR_SHARE, DEFAULT_IDLE_RESOURCE_SHARING
from hypergov.model.accelerators import accelerators_per_instance
from hypergov.model.aws_limits import (
    INSTANCE_GROUPS,
    PRIORITY_CLASSES,
    PRIORITY_WEIGHT,
    limit_items,
    limit_range,
)
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
from hypergov.model.instance_groups import InstanceGroup, NodeRecovery, raw_derived_capacity

PriorityWeight = Annotated[int, limit_range(PRIORITY_WEIGHT),
                           Field(description="scheduler weight, 0 (lowest) to 100 (highest); required")]
InstanceCount = Annotated[int, Field(ge=0, le=100_000, description="number of instances")]
AcceleratorCount = Annotated[int, Field(ge=0, le=64, description="GPUs/accelerators per instance")]


class HyperPodRef(StrictModel):
    """The HyperPod cluster: referenced (its ARN copied from AWS), or declared with its instance
    groups and governed by hypergov (`managed`), possibly taken over from a live one (`adopt`)."""

    cluster_name: HyperPodClusterName
    arn: HyperPodClusterArn | None = None
    managed: bool = Field(default=False, description=(
        "true: hypergov creates the cluster from instance_groups and updates it; false: referenced only"))
    adopt: bool = Field(default=False, description=(
        "true: a live cluster of this name is taken over (the plan shows what changes); needs managed"))
    decommission: bool = Field(default=False, description=(
        "true: delete the scheduler config, the quotas and the cluster; refused while a project has quota here"))
    instance_groups: Annotated[list[InstanceGroup], limit_items(INSTANCE_GROUPS)] | None = Field(
        default=None, description="the cluster's instance groups (1-100); the capacity is derived from them")
    node_recovery: NodeRecovery | None = Field(default=None, description=(
        "Automatic or None; HyperPod's default (Automatic) when left out"))

    @model_validator(mode="after")
    def _managed_needs_groups(self) -> HyperPodRef:
        if (self.managed or self.adopt) and not self.instance_groups:
            raise ValueError("a managed (or adopted) cluster declares its instance_groups")
        if self.adopt and not self.managed:
            raise ValueError("adopt: true takes a cluster over to manage it: set managed: true as well")
        if self.instance_groups and not self.managed:
            raise ValueError("instance_groups are created and updated only with managed: true")
        names = [g.name for g in self.instance_groups or []]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"instance group names must be unique in a cluster; repeated: {', '.join(repeated)}")
        return self


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


class UnknownAccelerators(ValueError):
    """Neither the cluster file nor hypergov's table knows an instance type's accelerators."""


class Cluster(StrictModel):
    account: str = Field(description="name of an account in org.yaml")
    region: Region | None = Field(default=None, description="defaults to the org's home_region")
    owner: Principal
    hyperpod: HyperPodRef
    eks: EksRef
    task_governance: bool = Field(default=True, description=(
        "true: HyperPod task governance owns Kueue (compute quotas + scheduler config); "
        "false: plain-EKS mode, hypergov declares Kueue queues itself"))
    capacity: dict[InstanceType, InstanceCapacity] = Field(min_length=1, description=(
        "instances per type; derived from hyperpod.instance_groups when the cluster declares them"))
    scheduler: SchedulerPolicy
    tags: Tags = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _capacity_from_groups(cls, data: Any) -> Any:
        """One source for the capacity: a cluster declaring its groups has no hand-kept number."""
        if not isinstance(data, dict) or not isinstance(data.get("hyperpod"), dict):
            return data
        groups = data["hyperpod"].get("instance_groups")
        if groups is None:
            return data
        if "capacity" in data:
            raise ValueError("capacity is derived from hyperpod.instance_groups: remove the capacity mapping")
        derived = raw_derived_capacity(groups)
        return data if derived is None else {**data, "capacity": derived}

    @property
    def declares_groups(self) -> bool:
        return bool(self.hyperpod.instance_groups)

    def accelerators(self, instance_type: str) -> int | None:
        """GPUs (or Neuron devices) per instance of `instance_type`: the cluster's override, else the
        built-in table; None when neither knows the type."""
        capacity = self.capacity.get(instance_type)
        return accelerators_per_instance(instance_type, capacity.accelerators_per_instance if capacity else None)

    def known_accelerators(self, instance_type: str) -> int:
        """`accelerators`, or `UnknownAccelerators` saying how to give them."""
        per = self.accelerators(instance_type)
        if per is None:
            raise UnknownAccelerators(f"accelerators per instance of {instance_type} are unknown; set "
                                      f"capacity.{instance_type}.accelerators_per_instance in the cluster file")
        return per

    def priority_class_names(self) -> set[str]:
        return {pc.name for pc in self.scheduler.priority_classes}
