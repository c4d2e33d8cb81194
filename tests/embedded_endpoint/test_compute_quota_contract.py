"""Contract of the SageMaker compute quota operations (CreateComputeQuota, DescribeComputeQuota,
UpdateComputeQuota, DeleteComputeQuota, ListComputeQuotas) through boto3: valid calls answer
complete responses with AWS's versions and statuses, invalid ones the documented errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import boto3
import pytest

from .conftest import assert_complete, error_of

Ctx = dict[str, str]


def quota_request(cluster_arn: str, *, name: str = "nlp-on-gpu", team: str = "nlp", count: int = 1) -> dict[str, Any]:
    return {
        "Name": name, "ClusterArn": cluster_arn, "Description": "NLP team quota",
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": count}],
            "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
            "PreemptTeamTasks": "LowerPriority"},
        "ComputeQuotaTarget": {"TeamName": team, "FairShareWeight": 10},
        "Tags": [{"Key": "Project", "Value": "nlp"}],
    }


@pytest.fixture
def sagemaker(client: Callable[..., Any]) -> Any:
    return client("sagemaker")


@pytest.fixture
def ctx(sagemaker: Any, hyperpod_arn: str) -> Ctx:
    created = sagemaker.create_compute_quota(**quota_request(hyperpod_arn))
    return {"arn": hyperpod_arn, "id": created["ComputeQuotaId"]}


def test_create_answers_arn_and_id_in_aws_format(sagemaker: Any, hyperpod_arn: str) -> None:
    created = sagemaker.create_compute_quota(**quota_request(hyperpod_arn))

    assert_complete("sagemaker", "CreateComputeQuota", created)
    assert re.fullmatch(r"[a-z0-9]{12}", created["ComputeQuotaId"])
    prefix = hyperpod_arn.split(":cluster/")[0]
    assert created["ComputeQuotaArn"] == f"{prefix}:compute-quota/{created['ComputeQuotaId']}"


def test_describe_after_create_is_version_1_created(sagemaker: Any, ctx: Ctx) -> None:
    described = sagemaker.describe_compute_quota(ComputeQuotaId=ctx["id"])

    assert_complete("sagemaker", "DescribeComputeQuota", described)
    assert (described["ComputeQuotaVersion"], described["Status"]) == (1, "Created")
    assert described["ActivationState"] == "Enabled"  # AWS's documented default
    assert described["ComputeQuotaTarget"] == {"TeamName": "nlp", "FairShareWeight": 10}
    assert described["ClusterArn"] == ctx["arn"]


def test_update_bumps_version_and_keeps_history(sagemaker: Any, ctx: Ctx) -> None:
    config = quota_request(ctx["arn"], count=3)["ComputeQuotaConfig"]

    updated = sagemaker.update_compute_quota(ComputeQuotaId=ctx["id"], TargetVersion=1, ComputeQuotaConfig=config)
    current = sagemaker.describe_compute_quota(ComputeQuotaId=ctx["id"])
    first = sagemaker.describe_compute_quota(ComputeQuotaId=ctx["id"], ComputeQuotaVersion=1)

    assert_complete("sagemaker", "UpdateComputeQuota", updated)
    assert updated["ComputeQuotaVersion"] == 2
    assert (current["ComputeQuotaVersion"], current["Status"]) == (2, "Updated")
    assert current["ComputeQuotaConfig"]["ComputeQuotaResources"][0]["Count"] == 3
    assert first["ComputeQuotaConfig"]["ComputeQuotaResources"][0]["Count"] == 1
    assert current["Description"] == "NLP team quota"  # members not sent are kept


def test_describe_names_who_created_and_who_last_changed_it(aws: Any, sagemaker: Any, client: Callable[..., Any],
                                                           account: str, ctx: Ctx) -> None:
    # As SageMaker does: a UserContext naming the IAM identity that signed the request, the one
    # STS GetCallerIdentity names for the same credentials (an assumed role: its session ARN).
    creator = client("sts").get_caller_identity()
    trust = '{"Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}'
    role = client("iam").create_role(RoleName="console-user", AssumeRolePolicyDocument=trust)["Role"]
    creds = client("sts").assume_role(RoleArn=role["Arn"], RoleSessionName="alice")["Credentials"]
    session = boto3.session.Session(aws_access_key_id=creds["AccessKeyId"],
                                    aws_secret_access_key=creds["SecretAccessKey"],
                                    aws_session_token=creds["SessionToken"])
    as_alice = {"endpoint_url": aws.endpoint_url, "region_name": sagemaker.meta.region_name}
    alice = session.client("sts", **as_alice).get_caller_identity()
    config = quota_request(ctx["arn"], count=2)["ComputeQuotaConfig"]
    session.client("sagemaker", **as_alice).update_compute_quota(ComputeQuotaId=ctx["id"], TargetVersion=1,
                                                                 ComputeQuotaConfig=config)

    described = sagemaker.describe_compute_quota(ComputeQuotaId=ctx["id"])
    listed = sagemaker.list_compute_quotas(ClusterArn=ctx["arn"])["ComputeQuotaSummaries"]

    assert described["CreatedBy"]["IamIdentity"] == {"Arn": creator["Arn"], "PrincipalId": creator["UserId"]}
    assert described["LastModifiedBy"]["IamIdentity"] == {"Arn": alice["Arn"], "PrincipalId": alice["UserId"]}
    assert alice["Arn"].endswith(":assumed-role/console-user/alice")
    assert "LastModifiedBy" not in listed[0]  # the summary shape carries no UserContext


def test_list_filters_sorts_and_pages(sagemaker: Any, ctx: Ctx) -> None:
    sagemaker.create_compute_quota(**quota_request(ctx["arn"], name="vision-on-gpu", team="vision"))

    everything = sagemaker.list_compute_quotas(ClusterArn=ctx["arn"], SortBy="Name", SortOrder="Ascending")
    first_page = sagemaker.list_compute_quotas(MaxResults=1, SortBy="Name", SortOrder="Ascending")
    second_page = sagemaker.list_compute_quotas(MaxResults=1, SortBy="Name", SortOrder="Ascending",
                                                NextToken=first_page["NextToken"])
    filtered = sagemaker.list_compute_quotas(NameContains="vision")

    assert_complete("sagemaker", "ListComputeQuotas", everything)
    assert [q["Name"] for q in everything["ComputeQuotaSummaries"]] == ["nlp-on-gpu", "vision-on-gpu"]
    assert [q["Name"] for q in first_page["ComputeQuotaSummaries"] + second_page["ComputeQuotaSummaries"]] == \
        ["nlp-on-gpu", "vision-on-gpu"]
    assert "NextToken" not in second_page
    assert [q["Name"] for q in filtered["ComputeQuotaSummaries"]] == ["vision-on-gpu"]


def test_delete_removes_the_quota(sagemaker: Any, ctx: Ctx) -> None:
    sagemaker.delete_compute_quota(ComputeQuotaId=ctx["id"])

    assert error_of(sagemaker.describe_compute_quota, ComputeQuotaId=ctx["id"])[:2] == ("ResourceNotFound", 400)
    assert sagemaker.list_compute_quotas()["ComputeQuotaSummaries"] == []


INVALID: list[Any] = [
    pytest.param("create_compute_quota", lambda c: {k: v for k, v in quota_request(c["arn"]).items() if k != "Name"},
                 "ValidationException", "Value null at 'name'", id="create-missing-name"),
    pytest.param("create_compute_quota", lambda c: quota_request(c["arn"], name="nlp_quota"),
                 "ValidationException", "regular expression pattern", id="create-name-pattern"),
    pytest.param("create_compute_quota", lambda c: {**quota_request(c["arn"]), "ActivationState": "On"},
                 "ValidationException", "enum value set", id="create-activation-enum"),
    pytest.param("create_compute_quota", lambda c: quota_request(c["arn"].replace(c["arn"][-12:], "000000000000"),
                                                                 name="x"),
                 "ValidationException", "does not exist", id="create-unknown-cluster"),
    pytest.param("create_compute_quota", lambda c: {**quota_request(c["arn"], name="x", team="x"),
                                                    "ComputeQuotaConfig": {"ComputeQuotaResources": [
                                                        {"InstanceType": "ml.trn1.32xlarge", "Count": 1}]}},
                 "ValidationException", "not in cluster", id="create-instance-type-not-in-cluster"),
    pytest.param("create_compute_quota", lambda c: quota_request(c["arn"], name="other"),
                 "ConflictException", "already has a compute quota", id="create-team-twice"),
    pytest.param("create_compute_quota", lambda c: quota_request(c["arn"], team="other"),
                 "ConflictException", "already exists", id="create-name-twice"),
    pytest.param("create_compute_quota", lambda c: {**quota_request(c["arn"], name="x", team="x"),
                                                    "ComputeQuotaConfig": {"ResourceSharingConfig": {
                                                        "Strategy": "Lend", "BorrowLimit": 10}}},
                 "ValidationException", "BorrowLimit", id="create-borrow-limit-without-borrowing"),
    pytest.param("describe_compute_quota", lambda c: {"ComputeQuotaId": "000000000000"},
                 "ResourceNotFound", "not found", id="describe-unknown"),
    pytest.param("describe_compute_quota", lambda c: {"ComputeQuotaId": "Not-An-Id"},
                 "ValidationException", "regular expression pattern", id="describe-id-pattern"),
    pytest.param("describe_compute_quota", lambda c: {"ComputeQuotaId": c["id"], "ComputeQuotaVersion": 7},
                 "ResourceNotFound", "Version 7", id="describe-unknown-version"),
    pytest.param("update_compute_quota", lambda c: {"ComputeQuotaId": c["id"]},
                 "ValidationException", "Value null at 'targetVersion'", id="update-missing-target-version"),
    pytest.param("update_compute_quota", lambda c: {"ComputeQuotaId": c["id"], "TargetVersion": 5},
                 "ConflictException", "does not match the current version 1", id="update-stale-target-version"),
    pytest.param("update_compute_quota", lambda c: {"ComputeQuotaId": c["id"], "TargetVersion": "one"},
                 "SerializationException", "Could not read the request", id="update-target-version-not-a-number"),
    pytest.param("update_compute_quota", lambda c: {"ComputeQuotaId": "000000000000", "TargetVersion": 1},
                 "ResourceNotFound", "not found", id="update-unknown"),
    pytest.param("update_compute_quota", lambda c: {"ComputeQuotaId": c["id"], "TargetVersion": 1,
                                                    "ComputeQuotaTarget": {"TeamName": "vision"}},
                 "ValidationException", "team of a compute quota cannot be changed", id="update-team"),
    pytest.param("delete_compute_quota", lambda c: {"ComputeQuotaId": "000000000000"},
                 "ResourceNotFound", "not found", id="delete-unknown"),
    pytest.param("list_compute_quotas", lambda c: {"SortBy": "Size"},
                 "ValidationException", "enum value set", id="list-sort-enum"),
    pytest.param("list_compute_quotas", lambda c: {"MaxResults": 0},
                 "ValidationException", "greater than or equal to 1", id="list-max-results"),
    pytest.param("list_compute_quotas", lambda c: {"NextToken": "forged"},
                 "ValidationException", "NextToken", id="list-forged-token"),
]


@pytest.mark.parametrize(("operation", "request_of", "code", "message"), INVALID)
def test_invalid_requests_get_documented_errors(client: Callable[..., Any], ctx: Ctx, operation: str,
                                                request_of: Callable[[Ctx], dict[str, Any]], code: str,
                                                message: str) -> None:
    unchecked = client("sagemaker", checked=False)

    got_code, status, got_message = error_of(getattr(unchecked, operation), **request_of(ctx))

    assert (got_code, status) == (code, 400)
    assert message in got_message
