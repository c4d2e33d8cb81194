"""Request validation from botocore's models: every constraint kind, AWS's message format,
anchored Java-style patterns, and output shaping."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest
from hypothesis import given
from hypothesis import strategies as st

from embedded_aws.modelcheck import (
    Violation,
    check_input,
    missing_required_output,
    shape_output,
    validation_message,
)

SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")
CREATE_QUOTA = SAGEMAKER.operation_model("CreateComputeQuota").input_shape
ARN = "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef123456"
VALID: dict[str, Any] = {"Name": "nlp-on-gpu", "ClusterArn": ARN, "ComputeQuotaTarget": {"TeamName": "nlp"},
                         "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge",
                                                                           "Count": 2}]}}


def with_change(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    import copy

    params = copy.deepcopy(VALID)
    target: Any = params
    for key in path[:-1]:
        target = target[key]
    if value is None:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return params


@pytest.mark.parametrize(("path", "value", "where", "constraint"), [
    pytest.param(("Name",), None, "name", "Member must not be null", id="required"),
    pytest.param(("Name",), "nlp_on_gpu", "name", "regular expression pattern", id="pattern"),
    pytest.param(("Name",), "x" * 64, "name", "length less than or equal to 63", id="max-length"),
    pytest.param(("ClusterArn",), "arn:aws:sagemaker:us-west-2:111122223333:cluster/gpu", "clusterArn",
                 "regular expression pattern", id="cluster-arn-needs-id"),
    pytest.param(("ComputeQuotaConfig", "ComputeQuotaResources", 0, "InstanceType"), "ml.p9.huge",
                 "computeQuotaConfig.computeQuotaResources.1.member.instanceType", "enum value set", id="enum"),
    pytest.param(("ComputeQuotaConfig", "ComputeQuotaResources", 0, "Count"), -1,
                 "computeQuotaConfig.computeQuotaResources.1.member.count", "greater than or equal to 0", id="min"),
    pytest.param(("ComputeQuotaConfig", "ComputeQuotaResources", 0, "Count"), "two",
                 "computeQuotaConfig.computeQuotaResources.1.member.count", "an integer", id="type"),
    pytest.param(("ComputeQuotaTarget", "FairShareWeight"), 101, "computeQuotaTarget.fairShareWeight",
                 "less than or equal to 100", id="max"),
    pytest.param(("ComputeQuotaConfig", "ComputeQuotaResources"), [{"InstanceType": "ml.c5.large"}] * 16,
                 "computeQuotaConfig.computeQuotaResources", "length less than or equal to 15", id="list-max"),
])
def test_each_constraint_kind_is_reported(path: tuple[str | int, ...], value: Any, where: str,
                                          constraint: str) -> None:
    violations = check_input(CREATE_QUOTA, with_change(path, value))

    assert {v.path for v in violations} == {where}
    assert any(constraint in v.constraint for v in violations)


def test_valid_input_has_no_violations() -> None:
    assert check_input(CREATE_QUOTA, VALID) == []


def test_message_matches_aws_format() -> None:
    violations = [Violation("name", "a_b", "Member must satisfy regular expression pattern: x"),
                  Violation("clusterArn", None, "Member must not be null")]

    assert validation_message(violations) == (
        "2 validation errors detected: Value 'a_b' at 'name' failed to satisfy constraint: Member must satisfy "
        "regular expression pattern: x; Value null at 'clusterArn' failed to satisfy constraint: Member must not "
        "be null")


@pytest.mark.parametrize(("description", "valid"), [
    pytest.param("Quota for the NLP team, 2025 — ünïcode ok", True, id="letters-punctuation-unicode"),
    pytest.param("tab\tis a control character", False, id="control-character"),
])
def test_java_unicode_classes_are_understood(description: str, valid: bool) -> None:
    violations = check_input(CREATE_QUOTA, {**VALID, "Description": description})

    assert (violations == []) is valid


@given(st.text(alphabet="ab-_", min_size=1, max_size=8))
def test_patterns_must_match_the_whole_value(name: str) -> None:
    import re

    violations = check_input(CREATE_QUOTA, {**VALID, "Name": name})

    assert (violations == []) == bool(re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", name))


def test_output_is_cut_to_the_model_and_completeness_is_checked() -> None:
    shape = SAGEMAKER.operation_model("DescribeComputeQuota").output_shape
    stored = {"ComputeQuotaArn": "arn", "ComputeQuotaId": "abcdef123456", "Name": "n", "Internal": "secret",
              "ComputeQuotaTarget": {"TeamName": "nlp", "Extra": 1}, "Description": None}

    shaped = shape_output(shape, stored)

    assert shaped == {"ComputeQuotaArn": "arn", "ComputeQuotaId": "abcdef123456", "Name": "n",
                      "ComputeQuotaTarget": {"TeamName": "nlp"}}
    assert missing_required_output(shape, shaped) == ["ComputeQuotaVersion", "Status", "CreationTime"]
