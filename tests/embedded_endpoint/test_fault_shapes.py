"""Injected faults look like the service's own errors: its throttling code and status, its
wire format; and a fault is used up exactly `times` times."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest

from embedded_aws.faults import FaultRegistry, FaultSpec, fault_response


@pytest.mark.parametrize(("service", "code", "status"), [
    pytest.param("sagemaker", "ThrottlingException", 400, id="sagemaker-json"),
    pytest.param("budgets", "ThrottlingException", 400, id="budgets-modeled"),
    pytest.param("organizations", "TooManyRequestsException", 400, id="organizations-modeled"),
    pytest.param("eks", "ThrottlingException", 429, id="eks-rest-json-429"),
    pytest.param("iam", "Throttling", 400, id="iam-query"),
    pytest.param("sts", "Throttling", 400, id="sts-query"),
])
def test_throttling_uses_the_service_error(service: str, code: str, status: int) -> None:
    got_status, headers, body = fault_response(FaultSpec(service=service), service=service)

    assert got_status == status
    assert dict(headers)["x-amzn-ErrorType"] == code
    if dict(headers)["Content-Type"] == "text/xml":
        assert ElementTree.fromstring(body).findtext("Error/Code") == code
    elif service != "eks":
        assert json.loads(body)["__type"] == code


@pytest.mark.parametrize(("service", "status", "code"), [
    pytest.param("sagemaker", 500, "InternalFailure", id="unmodeled-500"),
    pytest.param("sagemaker", 503, "ServiceUnavailable", id="unmodeled-503"),
    pytest.param("eks", 500, "ServerException", id="eks-modeled-500"),
    pytest.param("eks", 503, "ServiceUnavailableException", id="eks-modeled-503"),
])
def test_server_errors_use_the_status_asked_for(service: str, status: int, code: str) -> None:
    got_status, headers, _ = fault_response(FaultSpec(service=service, kind="5xx", status=status), service=service)

    assert (got_status, dict(headers)["x-amzn-ErrorType"]) == (status, code)


def test_a_fault_is_used_up_after_times_matches() -> None:
    registry = FaultRegistry()
    registry.add(FaultSpec(service="eks", operation="CreateAccessEntry", times=2))

    taken = [registry.take("eks", op) for op in ("DescribeCluster", "CreateAccessEntry", "CreateAccessEntry",
                                                  "CreateAccessEntry")]

    assert [t is not None for t in taken] == [False, True, True, False]
    assert registry.pending() == []


def test_times_none_applies_to_every_call_and_star_to_every_operation() -> None:
    registry = FaultRegistry()
    registry.add(FaultSpec(service="iam", operation="*", kind="latency", times=None, delay_s=0.01))

    assert all(registry.take("iam", op) is not None for op in ("GetRole", "CreateRole", "GetRole"))
    assert registry.take("sts", "GetCallerIdentity") is None


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({"kind": "explode"}, "unknown fault kind", id="kind"),
    pytest.param({"times": 0}, "times must be at least 1", id="times"),
    pytest.param({"kind": "5xx", "status": 404}, "needs a status from 500", id="status"),
    pytest.param({"kind": "latency", "delay_s": -1.0}, "must not be negative", id="delay"),
])
def test_invalid_fault_specs_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FaultSpec(service="iam", **kwargs)  # type: ignore[arg-type]
