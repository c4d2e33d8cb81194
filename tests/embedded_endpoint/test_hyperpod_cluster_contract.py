"""Contract of the HyperPod cluster operations as served by the endpoint (moto's model replaced):
AWS's id-based ARNs, optional ThreadsPerCore and free lifecycle URIs (moto answered HTTP 500 and
a validation error), the EKS orchestrator kept, UpdateCluster, nodes, tags and deletion rules."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import REGION, assert_complete, error_of

ROLE = "arn:aws:iam::{account}:role/hyperpod-execution"


def group(name: str, instance_type: str = "ml.g5.12xlarge", count: int = 2, **extra: Any) -> dict[str, Any]:
    return {"InstanceGroupName": name, "InstanceType": instance_type, "InstanceCount": count,
            "ExecutionRole": ROLE.format(account="111122223333"),
            "LifeCycleConfig": {"SourceS3Uri": "s3://my-team-bucket/lifecycle/", "OnCreate": "on_create.sh"}, **extra}


@pytest.fixture
def eks_arn(client: Callable[..., Any]) -> str:
    arn: str = client("eks").create_cluster(
        name="train-eks", roleArn="arn:aws:iam::111122223333:role/eks", accessConfig={"authenticationMode": "API"},
        resourcesVpcConfig={"subnetIds": ["subnet-1", "subnet-2"]})["cluster"]["arn"]
    return arn


@pytest.fixture
def sagemaker(client: Callable[..., Any]) -> Any:
    return client("sagemaker")


@pytest.fixture
def cluster_arn(sagemaker: Any, eks_arn: str) -> str:
    arn: str = sagemaker.create_cluster(ClusterName="train", InstanceGroups=[group("workers")],
                                        Orchestrator={"Eks": {"ClusterArn": eks_arn}},
                                        Tags=[{"Key": "Owner", "Value": "platform"}])["ClusterArn"]
    return arn


def test_create_without_threads_per_core_and_with_any_bucket(sagemaker: Any, eks_arn: str, account: str) -> None:
    created = sagemaker.create_cluster(ClusterName="new", InstanceGroups=[group("g6e", "ml.g6e.48xlarge", 1)],
                                       Orchestrator={"Eks": {"ClusterArn": eks_arn}})

    assert_complete("sagemaker", "CreateCluster", created)
    assert re.fullmatch(rf"arn:aws:sagemaker:{REGION}:{account}:cluster/[a-z0-9]{{12}}", created["ClusterArn"])


def test_describe_by_name_or_arn_keeps_the_orchestrator(sagemaker: Any, cluster_arn: str, eks_arn: str) -> None:
    by_name = sagemaker.describe_cluster(ClusterName="train")
    by_arn = sagemaker.describe_cluster(ClusterName=cluster_arn)

    assert_complete("sagemaker", "DescribeCluster", by_name)
    by_name.pop("ResponseMetadata")
    by_arn.pop("ResponseMetadata")
    assert by_name == by_arn
    assert by_name["Orchestrator"] == {"Eks": {"ClusterArn": eks_arn}}
    assert by_name["ClusterStatus"] == "InService"
    assert [(g["InstanceGroupName"], g["CurrentCount"], g["TargetCount"]) for g in by_name["InstanceGroups"]] == \
        [("workers", 2, 2)]


def test_update_scales_adds_and_removes_instance_groups(sagemaker: Any, cluster_arn: str) -> None:
    sagemaker.update_cluster(ClusterName="train", InstanceGroups=[group("workers", count=4), group("spare", count=1)])
    scaled = sagemaker.describe_cluster(ClusterName="train")
    updated = sagemaker.update_cluster(ClusterName=cluster_arn, InstanceGroupsToDelete=["spare"],
                                       NodeRecovery="Automatic")
    final = sagemaker.describe_cluster(ClusterName="train")
    nodes = sagemaker.list_cluster_nodes(ClusterName="train")

    assert_complete("sagemaker", "UpdateCluster", updated)
    assert {g["InstanceGroupName"]: g["CurrentCount"] for g in scaled["InstanceGroups"]} == {"workers": 4, "spare": 1}
    assert [g["InstanceGroupName"] for g in final["InstanceGroups"]] == ["workers"]
    assert (final["NodeRecovery"], final["ClusterStatus"]) == ("Automatic", "InService")
    assert_complete("sagemaker", "ListClusterNodes", nodes)
    assert len(nodes["ClusterNodeSummaries"]) == 4


def test_nodes_list_and_describe(sagemaker: Any, cluster_arn: str) -> None:
    summaries = sagemaker.list_cluster_nodes(ClusterName=cluster_arn)["ClusterNodeSummaries"]
    node = sagemaker.describe_cluster_node(ClusterName="train", NodeId=summaries[0]["InstanceId"])

    assert_complete("sagemaker", "DescribeClusterNode", node)
    assert re.fullmatch(r"i-[a-f0-9]{17}", node["NodeDetails"]["InstanceId"])
    assert node["NodeDetails"]["InstanceStatus"]["Status"] == "Running"


def test_list_clusters_and_tags(sagemaker: Any, cluster_arn: str) -> None:
    listed = sagemaker.list_clusters(NameContains="tra")
    sagemaker.add_tags(ResourceArn=cluster_arn, Tags=[{"Key": "Team", "Value": "ml"}])
    sagemaker.delete_tags(ResourceArn=cluster_arn, TagKeys=["Owner"])

    assert_complete("sagemaker", "ListClusters", listed)
    assert [c["ClusterArn"] for c in listed["ClusterSummaries"]] == [cluster_arn]
    assert sagemaker.list_tags(ResourceArn=cluster_arn)["Tags"] == [{"Key": "Team", "Value": "ml"}]


def test_delete_refuses_while_governed_then_deletes(sagemaker: Any, cluster_arn: str) -> None:
    quota = sagemaker.create_compute_quota(
        Name="q", ClusterArn=cluster_arn, ComputeQuotaTarget={"TeamName": "nlp"},
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 1}]})

    refused = error_of(sagemaker.delete_cluster, ClusterName="train")
    sagemaker.delete_compute_quota(ComputeQuotaId=quota["ComputeQuotaId"])
    deleted = sagemaker.delete_cluster(ClusterName="train")

    assert refused[:2] == ("ConflictException", 400)
    assert deleted["ClusterArn"] == cluster_arn
    assert error_of(sagemaker.describe_cluster, ClusterName="train")[:2] == ("ResourceNotFound", 400)


def test_delete_goes_through_deleting_before_the_cluster_is_gone(aws: Any, sagemaker: Any, cluster_arn: str) -> None:
    """AWS: DeleteCluster answers while the cluster is Deleting (a ClusterStatus of botocore's
    model); Describe and List still find it then, a second delete or an update is refused, and
    once the deletion ends Describe says ResourceNotFound."""
    import botocore.session

    statuses = botocore.session.get_session().get_service_model("sagemaker").shape_for("ClusterStatus").enum
    assert "Deleting" in statuses
    aws.set_transition("sagemaker::hyperpod-cluster", progression="manual", times=2)
    try:
        sagemaker.delete_cluster(ClusterName="train")
        assert sagemaker.describe_cluster(ClusterName="train")["ClusterStatus"] == "Deleting"
        listed = sagemaker.list_clusters()["ClusterSummaries"]
        assert [(c["ClusterName"], c["ClusterStatus"]) for c in listed] == [("train", "Deleting")]
        assert error_of(sagemaker.delete_cluster, ClusterName="train")[:2] == ("ConflictException", 400)
        assert error_of(sagemaker.update_cluster, ClusterName="train",
                        InstanceGroups=[group("workers", count=3)])[:2] == ("ConflictException", 400)
        assert error_of(sagemaker.describe_cluster, ClusterName="train")[:2] == ("ResourceNotFound", 400)
        assert sagemaker.list_clusters()["ClusterSummaries"] == []
    finally:
        aws.set_transition("sagemaker::hyperpod-cluster", progression="immediate")


def _config_map_eks(client: Callable[..., Any]) -> str:
    arn: str = client("eks").create_cluster(name="legacy-eks", roleArn="arn:aws:iam::111122223333:role/eks",
                                            resourcesVpcConfig={"subnetIds": ["s"]})["cluster"]["arn"]
    return arn


INVALID: list[Any] = [
    pytest.param("create_cluster", lambda c, e: {"ClusterName": "train", "InstanceGroups": [group("w")]},
                 "ResourceInUse", "already exists", id="create-duplicate"),
    pytest.param("create_cluster", lambda c, e: {"ClusterName": "bad_name", "InstanceGroups": [group("w")]},
                 "ValidationException", "regular expression pattern", id="create-name-pattern"),
    pytest.param("create_cluster", lambda c, e: {"ClusterName": "x", "InstanceGroups": [group("w",
                                                                                               ThreadsPerCore=3)]},
                 "ValidationException", "less than or equal to 2", id="create-threads-per-core-max"),
    pytest.param("create_cluster", lambda c, e: {"ClusterName": "x", "InstanceGroups": [group("w"), group("w")]},
                 "ValidationException", "unique", id="create-duplicate-groups"),
    pytest.param("create_cluster", lambda c, e: {"ClusterName": "x", "InstanceGroups": [group("w")], "Orchestrator": {
        "Eks": {"ClusterArn": e.replace("train-eks", "missing-eks")}}},
                 "ValidationException", "does not exist", id="create-missing-eks"),
    pytest.param("create_cluster", lambda c, e: {"ClusterName": "x", "InstanceGroups": [group("w")], "Orchestrator": {
        "Eks": {"ClusterArn": _config_map_eks(c)}}},
                 "ValidationException", "authentication mode", id="create-eks-config-map-mode"),
    pytest.param("update_cluster", lambda c, e: {"ClusterName": "missing", "NodeRecovery": "None"},
                 "ResourceNotFound", "not found", id="update-unknown"),
    pytest.param("update_cluster", lambda c, e: {"ClusterName": "train", "InstanceGroups": [
        group("workers", "ml.p5.48xlarge")]},
                 "ValidationException", "cannot be changed", id="update-instance-type"),
    pytest.param("update_cluster", lambda c, e: {"ClusterName": "train", "InstanceGroupsToDelete": ["nope"]},
                 "ValidationException", "does not exist", id="update-delete-unknown-group"),
    pytest.param("update_cluster", lambda c, e: {"ClusterName": "train", "NodeRecovery": "Sometimes"},
                 "ValidationException", "enum value set", id="update-node-recovery-enum"),
    pytest.param("describe_cluster", lambda c, e: {"ClusterName": "missing"},
                 "ResourceNotFound", "not found", id="describe-unknown"),
    pytest.param("describe_cluster_node", lambda c, e: {"ClusterName": "train", "NodeId": "i-0123456789abcdef0"},
                 "ResourceNotFound", "not found", id="describe-node-unknown"),
]


@pytest.mark.parametrize(("operation", "request_of", "code", "message"), INVALID)
def test_invalid_requests_get_documented_errors(client: Callable[..., Any], cluster_arn: str, eks_arn: str,
                                                operation: str, request_of: Callable[..., dict[str, Any]], code: str,
                                                message: str) -> None:
    got_code, status, got_message = error_of(getattr(client("sagemaker", checked=False), operation),
                                             **request_of(client, eks_arn))

    assert (got_code, status) == (code, 400)
    assert message in got_message
