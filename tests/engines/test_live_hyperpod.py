"""The live HyperPod drift comparison (pure): desired requests from the tree's cluster views, live
objects shaped as SageMaker's ListComputeQuotas summaries and DescribeClusterSchedulerConfig
responses (botocore's output shapes), items as `hypergov drift --json` prints them.

Expected values are written by hand from the config files and the API's shapes."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from engines.hyperpod import driver
from engines.live.hyperpod import GovernedCluster, LiveObject, compare, governed_clusters
from engines.live.items import AttributeDrift, DriftItem
from stacks.spec import plan_stacks
from tests.example_tree import example_tree

ARN = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"
QUOTA: dict[str, Any] = {  # a CreateComputeQuota request as hypergov sends it
    "Name": "vision-on-gpu-west", "Description": "hypergov: guaranteed capacity of team vision on gpu-west",
    "ClusterArn": ARN,
    "ComputeQuotaConfig": {
        "ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 2},
                                  {"InstanceType": "ml.p5.48xlarge", "Count": 12}],
        "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
        "PreemptTeamTasks": "LowerPriority"},
    "ComputeQuotaTarget": {"TeamName": "vision", "FairShareWeight": 30},
    "ActivationState": "Enabled"}
SCHEDULER: dict[str, Any] = {
    "Name": "gpu-west-scheduler", "ClusterArn": ARN, "Description": "hypergov: scheduler policy of cluster gpu-west",
    "SchedulerConfig": {"PriorityClasses": [{"Name": "experimentation", "Weight": 20},
                                            {"Name": "inference", "Weight": 100},
                                            {"Name": "training", "Weight": 60}],
                        "FairShare": "Enabled", "IdleResourceSharing": "Enabled"}}
CLUSTER = GovernedCluster(stack="cluster-gpu-west", cluster="gpu-west", arn=ARN, scheduler_config=SCHEDULER,
                          quotas={"vision-on-gpu-west": QUOTA}, owned_quota_suffix="-on-gpu-west")
LISTED = frozenset({"ComputeQuotaConfig", "ComputeQuotaTarget", "ActivationState"})  # ComputeQuotaSummary's
DESCRIBED = frozenset({"SchedulerConfig", "Description"})
WHEN = datetime(2025, 3, 4, 10, 30, tzinfo=UTC)
CONSOLE = {"IamIdentity": {"Arn": "arn:aws:sts::111122223333:assumed-role/vision-lead/alice", "PrincipalId": "AROA1"}}


def quota_summary(**changes: Any) -> dict[str, Any]:
    """A ComputeQuotaSummary as SageMaker returns it: the resources in its own order, vCPUs and
    memory filled in beside each count, its own id, version, status and times."""
    summary: dict[str, Any] = {
        "ComputeQuotaArn": "arn:aws:sagemaker:us-west-2:111122223333:compute-quota/q1", "ComputeQuotaId": "q1",
        "Name": "vision-on-gpu-west", "ComputeQuotaVersion": 1, "Status": "Created", "ClusterArn": ARN,
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 12, "VCpu": 2304.0,
                                       "MemoryInGiB": 24576.0},
                                      {"InstanceType": "ml.g5.12xlarge", "Count": 2, "VCpu": 96.0,
                                       "MemoryInGiB": 384.0}],
            "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
            "PreemptTeamTasks": "LowerPriority"},
        "ComputeQuotaTarget": {"TeamName": "vision", "FairShareWeight": 30}, "ActivationState": "Enabled",
        "CreationTime": WHEN, "LastModifiedTime": WHEN}
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = summary
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        target[leaf] = value
    return summary


def scheduler_described(**config: Any) -> dict[str, Any]:
    """A DescribeClusterSchedulerConfig response (the service's own fields beside the request's)."""
    return {"ClusterSchedulerConfigArn": "arn:aws:sagemaker:us-west-2:111122223333:cluster-scheduler-config/s1",
            "ClusterSchedulerConfigId": "s1", "Name": "gpu-west-scheduler", "ClusterSchedulerConfigVersion": 1,
            "Status": "Created", "StatusDetails": {"PriorityClasses": "Created"}, "ClusterArn": ARN,
            "SchedulerConfig": {**copy.deepcopy(SCHEDULER["SchedulerConfig"]), **config},
            "Description": SCHEDULER["Description"], "CreationTime": WHEN, "LastModifiedTime": WHEN,
            "CreatedBy": CONSOLE, "LastModifiedBy": CONSOLE}


def live_quota(summary: dict[str, Any]) -> LiveObject:
    return LiveObject.read(driver.COMPUTE_QUOTA, summary, LISTED)


def live_scheduler(response: dict[str, Any] | None = None) -> list[LiveObject]:
    return [LiveObject.read(driver.SCHEDULER_CONFIG, response or scheduler_described(), DESCRIBED)]


def test_the_example_trees_governed_clusters_are_its_task_governance_clusters() -> None:
    tree = example_tree()
    (gpu_west,) = governed_clusters(tree, plan_stacks(tree))  # trn-east is plain EKS: no HyperPod objects
    assert (gpu_west.stack, gpu_west.arn, gpu_west.account, gpu_west.region) == (
        "cluster-gpu-west", ARN, "111122223333", "us-west-2")
    assert sorted(gpu_west.quotas) == ["nlp-on-gpu-west", "recsys-on-gpu-west", "speech-on-gpu-west",
                                       "vision-on-gpu-west"]
    vision = gpu_west.quotas["vision-on-gpu-west"]  # config/projects/vision.yaml
    assert vision["ComputeQuotaConfig"]["ComputeQuotaResources"] == [{"InstanceType": "ml.p5.48xlarge", "Count": 12}]
    assert vision["ComputeQuotaConfig"]["ResourceSharingConfig"] == {"Strategy": "LendAndBorrow", "BorrowLimit": 50}
    assert vision["ComputeQuotaTarget"] == {"TeamName": "vision", "FairShareWeight": 30}
    assert gpu_west.scheduler_config == SCHEDULER  # config/clusters/gpu-west.yaml, classes by name


def test_what_sagemaker_fills_in_or_reorders_is_no_drift() -> None:
    assert compare(CLUSTER, quotas=[live_quota(quota_summary())], scheduler_configs=live_scheduler()) == []


def test_a_summary_cannot_show_a_changed_description_so_it_is_not_compared() -> None:
    listed = live_quota({**quota_summary(), "Description": "edited in the console"})
    assert "Description" not in listed.fields
    assert compare(CLUSTER, quotas=[listed], scheduler_configs=live_scheduler()) == []


def test_count_borrow_limit_and_fair_share_weight_changed_by_hand() -> None:
    summary = quota_summary(ComputeQuotaConfig__ComputeQuotaResources__0__Count=20,
                            ComputeQuotaConfig__ResourceSharingConfig__BorrowLimit=100,
                            ComputeQuotaTarget__FairShareWeight=90)
    (item,) = compare(CLUSTER, quotas=[live_quota(summary)], scheduler_configs=live_scheduler())
    assert item == DriftItem(
        kind="changed", stack="cluster-gpu-west", address="hyperpod:ComputeQuota:vision-on-gpu-west",
        type="sagemaker:ComputeQuota", account="111122223333", region="us-west-2",
        fix="hypergov apply --stack cluster-gpu-west restores it", cluster="gpu-west",
        attributes=(  # resources sorted by instance type: p5 is the second
            AttributeDrift("ComputeQuotaConfig.ComputeQuotaResources[1].Count", 12, 20),
            AttributeDrift("ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", 50, 100),
            AttributeDrift("ComputeQuotaTarget.FairShareWeight", 30, 90)),
        changed_by=None, changed_at="2025-03-04T10:30:00+00:00")


def test_sharing_switched_off_shows_the_strategy_and_the_vanished_limit() -> None:
    summary = quota_summary()
    summary["ComputeQuotaConfig"]["ResourceSharingConfig"] = {"Strategy": "DontLend"}
    (item,) = compare(CLUSTER, quotas=[live_quota(summary)], scheduler_configs=live_scheduler())
    assert item.attributes == (  # in the request's own order
        AttributeDrift("ComputeQuotaConfig.ResourceSharingConfig.Strategy", "LendAndBorrow", "DontLend"),
        AttributeDrift("ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", 50, None))


def test_priority_weights_changed_name_who_and_when() -> None:
    classes = [{"Name": "training", "Weight": 90}, {"Name": "inference", "Weight": 100},
               {"Name": "experimentation", "Weight": 20}]
    (item,) = compare(CLUSTER, quotas=[live_quota(quota_summary())],
                      scheduler_configs=live_scheduler(scheduler_described(PriorityClasses=classes)))
    assert (item.kind, item.address, item.type) == (
        "changed", "hyperpod:ClusterSchedulerConfig:gpu-west-scheduler", "sagemaker:ClusterSchedulerConfig")
    assert item.attributes == (AttributeDrift("SchedulerConfig.PriorityClasses[2].Weight", 60, 90),)
    assert (item.changed_by, item.changed_at) == (CONSOLE["IamIdentity"]["Arn"], "2025-03-04T10:30:00+00:00")


@pytest.mark.parametrize("status", [None, "Deleting", "Deleted"])
def test_a_declared_quota_not_live_is_missing(status: str | None) -> None:
    quotas = [] if status is None else [live_quota(quota_summary(Status=status))]
    (item,) = compare(CLUSTER, quotas=quotas, scheduler_configs=live_scheduler())
    assert (item.kind, item.address, item.attributes, item.fix) == (
        "missing", "hyperpod:ComputeQuota:vision-on-gpu-west", (), "hypergov apply --stack cluster-gpu-west creates it")


def test_a_quota_for_a_team_the_tree_does_not_know_is_unmanaged() -> None:
    stranger = quota_summary(Name="interns", ComputeQuotaId="q9", ComputeQuotaTarget__TeamName="interns")
    items = compare(CLUSTER, quotas=[live_quota(quota_summary()), live_quota(stranger)],
                    scheduler_configs=live_scheduler())
    (item,) = items
    assert (item.kind, item.address, item.fix) == ("unmanaged", "hyperpod:ComputeQuota:interns",
                                                   "delete it, or give team interns quota on gpu-west in the tree")
    assert AttributeDrift("ComputeQuotaTarget", None, {"TeamName": "interns", "FairShareWeight": 30}) in item.attributes


def test_unmanaged_quotas_say_what_removes_them() -> None:
    left = quota_summary(Name="nlp-on-gpu-west", ComputeQuotaId="q2", ComputeQuotaTarget__TeamName="nlp")
    beside = quota_summary(Name="vision-extra", ComputeQuotaId="q3")  # vision's quota, not under hypergov's name
    items = {i.address: i for i in compare(CLUSTER, quotas=[live_quota(left), live_quota(beside)],
                                           scheduler_configs=live_scheduler())}
    assert items["hyperpod:ComputeQuota:nlp-on-gpu-west"].fix == (
        "hypergov apply --stack cluster-gpu-west deletes it (named as hypergov names quotas; no project declares "
        "team nlp on gpu-west)")
    assert items["hyperpod:ComputeQuota:vision-extra"].fix == (
        "delete it: the tree declares team vision's quota on gpu-west as vision-on-gpu-west")
    assert items["hyperpod:ComputeQuota:vision-on-gpu-west"].kind == "missing"


def test_a_scheduler_config_not_hypergovs_is_unmanaged_and_hypergovs_missing() -> None:
    other = {**scheduler_described(), "Name": "console-policy", "ClusterSchedulerConfigId": "s2"}
    items = compare(CLUSTER, quotas=[live_quota(quota_summary())], scheduler_configs=live_scheduler(other))
    assert [(i.kind, i.address) for i in items] == [
        ("missing", "hyperpod:ClusterSchedulerConfig:gpu-west-scheduler"),
        ("unmanaged", "hyperpod:ClusterSchedulerConfig:console-policy")]
    assert items[1].changed_by == CONSOLE["IamIdentity"]["Arn"]


def test_items_print_in_the_documented_json_shape() -> None:
    item = DriftItem(kind="changed", stack="s", address="a", type="t", account="1", region="r", fix="f",
                     attributes=(AttributeDrift("p", 1, 2),), changed_by="who", changed_at="when", cluster="c")
    assert item.as_dict() == {"kind": "changed", "stack": "s", "address": "a", "type": "t", "account": "1",
                              "region": "r", "attributes": [{"path": "p", "expected": 1, "live": 2}],
                              "changed_by": "who", "changed_at": "when", "cluster": "c", "fix": "f"}
