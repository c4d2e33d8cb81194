"""A HyperPod cluster declared in the tree (`hyperpod.instance_groups` of a cluster file): what
CreateCluster / UpdateCluster take, bounded as botocore's sagemaker model and the API reference
say. Only the fields hypergov governs are modelled; the driver turns them into the request
(`engines.hyperpod.cluster_request`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from hypergov.model.aws_limits import (
    GROUP_INSTANCE_COUNT,
    GROUP_THREADS_PER_CORE,
    GROUP_VOLUME_GB,
    aws_str,
    limit_range,
)
from hypergov.model.common import InstanceType, StrictModel

InstanceGroupName = Annotated[str, aws_str("sagemaker", "ClusterInstanceGroupName"),
                              Field(description="the instance group's name, unique in its cluster")]
GroupInstanceCount = Annotated[int, limit_range(GROUP_INSTANCE_COUNT),
                               Field(description="instances HyperPod keeps in the group")]
S3Uri = Annotated[str, aws_str("sagemaker", "S3Uri"), Field(description="s3:// or https:// URI")]
LifecycleScript = Annotated[str, aws_str("sagemaker", "ClusterLifeCycleConfigFileName"),
                            Field(description="the script under source_s3_uri run when a node is created")]
ExecutionRole = Annotated[str, aws_str("sagemaker", "RoleArn"),
                          Field(description="the IAM role the group's instances run as")]
NodeRecovery = Literal["Automatic", "None"]  # botocore: sagemaker ClusterNodeRecovery


class LifecycleConfig(StrictModel):
    source_s3_uri: S3Uri
    on_create: LifecycleScript


class InstanceGroup(StrictModel):
    """One `ClusterInstanceGroupSpecification`. Its instance type cannot change once created
    (AWS: create a new group instead), so a changed type is a new group in the plan."""

    name: InstanceGroupName
    instance_type: InstanceType
    instance_count: GroupInstanceCount
    min_count: GroupInstanceCount | None = Field(default=None, description=(
        "MinInstanceCount: the fewest instances the group may be created with"))
    lifecycle_config: LifecycleConfig
    execution_role: ExecutionRole
    threads_per_core: Annotated[int, limit_range(GROUP_THREADS_PER_CORE)] | None = Field(
        default=None, description="1 (hyperthreading off) or 2; HyperPod's default when left out")
    volume_size_gb: Annotated[int, limit_range(GROUP_VOLUME_GB)] | None = Field(
        default=None, description="an extra EBS volume per instance (InstanceStorageConfigs), in GB")


def derived_capacity(groups: Sequence[InstanceGroup]) -> dict[str, int]:
    """Instances per instance type: the cluster's capacity when it declares its groups."""
    found: dict[str, int] = {}
    for group in groups:
        found[group.instance_type] = found.get(group.instance_type, 0) + group.instance_count
    return found


def raw_derived_capacity(groups: Any) -> dict[str, dict[str, int]] | None:
    """The same, from a cluster file's raw `hyperpod.instance_groups` (before validation), as the
    file's `capacity` mapping; None when the groups are not well-typed yet (their own errors report it)."""
    if not isinstance(groups, list) or not all(
            isinstance(g, Mapping) and isinstance(g.get("instance_type"), str)
            and type(g.get("instance_count")) is int for g in groups):
        return None
    found: dict[str, int] = {}
    for g in groups:
        found[g["instance_type"]] = found.get(g["instance_type"], 0) + g["instance_count"]
    return {itype: {"instances": count} for itype, count in found.items()}
