"""Plan and apply for real: captured graphs through the real terraform and the HyperPod driver
against the embedded AWS endpoint, checked with boto3 against the endpoint (not our records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.plan import Action, Plan, StackName
from engines.showplan import changes_from_show
from engines.terraform.engine import PLAN_FILE
from engines.terraform.runner import TerraformRunner
from tests.integration.conftest import MANAGEMENT, PROD, REGION, EngineFactory, example_files

pytestmark = pytest.mark.integration

VISION = StackName("project-vision")
RECSYS = StackName("project-recsys")
GPU_WEST = StackName("cluster-gpu-west")
ORG = StackName("org")
STACKS = (ORG, GPU_WEST, VISION, RECSYS)


def _apply_all(engine_for: EngineFactory, files: dict[str, bytes]) -> None:
    """Planned together and applied by `apply_many`: org first, then the cluster, then both
    projects side by side (two at a time), as `hypergov apply` does."""
    engine = engine_for(files)
    plans = engine.plan_many(STACKS)
    started: list[str] = []
    results = engine.apply_many([p for p in plans.values() if isinstance(p, Plan)], on_start=started.append)
    assert [r.stack for r in results] == list(STACKS)
    for result in results:
        assert result.ok, (result.stack, result.error, result.refusal, result.failed)
    assert started[:2] == [ORG, GPU_WEST] and set(started[2:]) == {VISION, RECSYS}


@pytest.fixture(scope="module")
def applied(engine_for: EngineFactory) -> None:
    _apply_all(engine_for, example_files())


def test_apply_creates_what_the_config_says(applied: None, endpoint: EmbeddedAwsProcess) -> None:
    iam = endpoint.client("iam", account=PROD, region=REGION)
    roles = {r["RoleName"]: r for r in iam.list_roles(PathPrefix="/hypergov/")["Roles"]}
    assert {"acme-vision-lead", "acme-vision-engineer", "acme-recsys-lead",
            "acme-recsys-engineer"} <= set(roles)
    role = iam.get_role(RoleName="acme-vision-engineer")["Role"]
    assert role["PermissionsBoundary"]["PermissionsBoundaryArn"] == \
        f"arn:aws:iam::{PROD}:policy/acme-hypergov-permissions-boundary"
    assert {t["Key"]: t["Value"] for t in role["Tags"]}["CostCentre"] == "CC-1042"

    eks = endpoint.client("eks", account=PROD, region=REGION)
    entries = eks.list_access_entries(clusterName="gpu-west-eks")["accessEntries"]
    assert f"arn:aws:iam::{PROD}:role/hypergov/acme-vision-engineer" in entries
    entry = eks.describe_access_entry(clusterName="gpu-west-eks",
                                      principalArn=f"arn:aws:iam::{PROD}:role/hypergov/acme-vision-engineer")
    assert entry["accessEntry"]["kubernetesGroups"] == ["hyperpod-ns-vision-engineer-group"]
    scopes = eks.list_associated_access_policies(
        clusterName="gpu-west-eks", principalArn=f"arn:aws:iam::{PROD}:role/hypergov/acme-vision-engineer")
    assert [p["accessScope"] for p in scopes["associatedAccessPolicies"]] == [
        {"type": "namespace", "namespaces": ["hyperpod-ns-vision"]}]

    # the org layer's Platform Administrator: outside the boundary, cluster admin on the cluster
    admin = iam.get_role(RoleName="acme-platform-administrator")["Role"]
    assert admin["Path"] == "/hypergov-platform/" and "PermissionsBoundary" not in admin
    scopes = eks.list_associated_access_policies(clusterName="gpu-west-eks", principalArn=admin["Arn"])
    assert [(p["policyArn"], p["accessScope"]["type"]) for p in scopes["associatedAccessPolicies"]] == [
        ("arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy", "cluster")]

    organizations = endpoint.client("organizations", account=MANAGEMENT, region="us-east-1")
    attached = organizations.list_policies_for_target(TargetId="ou-ml01-platform1", Filter="SERVICE_CONTROL_POLICY")
    (scp,) = [p for p in attached["Policies"] if p["Name"] == "acme-hypergov-maximum-boundary"]
    content = json.loads(organizations.describe_policy(PolicyId=scp["Id"])["Policy"]["Content"])
    denied = {a for st in content["Statement"] for a in _as_list(st.get("Action") or st.get("NotAction"))}
    assert {"iam:*", "organizations:*"} <= denied
    boundary = iam.get_policy(PolicyArn=f"arn:aws:iam::{PROD}:policy/acme-hypergov-permissions-boundary")
    assert boundary["Policy"]["DefaultVersionId"]

    budgets = endpoint.client("budgets", account=PROD, region="us-east-1")
    budget = budgets.describe_budget(AccountId=PROD, BudgetName="acme-vision-monthly")["Budget"]
    assert float(budget["BudgetLimit"]["Amount"]) == 250000.0

    sagemaker = endpoint.client("sagemaker", account=PROD, region=REGION)
    quotas = {q["Name"]: q for q in sagemaker.list_compute_quotas()["ComputeQuotaSummaries"]}
    assert set(quotas) == {"vision-on-gpu-west", "nlp-on-gpu-west", "speech-on-gpu-west", "recsys-on-gpu-west"}
    vision = sagemaker.describe_compute_quota(ComputeQuotaId=quotas["vision-on-gpu-west"]["ComputeQuotaId"])
    assert vision["ComputeQuotaConfig"]["ComputeQuotaResources"][0]["Count"] == 12
    assert vision["ComputeQuotaConfig"]["ResourceSharingConfig"] == {"Strategy": "LendAndBorrow", "BorrowLimit": 50}
    assert vision["ComputeQuotaTarget"] == {"TeamName": "vision", "FairShareWeight": 30}


def _as_list(value: object) -> list[str]:
    return [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]


def test_second_plan_is_empty(applied: None, engine_for: EngineFactory) -> None:
    engine = engine_for(example_files())
    for stack in STACKS:
        plan = engine.plan(stack)
        assert plan.is_empty, [c.address for c in plan.actionable]
    # applying an empty plan changes nothing and still says what stays unapplied (no kubeconfig)
    result = engine.apply(VISION, plan := engine.plan(VISION))
    assert result.ok and not result.applied
    assert result.skipped == tuple(c for c in plan.changes if c.note) and result.skipped


def test_a_plan_with_nothing_to_do_is_the_plan_show_gives_without_running_show(
        applied: None, engine_for: EngineFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`plan -detailed-exitcode` 0: the engine skips `show -json` (a provider start) and still
    returns what show would have given, every configured resource as a no-op."""
    engine = engine_for(example_files())
    real_show = TerraformRunner.show_json
    shown: list[str] = []

    def recording_show(runner: TerraformRunner, cwd: Path, planfile: str) -> dict[str, Any]:
        shown.append(cwd.name)
        return real_show(runner, cwd, planfile)

    monkeypatch.setattr(TerraformRunner, "show_json", recording_show)
    for stack in (ORG, VISION):
        plan = engine.plan(stack)
        directory = engine.workspace.stack_dir(stack)
        from_show = changes_from_show(real_show(engine.runner, directory, PLAN_FILE))
        declared = json.loads((directory / "main.tf.json").read_text())["resource"]
        assert from_show and all(c.action is Action.NOOP for c in from_show)
        assert {c.address for c in from_show} == {f"{t}.{n}" for t, body in declared.items() for n in body}
        assert tuple(c for c in plan.changes if c.executor == "terraform") == from_show
    assert shown == []


