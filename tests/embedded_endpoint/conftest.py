"""Fixtures for the embedded endpoint tests: one endpoint per test module, and a fresh AWS
account per test (the account is part of every backend's key, so tests never see each other's
state without resetting a shared server)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from embedded_aws import EmbeddedAws
from embedded_aws.modelcheck import missing_required_output

REGION = "us-west-2"
_accounts = itertools.count(200000000001)

# A client that sends what it is given: the endpoint, not botocore, must refuse invalid input.
UNCHECKED = Config(parameter_validation=False, retries={"mode": "standard", "total_max_attempts": 1})


@pytest.fixture(scope="module")
def aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws() as endpoint:
        yield endpoint


@pytest.fixture
def account() -> str:
    return f"{next(_accounts):012d}"


@pytest.fixture
def client(aws: EmbeddedAws, account: str) -> Callable[..., Any]:
    """client(service, checked=True): a boto3 client in this test's account."""

    def make(service: str, *, checked: bool = True) -> Any:
        return aws.client(service, account=account, region=REGION, config=None if checked else UNCHECKED)

    return make


@pytest.fixture
def hyperpod_arn(aws: EmbeddedAws, account: str) -> str:
    """A seeded EKS-orchestrated HyperPod cluster 'gpu' (g5.12xlarge x2, p5.48xlarge x4)."""
    from embedded_aws import InstanceGroup

    groups = [InstanceGroup("g5", "ml.g5.12xlarge", 2), InstanceGroup("p5", "ml.p5.48xlarge", 4)]
    return aws.seed_hyperpod_cluster("gpu", "gpu-eks", account=account, region=REGION, instance_groups=groups)


def error_of(call: Callable[..., Any], **kwargs: Any) -> tuple[str, int, str]:
    """(error code, HTTP status, message) of a call that must fail."""
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    response = caught.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Message"]


def assert_complete(service: str, operation: str, response: dict[str, Any]) -> None:
    """The response carries every member the operation's output model requires."""
    model = botocore.session.get_session().get_service_model(service).operation_model(operation)
    assert missing_required_output(model.output_shape, response) == []
