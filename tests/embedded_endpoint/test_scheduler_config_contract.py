"""Contract of the SageMaker cluster scheduler config (cluster policy) operations through boto3:
Create/Describe/Update/Delete/ListClusterSchedulerConfigs. One policy per cluster; an update needs
the current version as TargetVersion (a stale one is a ConflictException) and bumps it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import assert_complete, error_of

Ctx = dict[str, str]
SCHEDULER = {"PriorityClasses": [{"Name": "inference", "Weight": 100}, {"Name": "training", "Weight": 60}],
             "FairShare": "Enabled", "IdleResourceSharing": "Enabled"}


@pytest.fixture
def sagemaker(client: Callable[..., Any]) -> Any:
    return client("sagemaker")


@pytest.fixture
def ctx(sagemaker: Any, hyperpod_arn: str) -> Ctx:
    created = sagemaker.create_cluster_scheduler_config(Name="gpu-scheduler", ClusterArn=hyperpod_arn,
                                                        SchedulerConfig=SCHEDULER, Description="cluster policy",
                                                        Tags=[{"Key": "Project", "Value": "platform"}])
    return {"arn": hyperpod_arn, "id": created["ClusterSchedulerConfigId"]}


def test_create_answers_arn_and_id(sagemaker: Any, hyperpod_arn: str) -> None:
    created = sagemaker.create_cluster_scheduler_config(Name="p", ClusterArn=hyperpod_arn, SchedulerConfig=SCHEDULER)

    assert_complete("sagemaker", "CreateClusterSchedulerConfig", created)
    assert re.fullmatch(r"[a-z0-9]{12}", created["ClusterSchedulerConfigId"])
    config_id = created["ClusterSchedulerConfigId"]
    assert created["ClusterSchedulerConfigArn"] == hyperpod_arn.split(":cluster/")[0] + \
        f":cluster-scheduler-config/{config_id}"


def test_describe_after_create_is_version_1_created(sagemaker: Any, ctx: Ctx) -> None:
    described = sagemaker.describe_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"])

    assert_complete("sagemaker", "DescribeClusterSchedulerConfig", described)
    assert (described["ClusterSchedulerConfigVersion"], described["Status"]) == (1, "Created")
    assert described["SchedulerConfig"] == SCHEDULER
    assert described["StatusDetails"] == {"PriorityClasses": "Created", "FairShare": "Created",
                                          "IdleResourceSharing": "Created"}


def test_update_with_current_version_bumps_it(sagemaker: Any, ctx: Ctx) -> None:
    changed = {**SCHEDULER, "FairShare": "Disabled"}

    first = sagemaker.update_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"], TargetVersion=1,
                                                      SchedulerConfig=changed)
    second = sagemaker.update_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"], TargetVersion=2,
                                                       Description="v3")
    described = sagemaker.describe_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"])

    assert_complete("sagemaker", "UpdateClusterSchedulerConfig", first)
    assert (first["ClusterSchedulerConfigVersion"], second["ClusterSchedulerConfigVersion"]) == (2, 3)
    assert (described["Status"], described["SchedulerConfig"]["FairShare"], described["Description"]) == \
        ("Updated", "Disabled", "v3")


def test_describe_names_who_created_and_who_last_changed_it(sagemaker: Any, client: Callable[..., Any],
                                                           ctx: Ctx) -> None:
    caller = client("sts").get_caller_identity()
    sagemaker.update_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"], TargetVersion=1,
                                              SchedulerConfig={**SCHEDULER, "FairShare": "Disabled"})

    described = sagemaker.describe_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"])

    for who in ("CreatedBy", "LastModifiedBy"):
        assert described[who]["IamIdentity"] == {"Arn": caller["Arn"], "PrincipalId": caller["UserId"]}


def test_list_and_delete(sagemaker: Any, ctx: Ctx) -> None:
    listed = sagemaker.list_cluster_scheduler_configs(ClusterArn=ctx["arn"])
    sagemaker.delete_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"])

    assert_complete("sagemaker", "ListClusterSchedulerConfigs", listed)
    assert [s["ClusterSchedulerConfigId"] for s in listed["ClusterSchedulerConfigSummaries"]] == [ctx["id"]]
    assert sagemaker.list_cluster_scheduler_configs()["ClusterSchedulerConfigSummaries"] == []


def test_status_passes_through_updating_when_progression_is_manual(aws: Any, sagemaker: Any, ctx: Ctx) -> None:
    sagemaker.describe_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"])  # settles "Created"
    aws.set_transition("sagemaker::cluster-scheduler-config", progression="manual", times=2)
    try:
        sagemaker.update_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"], TargetVersion=1,
                                                  Description="x")
        busy = error_of(sagemaker.update_cluster_scheduler_config, ClusterSchedulerConfigId=ctx["id"],
                        TargetVersion=2)
        statuses = [sagemaker.describe_cluster_scheduler_config(ClusterSchedulerConfigId=ctx["id"])["Status"]
                    for _ in range(2)]
    finally:
        aws.set_transition("sagemaker::cluster-scheduler-config", progression="immediate")

    assert statuses == ["Updating", "Updated"]
    assert busy[0] == "ConflictException"


INVALID: list[Any] = [
    pytest.param("create_cluster_scheduler_config", lambda c: {"Name": "p", "ClusterArn": c["arn"]},
                 "ValidationException", "Value null at 'schedulerConfig'", id="create-missing-config"),
    pytest.param("create_cluster_scheduler_config",
                 lambda c: {"Name": "p", "ClusterArn": c["arn"],
                            "SchedulerConfig": {"PriorityClasses": [{"Name": "Training", "Weight": 50}]}},
                 "ValidationException", "regular expression pattern", id="create-priority-class-pattern"),
    pytest.param("create_cluster_scheduler_config",
                 lambda c: {"Name": "p", "ClusterArn": c["arn"],
                            "SchedulerConfig": {"PriorityClasses": [{"Name": "a", "Weight": 101}]}},
                 "ValidationException", "less than or equal to 100", id="create-weight-max"),
    pytest.param("create_cluster_scheduler_config",
                 lambda c: {"Name": "p", "ClusterArn": c["arn"], "SchedulerConfig": {"FairShare": "Yes"}},
                 "ValidationException", "enum value set", id="create-fair-share-enum"),
    pytest.param("create_cluster_scheduler_config",
                 lambda c: {"Name": "p", "ClusterArn": c["arn"],
                            "SchedulerConfig": {"PriorityClasses": [{"Name": "a", "Weight": 1},
                                                                    {"Name": "a", "Weight": 2}]}},
                 "ValidationException", "unique", id="create-duplicate-priority-class"),
    pytest.param("create_cluster_scheduler_config",
                 lambda c: {"Name": "second", "ClusterArn": c["arn"], "SchedulerConfig": SCHEDULER},
                 "ConflictException", "already has a cluster policy", id="create-second-policy"),
    pytest.param("describe_cluster_scheduler_config", lambda c: {"ClusterSchedulerConfigId": "000000000000"},
                 "ResourceNotFound", "not found", id="describe-unknown"),
    pytest.param("update_cluster_scheduler_config", lambda c: {"ClusterSchedulerConfigId": c["id"]},
                 "ValidationException", "Value null at 'targetVersion'", id="update-missing-target-version"),
    pytest.param("update_cluster_scheduler_config", lambda c: {"ClusterSchedulerConfigId": c["id"],
                                                               "TargetVersion": 0},
                 "ConflictException", "does not match the current version 1", id="update-stale-target-version"),
    pytest.param("update_cluster_scheduler_config", lambda c: {"ClusterSchedulerConfigId": "000000000000",
                                                               "TargetVersion": 1},
                 "ResourceNotFound", "not found", id="update-unknown"),
    pytest.param("delete_cluster_scheduler_config", lambda c: {"ClusterSchedulerConfigId": "000000000000"},
                 "ResourceNotFound", "not found", id="delete-unknown"),
    pytest.param("list_cluster_scheduler_configs", lambda c: {"Status": "Happy"},
                 "ValidationException", "enum value set", id="list-status-enum"),
]


@pytest.mark.parametrize(("operation", "request_of", "code", "message"), INVALID)
def test_invalid_requests_get_documented_errors(client: Callable[..., Any], ctx: Ctx, operation: str,
                                                request_of: Callable[[Ctx], dict[str, Any]], code: str,
                                                message: str) -> None:
    got_code, status, got_message = error_of(getattr(client("sagemaker", checked=False), operation),
                                             **request_of(ctx))

    assert (got_code, status) == (code, 400)
    assert message in got_message