def test_one_field_change_plans_exactly_that_change(applied: None, engine_for: EngineFactory) -> None:
    files = example_files()
    files["projects/vision.yaml"] = files["projects/vision.yaml"].replace(
        b"monthly_usd: 250000", b"monthly_usd: 260000").replace(b"ml.p5.48xlarge: 12", b"ml.p5.48xlarge: 10")
    engine = engine_for(files)
    project = engine.plan(VISION)
    assert [(c.address, c.action) for c in project.actionable] == [
        ("aws_budgets_budget.budget_ml-prod", Action.UPDATE)]
    assert [a.path for a in project.actionable[0].attributes] == ["limit_amount"]
    cluster = engine.plan(GPU_WEST)
    assert [(c.address, c.action) for c in cluster.actionable] == [
        ("hyperpod:ComputeQuota:vision-on-gpu-west", Action.UPDATE)]
    (attr,) = cluster.actionable[0].attributes
    assert attr.path == "ComputeQuotaConfig.ComputeQuotaResources[0].Count" and (attr.before, attr.after) == (12, 10)


def test_deleting_a_project_destroys_exactly_its_resources(applied: None, engine_for: EngineFactory,
                                                          endpoint: EmbeddedAwsProcess) -> None:
    files = {k: v for k, v in example_files().items() if k != "projects/recsys.yaml"}
    engine = engine_for(files)
    declared = json.loads((engine.workspace.stack_dir(RECSYS) / "main.tf.json").read_text())["resource"]
    destroy = engine.plan_destroy(RECSYS)
    assert {c.address for c in destroy.actionable} == {f"{t}.{n}" for t, body in declared.items() for n in body}
    assert all(c.action is Action.DELETE for c in destroy.actionable)
    cluster = engine.plan(GPU_WEST)
    assert [(c.address, c.action) for c in cluster.actionable] == [
        ("hyperpod:ComputeQuota:recsys-on-gpu-west", Action.DELETE)]
    assert engine.apply(RECSYS, destroy).ok
    assert engine.apply(GPU_WEST, cluster).ok
    iam = endpoint.client("iam", account=PROD, region=REGION)
    names = {r["RoleName"] for r in iam.list_roles(PathPrefix="/hypergov/")["Roles"]}
    assert not {n for n in names if "recsys" in n} and "acme-vision-engineer" in names
    assert engine.plan(VISION).is_empty
