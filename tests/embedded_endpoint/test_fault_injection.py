"""Faults injected into the running server reach real SDK clients: throttles that standard
retries absorb, server errors that outlast the retries and surface, latency, and operations
nobody implements failing fast instead of being retried."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from embedded_aws import EmbeddedAws

from .conftest import REGION

STANDARD_3 = Config(retries={"mode": "standard", "total_max_attempts": 3})


@pytest.fixture(scope="module")
def waits() -> list[float]:
    """The delays the server waited for latency faults: recorded, not slept."""
    return []


@pytest.fixture(scope="module")
def aws(waits: list[float]) -> Iterator[EmbeddedAws]:
    """This module's endpoint: as conftest's, with latency faults waiting through `waits`."""
    with EmbeddedAws(sleep=waits.append) as endpoint:
        yield endpoint


@pytest.fixture(autouse=True)
def no_leftover_faults(aws: EmbeddedAws) -> Iterator[None]:
    yield
    aws.clear_faults()


@pytest.fixture
def sagemaker(aws: EmbeddedAws, account: str) -> Any:
    return aws.client("sagemaker", account=account, region=REGION, config=STANDARD_3)


def _calls_of(aws: EmbeddedAws, operation: str) -> list[int]:
    return [int(c["status"]) for c in aws.calls() if c["operation"] == operation]


def test_two_throttles_are_absorbed_by_standard_retries(aws: EmbeddedAws, sagemaker: Any, hyperpod_arn: str) -> None:
    aws.clear_calls()
    aws.inject_fault("sagemaker", "DescribeCluster", kind="throttle", times=2)

    described = sagemaker.describe_cluster(ClusterName=hyperpod_arn)

    assert described["ClusterArn"] == hyperpod_arn
    assert described["ResponseMetadata"]["RetryAttempts"] == 2
    assert _calls_of(aws, "DescribeCluster") == [400, 400, 200]
    assert aws.pending_faults() == []


def test_server_errors_outlasting_retries_surface(aws: EmbeddedAws, sagemaker: Any, hyperpod_arn: str) -> None:
    aws.inject_fault("sagemaker", "ListComputeQuotas", kind="5xx", times=5, status=503)

    with pytest.raises(ClientError) as caught:
        sagemaker.list_compute_quotas()

    error = caught.value.response
    assert (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]) == ("ServiceUnavailable", 503)
    assert error["ResponseMetadata"]["RetryAttempts"] == 2
    assert [f["times"] for f in aws.pending_faults()] == [2]


def test_eks_throttle_is_429_and_retried(aws: EmbeddedAws, client: Callable[..., Any], hyperpod_arn: str) -> None:
    aws.clear_calls()
    aws.inject_fault("eks", "ListAccessEntries", times=1)

    listed = client("eks").list_access_entries(clusterName="gpu-eks")

    assert listed["accessEntries"] == []
    assert _calls_of(aws, "ListAccessEntries") == [429, 200]


def test_fault_hits_only_its_operation(aws: EmbeddedAws, client: Callable[..., Any]) -> None:
    aws.inject_fault("iam", "CreateRole", kind="5xx", times=None)
    iam = client("iam", checked=False)

    users = iam.list_users()["Users"]
    with pytest.raises(ClientError) as caught:
        iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")

    assert users == []
    assert caught.value.response["Error"]["Code"] == "InternalFailure"


def test_latency_makes_the_server_wait_before_it_answers(aws: EmbeddedAws, client: Callable[..., Any],
                                                          waits: list[float]) -> None:
    """The server waits the fault's delay (through its `sleep`, recorded here instead of timed)
    and then answers the call itself."""
    aws.inject_fault("sts", "GetCallerIdentity", kind="latency", delay_s=0.3)
    sts = client("sts")
    waits.clear()

    identity = sts.get_caller_identity()

    assert waits == [0.3]
    assert identity["Account"] == identity["Arn"].split(":")[4]
    assert aws.pending_faults() == []


def test_unimplemented_operation_fails_fast_with_501(aws: EmbeddedAws, client: Callable[..., Any],
                                                     account: str) -> None:
    aws.clear_calls()

    with pytest.raises(ClientError) as caught:
        client("budgets").describe_budget_actions_for_account(AccountId=account)

    error = caught.value.response
    assert (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]) == ("NotImplemented", 501)
    assert "DescribeBudgetActionsForAccount" in error["Error"]["Message"]
    assert _calls_of(aws, "DescribeBudgetActionsForAccount") == [501]
