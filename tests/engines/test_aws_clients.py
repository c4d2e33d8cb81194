"""The clients the engines and the scan share: one per service, account and region, over the
embedded endpoint's STS; an assumed role's credentials renewed before they expire."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from embedded_aws import EmbeddedAws
from engines.aws_clients import RENEW_BEFORE_S, AwsClients
from engines.settings import load_settings

MEMBER = "111122223333"
REGION = "us-west-2"
# AssumeRole's credentials last DurationSeconds, 3600 by default (STS API reference, AssumeRole).
ROLE_SESSION_S = 3600


@pytest.fixture
def clients(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsClients]:
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(key, value)
    settings = load_settings(environ={"HYPERGOV_SETTINGS": os.devnull + "/none"},
                             overrides={"aws.endpoint_url": aws.endpoint_url})
    yield AwsClients(settings=settings.aws)


def test_one_client_per_service_account_and_region(clients: AwsClients) -> None:
    first = clients.client("sagemaker", region=REGION, account=MEMBER)
    assert clients.client("sagemaker", region=REGION, account=MEMBER) is first
    assert clients.client("sagemaker", region="eu-west-1", account=MEMBER) is not first
    assert clients.client("iam", region=REGION, account=MEMBER) is not first
    assert clients.client("sagemaker", region=REGION) is not first  # the caller's own account


def test_an_assumed_role_is_assumed_again_before_its_credentials_expire(clients: AwsClients) -> None:
    now = [time.time()]  # the endpoint dates the credentials by the real clock
    clients.clock = lambda: now[0]
    first = clients.client("sts", region=REGION, account=MEMBER)
    assert first.get_caller_identity()["Account"] == MEMBER
    now[0] += ROLE_SESSION_S - RENEW_BEFORE_S - 1  # still valid long enough: the same client
    assert clients.client("sts", region=REGION, account=MEMBER) is first
    # Well inside RENEW_BEFORE_S of the expiry (a new role session, so a new client), even when the
    # endpoint dated the credentials up to RENEW_BEFORE_S / 2 s after `now` was read (a loaded machine).
    now[0] += RENEW_BEFORE_S // 2
    renewed = clients.client("sts", region=REGION, account=MEMBER)
    assert renewed is not first
    assert renewed.get_caller_identity()["Account"] == MEMBER
