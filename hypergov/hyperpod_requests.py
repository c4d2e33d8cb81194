"""The SageMaker HyperPod task-governance requests hypergov sends, in the API's own shape
(PascalCase keys, as in CreateClusterSchedulerConfig, CreateComputeQuota and CreateCluster): one spelling, built
here once, which the components declare, the engines send and the driver compares with live objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hypergov.model.project import QuotaAmount

if TYPE_CHECKING:
    from hypergov.model.cluster import Cluster
    from hypergov.model.instance_groups import InstanceGroup
    from hypergov.stack_views import EffectiveQuota


def scheduler_config_request(*, name: str, cluster_arn: str, priority_classes: Mapping[str, int],
                             fair_share: bool, idle_resource_sharing: bool, description: str = "") -> dict[str, Any]:
    """The CreateClusterSchedulerConfig request (without tags) for a cluster's scheduler policy."""
    request: dict[str, Any] = {
        "Name": name,
        "ClusterArn": cluster_arn,
        "SchedulerConfig": {
            "PriorityClasses": [{"Name": n, "Weight": w} for n, w in sorted(priority_classes.items())],
            "FairShare": "Enabled" if fair_share else "Disabled",
            "IdleResourceSharing": "Enabled" if idle_resource_sharing else "Disabled",
        },
    }
    if description:
        request["Description"] = description
    return request


def quota_resource(instance_type: str, amount: QuotaAmount) -> dict[str, Any]:
    """One `ComputeQuotaResourceConfig` (a guarantee in ComputeQuotaResources, or a cap in
    AbsoluteBorrowLimits): the instance type and the amounts given, nothing derived."""
    resource: dict[str, Any] = {"InstanceType": instance_type}
    if amount.instances is not None:
        resource["Count"] = amount.instances
    if amount.accelerators is not None:
        resource["Accelerators"] = amount.accelerators
    if amount.vcpu is not None:
        resource["VCpu"] = amount.vcpu
    if amount.memory_gib is not None:
        resource["MemoryInGiB"] = amount.memory_gib
    if amount.partition is not None:
        resource["AcceleratorPartition"] = {"Type": amount.partition.profile, "Count": amount.partition.count}
    return resource


def compute_quota_request(quota: EffectiveQuota, *, cluster_arn: str) -> dict[str, Any]:
    """The CreateComputeQuota request (without tags) of one team's effective quota on a cluster."""
    sharing: dict[str, Any] = {"Strategy": quota.sharing}
    if quota.borrow_limit_percent is not None:
        sharing["BorrowLimit"] = quota.borrow_limit_percent
    if quota.absolute_borrow_limits:
        sharing["AbsoluteBorrowLimits"] = [quota_resource(t, a) for t, a in quota.absolute_borrow_limits.items()]
    whole = {t: QuotaAmount(instances=c) for t, c in quota.instances.items()}
    guarantees = dict(sorted({**whole, **quota.resources}.items()))
    return {
        "Name": quota.name,
        "Description": f"hypergov: guaranteed capacity of team {quota.team} on {quota.cluster}",
        "ClusterArn": cluster_arn,
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": [quota_resource(t, a) for t, a in guarantees.items()],
            "ResourceSharingConfig": sharing,
            "PreemptTeamTasks": quota.preempt_team_tasks,
        },
        "ComputeQuotaTarget": {"TeamName": quota.team, "FairShareWeight": quota.fair_share_weight},
        "ActivationState": "Enabled",
    }


def instance_group_spec(group: InstanceGroup) -> dict[str, Any]:
    """One `ClusterInstanceGroupSpecification` of CreateCluster / UpdateCluster (UpdateCluster
    takes the whole specification of each group it changes)."""
    spec: dict[str, Any] = {
        "InstanceGroupName": group.name,
        "InstanceType": group.instance_type,
        "InstanceCount": group.instance_count,
        "LifeCycleConfig": {"SourceS3Uri": group.lifecycle_config.source_s3_uri,
                            "OnCreate": group.lifecycle_config.on_create},
        "ExecutionRole": group.execution_role,
    }
    if group.min_count is not None:
        spec["MinInstanceCount"] = group.min_count
    if group.threads_per_core is not None:
        spec["ThreadsPerCore"] = group.threads_per_core
    if group.volume_size_gb is not None:
        spec["InstanceStorageConfigs"] = [{"EbsVolumeConfig": {"VolumeSizeInGB": group.volume_size_gb}}]
    return spec


def create_cluster_request(cluster: Cluster, *, eks_cluster_arn: str) -> dict[str, Any]:
    """The CreateCluster request (without tags) of a cluster that declares its instance groups."""
    ref = cluster.hyperpod
    request: dict[str, Any] = {
        "ClusterName": ref.cluster_name,
        "InstanceGroups": [instance_group_spec(g) for g in ref.instance_groups or []],
        "Orchestrator": {"Eks": {"ClusterArn": eks_cluster_arn}},
    }
    if ref.node_recovery is not None:
        request["NodeRecovery"] = ref.node_recovery
    return request
