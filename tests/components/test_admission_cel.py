"""Every CEL expression hypergov declares compiles in a real CEL engine, the priority class names
the policy checks are the ones HyperPod task governance gives jobs, and the evaluator follows
Kubernetes' rules for ValidatingAdmissionPolicies and its list library."""

from __future__ import annotations

from typing import Any

import pytest
from test_admission_corpus import declared_policy
from test_kubernetes_schemas import objects

from components.admission_cel import AdmissionRequest, Verdict, compiled, evaluate_policy, expressions
from components.kueue import workload_priority_class


@pytest.mark.parametrize("source", [pytest.param(s, id=s) for s in ("example", "plain-eks")])
def test_every_declared_expression_compiles(source: str) -> None:
    """Every project stack, every cluster of the project, in the tree's modes and all in plain EKS."""
    policies = [o.body for o in objects(source) if o.kind == "ValidatingAdmissionPolicy"]
    assert len(policies) == 6  # vision, speech, recsys, nlp on gpu-west; nlp, research on trn-east
    texts = {e for p in policies for e in expressions(p["spec"])}
    assert len(texts) > 20
    for text in sorted(texts):
        compiled(text)  # raises on a syntax error or an unknown macro


def _allowed_priorities(spec: dict[str, Any]) -> str:
    return str(next(v["expression"] for v in spec["validations"] if "variables.priority in [" in v["expression"]))


def test_task_governance_priority_names_are_the_ones_aws_documents() -> None:
    """AWS, "Example HyperPod task governance AWS CLI commands"
    (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-operate-console-ui-governance-cli.html):
    "When a data scientist submits a job, they use one of the priority class names with the format
    `priority-class-name-priority`. In this example, `training-priority` refers to the priority
    class named "training"." vision's classes on gpu-west (task governance) use 'training' and
    'experimentation'."""
    assert _allowed_priorities(declared_policy("vision", "gpu-west")).endswith(
        "variables.priority in ['experimentation-priority', 'training-priority']")
    assert _allowed_priorities(declared_policy("speech", "gpu-west")).endswith(
        "variables.priority in ['inference-priority']")


def test_plain_eks_priority_names_are_the_ones_task_governance_gives_so_a_job_carries_one_label_everywhere() -> None:
    """On plain EKS hypergov declares the WorkloadPriorityClasses itself, named as task governance
    names its own (the AWS page above): a job manifest is the same on either kind of cluster."""
    assert _allowed_priorities(declared_policy("research", "trn-east")).endswith(
        "variables.priority in ['experimentation-priority']")
    assert workload_priority_class("experimentation", 20)["metadata"]["name"] == "experimentation-priority"


def _policy(**spec: Any) -> dict[str, Any]:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    return {"matchConstraints": {"resourceRules": rules}, **spec}


POD = AdmissionRequest(object={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, group="", resource="pods")


@pytest.mark.parametrize(("expression", "error"), [
    # https://kubernetes.io/docs/reference/using-api/cel/#kubernetes-list-library
    pytest.param("[1, 3].sum() == 4", False, id="sum"),
    pytest.param("[].sum() == 0", False, id="sum-of-nothing"),
    pytest.param("[1.5, 2.5].sum() == 4.0", False, id="sum-of-doubles"),
    pytest.param("[1, 2, 3].max() == 3", False, id="max"),
    pytest.param("[].max() == 0", True, id="max-of-nothing-is-an-error"),
    pytest.param("['a'].sum() == 0", True, id="sum-of-strings-is-an-error"),
])
def test_the_kubernetes_list_functions(expression: str, error: bool) -> None:
    result = evaluate_policy(_policy(validations=[{"expression": expression, "message": "false"}]), POD)
    if error:
        assert result.refusal is not None and "resulted in error" in result.refusal
    else:
        assert result == Verdict(applies=True, refusal=None)


def test_a_false_match_condition_means_the_policy_does_not_apply() -> None:
    spec = _policy(matchConditions=[{"name": "never", "expression": "false"}],
                   validations=[{"expression": "false", "message": "refused"}])
    assert evaluate_policy(spec, POD) == Verdict(applies=False, refusal=None)


def test_a_request_outside_the_match_constraints_is_not_checked() -> None:
    spec = _policy(validations=[{"expression": "false", "message": "refused"}])
    job = AdmissionRequest(object={"kind": "Job"}, group="batch", resource="jobs")
    assert evaluate_policy(spec, job) == Verdict(applies=False, refusal=None)


def test_variables_see_the_earlier_ones_and_fail_only_where_used() -> None:
    spec = _policy(variables=[{"name": "broken", "expression": "1 / 0"},
                              {"name": "two", "expression": "1 + 1"},
                              {"name": "four", "expression": "variables.two * 2"}],
                   validations=[{"expression": "variables.four == 4", "message": "arithmetic"},
                                {"expression": "true || variables.broken == 1", "message": "unused error"}])
    assert evaluate_policy(spec, POD) == Verdict(applies=True, refusal=None)
    failing = {**spec, "validations": [{"expression": "variables.broken == 1", "message": "m"}]}
    refusal = evaluate_policy(failing, POD).refusal
    assert refusal is not None and "resulted in error" in refusal


def test_the_first_failing_validation_gives_the_refusal() -> None:
    spec = _policy(validations=[{"expression": "true", "message": "a"}, {"expression": "false", "message": "b"},
                                {"expression": "false", "message": "c"}])
    assert evaluate_policy(spec, POD).refusal == "b"

