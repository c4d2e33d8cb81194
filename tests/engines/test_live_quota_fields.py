"""Drift of the newer quota fields, against the embedded endpoint (real HTTP, real boto3): a tree
whose quotas give absolute borrow limits, accelerators and MIG partitions is applied through the
HyperPod driver, then scanned as `hypergov drift` scans (list calls, `engines.live.hyperpod_read`).

- Untouched, it scans clean, although SageMaker stored more than was sent (vCPU and memory derived
  by ratio from an accelerator count: AWS's documented behaviour, which the endpoint follows).
- A changed absolute borrow limit, partition count or idle-resource sharing is `changed`, with the
  attribute path and both values; absolute limits added out of band are a change too, and the
  driver plans the update that removes them.
"""

from __future__ import annotations

from typing import Any

import pytest

from embedded_aws import EmbeddedAws, seed_tree_clusters
from engines.hyperpod import driver
from engines.live import hyperpod_read
from engines.live.hyperpod import GovernedCluster, governed_clusters
from engines.live.items import AttributeDrift, DriftItem
from engines.live.runner import CallCounter
from stacks.spec import plan_stacks
from tests.quota_fields_tree import tree_with_new_fields


@pytest.fixture(scope="module")
def applied(aws: EmbeddedAws) -> tuple[GovernedCluster, Any]:
    """gpu-west's scheduler config and quotas created through the driver, as an apply does."""
    aws.reset()
    tree = tree_with_new_fields()
    seed_tree_clusters(tree, aws)
    (cluster,) = governed_clusters(tree, plan_stacks(tree))
    client = aws.client("sagemaker", account=cluster.account, region=cluster.region)
    desired = [(driver.SCHEDULER_CONFIG, cluster.scheduler_config), *((driver.COMPUTE_QUOTA, q)
                                                                        for q in cluster.quotas.values())]
    for kind, request in desired:
        change = driver.plan_change(kind, desired=request, desired_tags={}, observed=None)
        driver.apply_change(client, kind, change=change, desired=request, desired_tags={}, observed=None)
    return cluster, client


def scan(cluster: GovernedCluster, client: Any) -> list[DriftItem]:
    return hyperpod_read.scan_cluster(client, cluster, CallCounter())


def live_quota(client: Any, cluster: GovernedCluster, name: str) -> dict[str, Any]:
    (summary,) = [q for q in client.list_compute_quotas(ClusterArn=cluster.arn)["ComputeQuotaSummaries"]
                  if q["Name"] == name]
    found: dict[str, Any] = client.describe_compute_quota(ComputeQuotaId=summary["ComputeQuotaId"])
    return found


def update_quota(client: Any, found: dict[str, Any], config: dict[str, Any]) -> None:
    client.update_compute_quota(ComputeQuotaId=found["ComputeQuotaId"], TargetVersion=found["ComputeQuotaVersion"],
                                ComputeQuotaConfig=config)


def test_the_applied_tree_scans_clean_although_sagemaker_filled_in_more(applied: tuple[GovernedCluster, Any]) -> None:
    cluster, client = applied
    vision = live_quota(client, cluster, "vision-on-gpu-west")["ComputeQuotaConfig"]

    assert scan(cluster, client) == []
    # 8 of 4 GPUs per g5.12xlarge: ratio 2 of EC2's 48 vCPUs and 192 GiB, filled in by SageMaker
    assert vision["ComputeQuotaResources"][0] == {"InstanceType": "ml.g5.12xlarge", "Accelerators": 8,
                                                  "VCpu": 96.0, "MemoryInGiB": 384.0}


