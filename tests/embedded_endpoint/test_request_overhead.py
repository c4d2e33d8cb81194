"""What the endpoint does once instead of at every request (it bounds how fast a live scan
reads): the service of a host is found once, the operation of a request is routed once, and
both still answer every service and operation as moto does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from moto.core import routing
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

from embedded_aws import EmbeddedAws
from embedded_aws.server import CachedDispatcher


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """How often moto's own host lookup and REST router run."""
    calls = {"host lookups": 0, "routings": 0}
    lookup, match = DomainDispatcherApplication.get_backend_for_host, routing.ServiceOperationRouter.match

    def counted_lookup(self: Any, host: str | None) -> Any:
        calls["host lookups"] += 1
        return lookup(self, host)

    def counted_match(self: Any, request: Any) -> Any:
        calls["routings"] += 1
        return match(self, request)

    monkeypatch.setattr(DomainDispatcherApplication, "get_backend_for_host", counted_lookup)
    monkeypatch.setattr(routing.ServiceOperationRouter, "match", counted_match)
    yield calls


def test_the_service_of_a_host_is_looked_up_once() -> None:
    dispatcher = CachedDispatcher(lambda service: service)
    host = "eks.us-west-2.amazonaws.com"
    assert dispatcher.get_backend_for_host(host) == "eks"  # moto's answer, from its URL patterns
    assert dispatcher.get_backend_for_host("sts.us-west-2.amazonaws.com") == "sts"
    assert dispatcher.get_backend_for_host(host) == "eks"
    assert dispatcher.get_backend_for_host("nothing.example") is None


def test_repeated_requests_reuse_the_lookup_and_route_once(counted: dict[str, int]) -> None:
    # A fresh server: its dispatcher has seen no host yet.
    with EmbeddedAws() as endpoint:
        eks = endpoint.client("eks", account="111122223333")
        iam = endpoint.client("iam", account="111122223333")
        arn = iam.create_role(RoleName="reader", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        endpoint.seed_hyperpod_cluster("gpu", "gpu-eks", account="111122223333")
        eks.create_access_entry(clusterName="gpu-eks", principalArn=arn, kubernetesGroups=["readers"])
        counted.update({"host lookups": 0, "routings": 0})
        for _ in range(5):
            entry = eks.describe_access_entry(clusterName="gpu-eks", principalArn=arn)["accessEntry"]
            assert entry["kubernetesGroups"] == ["readers"]
        assert iam.get_role(RoleName="reader")["Role"]["Arn"] == arn
    # EKS and IAM hosts were known already (seen while seeding): no lookup; each EKS read
    # (a REST-JSON operation, found from its URL) is routed once, not at each use.
    assert counted == {"host lookups": 0, "routings": 5}
