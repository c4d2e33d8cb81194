"""The server knows which service and operation a request calls from the request alone, as
any client (boto3, the Go SDK) sends it, and maps 12-digit access keys to accounts."""

from __future__ import annotations

import io
from typing import Any

import pytest

from embedded_aws.operations import account_from_access_key, identify, read_body


def environ(service: str, *, method: str = "POST", path: str = "/", target: str | None = None, body: bytes = b"",
            query: str = "", form: bool = False, key: str = "111122223333") -> dict[str, Any]:
    env: dict[str, Any] = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "RAW_URI": path + (f"?{query}" if query else ""),
        "QUERY_STRING": query, "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body),
        "HTTP_AUTHORIZATION": f"AWS4-HMAC-SHA256 Credential={key}/20250101/us-west-2/{service}/aws4_request, "
                              "SignedHeaders=host, Signature=abc",
    }
    if target:
        env["HTTP_X_AMZ_TARGET"] = target
    if form:
        env["CONTENT_TYPE"] = "application/x-www-form-urlencoded; charset=utf-8"
    return env


ROLE = "arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fteam%2Facme-nlp-lead"
POLICY = "arn%3Aaws%3Aeks%3A%3Aaws%3Acluster-access-policy%2FAmazonEKSViewPolicy"


@pytest.mark.parametrize(("env", "service", "operation"), [
    pytest.param(environ("sagemaker", target="SageMaker.UpdateComputeQuota"), "sagemaker", "UpdateComputeQuota",
                 id="json-target"),
    pytest.param(environ("budgets", target="AWSBudgetServiceGateway.ListTagsForResource"), "budgets",
                 "ListTagsForResource", id="json-target-budgets"),
    pytest.param(environ("iam", body=b"Action=GetRole&RoleName=x&Version=2010-05-08", form=True), "iam", "GetRole",
                 id="query-body"),
    pytest.param(environ("sts", method="GET", query="Action=GetCallerIdentity&Version=2011-06-15"), "sts",
                 "GetCallerIdentity", id="query-string"),
    pytest.param(environ("eks", path="/clusters/gpu-eks/access-entries"), "eks", "CreateAccessEntry",
                 id="rest-collection-post"),
    pytest.param(environ("eks", method="GET", path="/clusters/gpu-eks/access-entries"), "eks", "ListAccessEntries",
                 id="rest-collection-get"),
    pytest.param(environ("eks", method="GET", path=f"/clusters/gpu-eks/access-entries/{ROLE}"), "eks",
                 "DescribeAccessEntry", id="rest-encoded-arn-label"),
    pytest.param(environ("eks", method="DELETE", path=f"/clusters/gpu-eks/access-entries/{ROLE}/access-policies/"
                                                      f"{POLICY}"), "eks", "DisassociateAccessPolicy",
                 id="rest-two-encoded-labels"),
    pytest.param(environ("eks", method="GET", path=f"/clusters/gpu-eks/access-entries/{ROLE}/access-policies"), "eks",
                 "ListAssociatedAccessPolicies", id="rest-most-specific"),
    pytest.param(environ("eks", method="GET", path="/clusters/gpu-eks"), "eks", "DescribeCluster", id="rest-moto-op"),
])
def test_service_and_operation_are_identified(env: dict[str, Any], service: str, operation: str) -> None:
    info = identify(env)

    assert (info.service, info.operation, info.region) == (service, operation, "us-west-2")


def test_unsigned_request_is_not_attributed() -> None:
    info = identify({"REQUEST_METHOD": "GET", "PATH_INFO": "/"})

    assert (info.service, info.operation) == (None, None)


def test_reading_the_body_leaves_it_for_the_application() -> None:
    env = environ("iam", body=b"Action=GetRole&RoleName=x", form=True)

    identify(env)

    assert read_body(env) == b"Action=GetRole&RoleName=x"


@pytest.mark.parametrize(("key", "account"), [
    pytest.param("111122223333", "111122223333", id="account-id-key"),
    pytest.param("AKIAIOSFODNN7EXAMPLE", None, id="ordinary-key"),
    pytest.param("1111222233334", None, id="13-digits"),
    pytest.param(None, None, id="unsigned"),
])
def test_account_convention(key: str | None, account: str | None) -> None:
    assert account_from_access_key(key) == account
