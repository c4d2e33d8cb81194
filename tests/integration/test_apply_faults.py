"""Faults during apply: throttling and 5xx are retried by the provider and the driver; an apply
that fails for good reports a clear error and leaves a state from which the next apply converges."""

from __future__ import annotations

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.outcomes import Refusal
from engines.plan import StackName
from tests.integration.conftest import PROD, REGION, EngineFactory, example_files

pytestmark = pytest.mark.integration

SPEECH = StackName("project-speech")
GPU_WEST = StackName("cluster-gpu-west")
ORG = StackName("org")


@pytest.fixture(scope="module", autouse=True)
def _org_applied(engine_for: EngineFactory) -> None:
    """The org stack first, as a pass orders them: the project's permission sets name the org's
    boundary policy, which Identity Center needs in the account to provision them."""
    engine = engine_for(example_files())
    first = engine.apply(ORG, engine.plan(ORG))
    if not first.ok:
        # On a loaded machine the provider may retry a CreatePolicy whose answer was late and get
        # "already exists" (seen in CI); the next plan adopts what the first apply made, as a
        # reconciler's next pass does.
        again = engine.apply(ORG, engine.plan(ORG))
        assert again.ok, (first.error, again.error)


def test_throttling_and_5xx_during_apply_are_retried(engine_for: EngineFactory, endpoint: EmbeddedAwsProcess) -> None:
    engine = engine_for(example_files())
    plan = engine.plan(SPEECH)
    endpoint.inject_fault("iam", "CreateRole", kind="throttle", times=2)
    endpoint.inject_fault("eks", "CreateAccessEntry", kind="5xx", times=1, status=503)
    result = engine.apply(SPEECH, plan)
    assert result.ok, result.error
    assert not endpoint.pending_faults()  # every injected fault was hit, and retried past
    roles = endpoint.client("iam", account=PROD, region=REGION).list_roles(PathPrefix="/hypergov/")["Roles"]
    assert "acme-speech-lead" in {r["RoleName"] for r in roles}  # speech-lead is an IAM role (speech.yaml)
    assert engine.plan(SPEECH).is_empty

    cluster = engine.plan(GPU_WEST)
    endpoint.inject_fault("sagemaker", "CreateComputeQuota", kind="throttle", times=2)
    assert engine.apply(GPU_WEST, cluster).ok
    assert engine.plan(GPU_WEST).is_empty


def test_failed_apply_is_reported_and_the_next_apply_converges(engine_for: EngineFactory,
                                                               endpoint: EmbeddedAwsProcess) -> None:
    base = engine_for(example_files())
    assert base.apply(SPEECH, base.plan(SPEECH)).ok  # start from the applied example
    files = example_files()
    files["projects/speech.yaml"] = files["projects/speech.yaml"].replace(b"monthly_usd: 120000", b"monthly_usd: 1")
    engine = engine_for(files)
    plan = engine.plan(SPEECH)
    assert [c.address for c in plan.actionable] == ["aws_budgets_budget.budget_ml-prod"]
    endpoint.inject_fault("budgets", "UpdateBudget", kind="5xx", times=None, status=500)
    try:
        failed = engine.apply(SPEECH, plan)
    finally:
        endpoint.clear_faults()
    assert not failed.ok and failed.error is not None
    assert "UpdateBudget" in failed.error.message or "updating Budget" in failed.error.message
    assert failed.error.kind == "temporary"  # a 500 that outlived the provider's retries: try again later
    retry = engine.plan(SPEECH)
    assert [c.address for c in retry.actionable] == ["aws_budgets_budget.budget_ml-prod"]
    assert engine.apply(SPEECH, retry).ok
    assert engine.plan(SPEECH).is_empty
    budget = endpoint.client("budgets", account=PROD, region="us-east-1").describe_budget(
        AccountId=PROD, BudgetName="acme-speech-monthly")["Budget"]
    assert float(budget["BudgetLimit"]["Amount"]) == 1.0


def test_apply_refuses_a_plan_whose_file_changed(engine_for: EngineFactory) -> None:
    files = example_files()
    files["projects/speech.yaml"] = files["projects/speech.yaml"].replace(b"monthly_usd: 120000", b"monthly_usd: 2")
    engine = engine_for(files)
    plan = engine.plan(SPEECH)
    (engine.workspace.stack_dir(SPEECH) / "hypergov.tfplan").write_bytes(b"tampered")
    result = engine.apply(SPEECH, plan)
    assert result.refusal is not None and "changed since it was reviewed" in result.refusal.message


def test_a_stack_whose_dependency_failed_is_not_applied(engine_for: EngineFactory,
                                                         endpoint: EmbeddedAwsProcess) -> None:
    base = engine_for(example_files())
    assert all(r.ok for r in base.apply_many([base.plan(GPU_WEST), base.plan(SPEECH)]))
    files = example_files()
    files["projects/speech.yaml"] = (files["projects/speech.yaml"]
                                     .replace(b"ml.g5.12xlarge: 8", b"ml.g5.12xlarge: 6")
                                     .replace(b"monthly_usd: 120000", b"monthly_usd: 3"))
    engine = engine_for(files)
    cluster, project = engine.plan(GPU_WEST), engine.plan(SPEECH)
    assert not cluster.is_empty and not project.is_empty
    endpoint.inject_fault("sagemaker", "UpdateComputeQuota", kind="5xx", times=None, status=500)
    try:
        failed, blocked = engine.apply_many([cluster, project])
    finally:
        endpoint.clear_faults()
    assert not failed.ok and failed.failed
    assert blocked.refusal == Refusal("dependency failed", "not applied: cluster-gpu-west failed")
    assert not blocked.applied
    budget = endpoint.client("budgets", account=PROD, region="us-east-1").describe_budget(
        AccountId=PROD, BudgetName="acme-speech-monthly")["Budget"]
    assert float(budget["BudgetLimit"]["Amount"]) != 3.0  # the project stack was left alone
    again = engine_for(files)
    assert all(r.ok for r in again.apply_many([again.plan(GPU_WEST), again.plan(SPEECH)]))
    assert again.plan(GPU_WEST).is_empty and again.plan(SPEECH).is_empty
