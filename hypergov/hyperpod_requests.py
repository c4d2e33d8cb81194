"""The SageMaker HyperPod task-governance requests hypergov sends, in the API's own shape
(PascalCase keys, as in CreateClusterSchedulerConfig and CreateComputeQuota): one spelling, built
here once, which the components declare, the engines send and the driver compares with live objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def compute_quota_request(quota: EffectiveQuota, *, cluster_arn: str) -> dict[str, Any]:
    """The CreateComputeQuota request (without tags) of one team's effective quota on a cluster."""
    sharing: dict[str, Any] = {"Strategy": quota.sharing}
    if quota.borrow_limit_percent is not None:
        sharing["BorrowLimit"] = quota.borrow_limit_percent
    return {
        "Name": quota.name,
        "Description": f"hypergov: guaranteed capacity of team {quota.team} on {quota.cluster}",
        "ClusterArn": cluster_arn,
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": [{"InstanceType": t, "Count": c} for t, c in quota.instances.items()],
            "ResourceSharingConfig": sharing,
            "PreemptTeamTasks": quota.preempt_team_tasks,
        },
        "ComputeQuotaTarget": {"TeamName": quota.team, "FairShareWeight": quota.fair_share_weight},
        "ActivationState": "Enabled",
    }