def test_a_changed_absolute_limit_is_changed_at_its_path(applied: tuple[GovernedCluster, Any]) -> None:
    cluster, client = applied
    found = live_quota(client, cluster, "vision-on-gpu-west")
    config = found["ComputeQuotaConfig"]
    config["ResourceSharingConfig"]["AbsoluteBorrowLimits"] = [
        {"InstanceType": "ml.g5.12xlarge", "Count": 1}, {"InstanceType": "ml.p5.48xlarge", "Accelerators": 24}]
    update_quota(client, found, config)

    (item,) = scan(cluster, client)

    assert (item.kind, item.address) == ("changed", "hyperpod:ComputeQuota:vision-on-gpu-west")
    # limits sorted by instance type: the p5 cap is the second
    assert item.attributes == (AttributeDrift(
        "ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits[1].Accelerators", 16, 24),)
    restore = driver.plan_change(driver.COMPUTE_QUOTA, desired=cluster.quotas["vision-on-gpu-west"],
                                 desired_tags={}, observed=driver.describe(client, driver.COMPUTE_QUOTA,
                                                                           found["ComputeQuotaId"]))
    driver.apply_change(client, driver.COMPUTE_QUOTA, change=restore, desired=cluster.quotas["vision-on-gpu-west"],
                        desired_tags={}, observed=driver.describe(client, driver.COMPUTE_QUOTA,
                                                                  found["ComputeQuotaId"]))
    assert scan(cluster, client) == []


def test_a_changed_partition_count_is_changed_at_its_path(applied: tuple[GovernedCluster, Any]) -> None:
    cluster, client = applied
    found = live_quota(client, cluster, "recsys-on-gpu-west")
    config = found["ComputeQuotaConfig"]
    config["ComputeQuotaResources"][1]["AcceleratorPartition"]["Count"] = 21
    update_quota(client, found, config)

    (item,) = scan(cluster, client)

    assert item.attributes == (AttributeDrift(
        "ComputeQuotaConfig.ComputeQuotaResources[1].AcceleratorPartition.Count", 14, 21),)
    config["ComputeQuotaResources"][1]["AcceleratorPartition"]["Count"] = 14
    update_quota(client, live_quota(client, cluster, "recsys-on-gpu-west"), config)


def test_idle_resource_sharing_switched_off_is_changed(applied: tuple[GovernedCluster, Any]) -> None:
    cluster, client = applied
    (summary,) = client.list_cluster_scheduler_configs(ClusterArn=cluster.arn)["ClusterSchedulerConfigSummaries"]
    config_id = summary["ClusterSchedulerConfigId"]
    live = client.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)
    switched = {**live["SchedulerConfig"], "IdleResourceSharing": "Disabled"}
    client.update_cluster_scheduler_config(ClusterSchedulerConfigId=config_id, SchedulerConfig=switched,
                                           TargetVersion=live["ClusterSchedulerConfigVersion"])

    (item,) = scan(cluster, client)

    assert (item.address, item.attributes) == ("hyperpod:ClusterSchedulerConfig:gpu-west-scheduler", (
        AttributeDrift("SchedulerConfig.IdleResourceSharing", "Enabled", "Disabled"),))
    client.update_cluster_scheduler_config(ClusterSchedulerConfigId=config_id, SchedulerConfig=live["SchedulerConfig"],
                                           TargetVersion=live["ClusterSchedulerConfigVersion"] + 1)


def test_absolute_limits_added_out_of_band_are_a_change_the_driver_removes(
        applied: tuple[GovernedCluster, Any]) -> None:
    cluster, client = applied
    found = live_quota(client, cluster, "nlp-on-gpu-west")  # sharing Lend: the tree gives no limits
    config = found["ComputeQuotaConfig"]
    config["ResourceSharingConfig"] = {"Strategy": "LendAndBorrow",
                                       "AbsoluteBorrowLimits": [{"InstanceType": "ml.g5.12xlarge", "Count": 2}]}
    update_quota(client, found, config)

    items = scan(cluster, client)
    observed = driver.describe(client, driver.COMPUTE_QUOTA, found["ComputeQuotaId"])
    desired = cluster.quotas["nlp-on-gpu-west"]
    change = driver.plan_change(driver.COMPUTE_QUOTA, desired=desired, desired_tags={}, observed=observed)
    driver.apply_change(client, driver.COMPUTE_QUOTA, change=change, desired=desired, desired_tags={},
                        observed=observed)

    assert [i.attributes for i in items] == [(
        AttributeDrift("ComputeQuotaConfig.ResourceSharingConfig.Strategy", "Lend", "LendAndBorrow"),
        AttributeDrift("ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits", [],
                       [{"InstanceType": "ml.g5.12xlarge", "Count": 2}]))]
    assert change.action == "update"
    assert scan(cluster, client) == []
    assert "AbsoluteBorrowLimits" not in live_quota(client, cluster, "nlp-on-gpu-west")["ComputeQuotaConfig"][
        "ResourceSharingConfig"]
