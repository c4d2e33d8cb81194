"""`hypergov drift` finds what happened to live state: the whole example tree is applied with the
real terraform against the embedded endpoint, and the live scan of the org reports nothing; then
objects are changed, deleted and created out of band with boto3 (as a person in the console
would): HyperPod compute quotas and the scheduler config, EKS access entries, the SCP on the OU,
a budget, IAM roles; the scan must report exactly those, as the right kind with the right
attributes and who changed them, and nothing else; `--remediate` and `--prune-unmanaged` repair
them with audit records. Expected values come from the config files, AWS's documentation and
the endpoint (STS names the out-of-band caller), never from hypergov's own output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.integration.conftest import PROD, REGION, audit_records, restore_applied_example

pytestmark = pytest.mark.integration
GPU_WEST = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"  # config/clusters/gpu-west.yaml
MANAGEMENT = "123456789012"  # the embedded Organization's management account (the caller's own)
OU = "ou-ml01-platform1"  # config/org.yaml organizational_unit


@pytest.fixture(scope="module")
def env(endpoint: EmbeddedAwsProcess, applied_example: Path,
        tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example tree in a Git repository, every stack applied (a copy of the run's snapshot)."""
    return restore_applied_example(applied_example, endpoint, tmp_path_factory.mktemp("live-drift"))


def drift(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, ["drift", *args], env=env)


def report(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def sagemaker(endpoint: EmbeddedAwsProcess) -> Any:
    return endpoint.client("sagemaker", account=PROD, region=REGION)


def live_quotas(endpoint: EmbeddedAwsProcess) -> dict[str, dict[str, Any]]:
    summaries = sagemaker(endpoint).list_compute_quotas(ClusterArn=GPU_WEST)["ComputeQuotaSummaries"]
    return {s["Name"]: s for s in summaries}


def test_after_apply_the_scan_reports_nothing(env: dict[str, str]) -> None:
    result = drift(env, "--json")
    assert result.exit_code == 0, result.output
    scanned = report(result)
    assert (scanned["items"], scanned["complete"], scanned["errors"]) == ([], True, [])
    # IAM: per account (config/org.yaml has two) one GetAccountAuthorizationDetails page and one
    # ListRoles page, never a call per role; and per account one ListRoles page under Identity
    # Center's path, which finds the roles of every permission set there (the `access-sso-*`
    # entries' principals), not one call per role read.
    assert scanned["api_calls_by_service"]["iam"] == 2 * 2 + 2
    assert len(scanned["commit"]) == 40 and scanned["scanned_at"].endswith("+00:00")
    text = drift(env, "--stack", "cluster-gpu-west")
    assert text.exit_code == 0 and "cluster-gpu-west: in sync" in text.stdout, text.output
    # One task-governance cluster (trn-east is plain EKS): its quotas in one page, its scheduler
    # configs listed and the one described; never a call per quota.
    assert scanned["api_calls_by_service"]["sagemaker"] == 3
    assert "not read: Kubernetes objects of cluster gpu-west: no kubeconfig configured" in text.stderr


def test_out_of_band_changes_are_found_exactly_and_apply_restores_them(endpoint: EmbeddedAwsProcess,
                                                                       env: dict[str, str]) -> None:
    client = sagemaker(endpoint)
    who = endpoint.client("sts", account=PROD, region=REGION).get_caller_identity()["Arn"]
    quotas = live_quotas(endpoint)
    vision = quotas["vision-on-gpu-west"]  # config/projects/vision.yaml: 12 p5, LendAndBorrow 50, weight 30
    client.update_compute_quota(
        ComputeQuotaId=vision["ComputeQuotaId"], TargetVersion=vision["ComputeQuotaVersion"],
        ComputeQuotaConfig={**vision["ComputeQuotaConfig"],
                            "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 16}],
                            "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 80}},
        ComputeQuotaTarget={"TeamName": "vision", "FairShareWeight": 35})
    (config,) = client.list_cluster_scheduler_configs(ClusterArn=GPU_WEST)["ClusterSchedulerConfigSummaries"]
    described = client.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config["ClusterSchedulerConfigId"])
    weights = {"inference": 100, "training": 75, "experimentation": 20}  # training: 60 in gpu-west.yaml
    client.update_cluster_scheduler_config(
        ClusterSchedulerConfigId=config["ClusterSchedulerConfigId"],
        TargetVersion=described["ClusterSchedulerConfigVersion"],
        SchedulerConfig={**described["SchedulerConfig"],
                         "PriorityClasses": [{"Name": n, "Weight": w} for n, w in weights.items()]})
    client.delete_compute_quota(ComputeQuotaId=quotas["speech-on-gpu-west"]["ComputeQuotaId"])
    client.create_compute_quota(
        Name="interns-by-hand", ClusterArn=GPU_WEST, ComputeQuotaTarget={"TeamName": "interns", "FairShareWeight": 5},
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 1}],
                            "ResourceSharingConfig": {"Strategy": "DontLend"}})

    result = drift(env, "--json")
    assert result.exit_code == 2, result.output
    scanned = report(result)
    where = {"stack": "cluster-gpu-west", "account": PROD, "region": REGION}
    items = {i["address"]: i for i in scanned["items"]}
    assert sorted(items) == ["hyperpod:ClusterSchedulerConfig:gpu-west-scheduler",
                             "hyperpod:ComputeQuota:interns-by-hand", "hyperpod:ComputeQuota:speech-on-gpu-west",
                             "hyperpod:ComputeQuota:vision-on-gpu-west"]  # nothing else
    quota = items["hyperpod:ComputeQuota:vision-on-gpu-west"]
    assert {k: quota[k] for k in (*where, "kind", "type", "changed_by")} == {
        **where, "kind": "changed", "type": "sagemaker:ComputeQuota", "changed_by": who}
    assert quota["attributes"] == [
        {"path": "ComputeQuotaConfig.ComputeQuotaResources[0].Count", "expected": 12, "live": 16},
        {"path": "ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", "expected": 50, "live": 80},
        {"path": "ComputeQuotaTarget.FairShareWeight", "expected": 30, "live": 35}]
    assert quota["fix"] == "hypergov apply --stack cluster-gpu-west restores it" and quota["changed_at"]
    policy = items["hyperpod:ClusterSchedulerConfig:gpu-west-scheduler"]
    assert (policy["kind"], policy["changed_by"]) == ("changed", who)
    assert policy["attributes"] == [  # classes compared by name: experimentation, inference, training
        {"path": "SchedulerConfig.PriorityClasses[2].Weight", "expected": 60, "live": 75}]
    speech = items["hyperpod:ComputeQuota:speech-on-gpu-west"]
    assert (speech["kind"], speech["attributes"], speech["changed_by"]) == ("missing", [], None)
    stranger = items["hyperpod:ComputeQuota:interns-by-hand"]
    assert (stranger["kind"], stranger["changed_by"]) == ("unmanaged", who)
    assert stranger["fix"] == "delete it, or give team interns quota on gpu-west in the tree"
    assert {"path": "ComputeQuotaTarget", "expected": None,
            "live": {"TeamName": "interns", "FairShareWeight": 5}} in stranger["attributes"]
    assert scanned["complete"] is True
    assert scanned["api_calls_by_service"]["sagemaker"] == 5  # the 3 reads, a Describe per drifted quota (who)
    text = drift(env, "--stack", "cluster-gpu-west")
    assert text.exit_code == 2 and "cluster-gpu-west: DRIFTED" in text.stdout, text.output
    assert "ComputeQuotaTarget.FairShareWeight: 30 -> 35" in text.stdout
    assert f"changed   hyperpod:ComputeQuota:vision-on-gpu-west ({PROD} {REGION}) by {who}" in text.stdout

    repo = git.Repo(env["HYPERGOV_CONFIG_DIR"], search_parent_directories=True)
    before = len(audit_records(repo.working_dir))
    repaired = drift(env, "--remediate", "--yes", "--stack", "cluster-gpu-west")
    assert repaired.exit_code == 2, repaired.output  # repaired, but the unmanaged quota is left (not pruned)
    intent, *record = audit_records(repo.working_dir)[before:]
    assert (intent["type"], intent["reason"], [s["stack"] for s in intent["stacks"]]) == (
        "intent", "drift repair", ["cluster-gpu-west"])
    assert [(r["stack"], r["reason"], r["outcome"]) for r in record] == [("cluster-gpu-west", "drift repair",
                                                                          "applied")]
    assert record[0]["drift"] == ["changed hyperpod:ClusterSchedulerConfig:gpu-west-scheduler",
                                  "changed hyperpod:ComputeQuota:vision-on-gpu-west",
                                  "missing hyperpod:ComputeQuota:speech-on-gpu-west"]
    left = report(drift(env, "--json"))["items"]
    assert [(i["kind"], i["address"]) for i in left] == [("unmanaged", "hyperpod:ComputeQuota:interns-by-hand")]
    before = len(audit_records(repo.working_dir))
    pruned = drift(env, "--prune-unmanaged", "--yes")
    assert pruned.exit_code == 0, pruned.output
    assert "interns-by-hand" not in live_quotas(endpoint)  # deleted, and nothing else
    assert sorted(live_quotas(endpoint)) == ["nlp-on-gpu-west", "recsys-on-gpu-west", "speech-on-gpu-west",
                                             "vision-on-gpu-west"]  # projects/*.yaml with quota on gpu-west
    prune_intent, prune_record = audit_records(repo.working_dir)[before:]  # the intent before any delete
    assert prune_intent["stacks"] == [{"stack": "cluster-gpu-west",
                                       "actions": ["delete hyperpod:ComputeQuota:interns-by-hand"]}]
    assert prune_record["intent"] == prune_intent["intent"]
    assert (prune_record["reason"], prune_record["outcome"]) == ("prune unmanaged", "applied")
    assert [(o["address"], o["outcome"]) for o in prune_record["objects"]] == [
        ("hyperpod:ComputeQuota:interns-by-hand", "deleted")]
    assert drift(env).exit_code == 0


def test_a_throttled_list_makes_the_scan_incomplete(endpoint: EmbeddedAwsProcess, env: dict[str, str]) -> None:
    endpoint.inject_fault("sagemaker", "ListComputeQuotas", kind="throttle", times=None)
    try:
        result = drift(env, "--json", "--stack", "cluster-gpu-west")
    finally:
        endpoint.clear_faults()
    assert result.exit_code == 1, result.output  # never "no drift"
    scanned = report(result)
    assert (scanned["complete"], scanned["items"]) == (False, [])
    (error,) = scanned["errors"]
    assert (error["stack"], error["error"]["kind"], error["error"]["reason"]) == (
        "cluster-gpu-west", "temporary", "throttled")
    assert GPU_WEST in error["scanning"]
    text = drift(env, "--stack", "cluster-gpu-west")
    assert text.exit_code == 0  # the fault is gone: the same scan is complete again


def test_access_entries_the_scp_and_a_budget_changed_by_hand_are_found_and_repaired(
        endpoint: EmbeddedAwsProcess, env: dict[str, str]) -> None:
    eks = endpoint.client("eks", account=PROD, region=REGION)
    orgs = endpoint.client("organizations", account=MANAGEMENT, region="us-east-1")
    budgets = endpoint.client("budgets", account=PROD, region="us-east-1")
    iam = endpoint.client("iam", account=PROD, region=REGION)
    # components: <org>-<project>-<persona>; nlp's lead has an IAM member (its Engineers come only
    # through Identity Center, so no acme-nlp-engineer role exists)
    lead = f"arn:aws:iam::{PROD}:role/hypergov/acme-nlp-lead"
    eks.delete_access_entry(clusterName="gpu-west-eks", principalArn=lead)  # config/clusters/gpu-west.yaml
    outsider = iam.create_role(RoleName="contractor", AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                "Principal": {"AWS": f"arn:aws:iam::{PROD}:root"}}]}))["Role"]["Arn"]
    eks.create_access_entry(clusterName="gpu-west-eks", principalArn=outsider,
                            kubernetesGroups=["hyperpod-ns-nlp-engineer-group"])  # nlp's Engineer group
    (scp,) = [p for p in orgs.list_policies_for_target(TargetId=OU, Filter="SERVICE_CONTROL_POLICY")["Policies"]
              if not p["AwsManaged"]]
    orgs.detach_policy(PolicyId=scp["Id"], TargetId=OU)
    budget = budgets.describe_budget(AccountId=PROD, BudgetName="acme-nlp-monthly")["Budget"]
    budgets.update_budget(AccountId=PROD, NewBudget={**budget, "BudgetLimit": {"Amount": "999999", "Unit": "USD"}})

    result = drift(env, "--json")
    assert result.exit_code == 2, result.output
    items = {(i["kind"], i["address"]): i for i in report(result)["items"]}
    kinds = sorted((kind, item["stack"]) for (kind, _), item in items.items())
    assert kinds == [("changed", "project-nlp"), ("missing", "org"), ("missing", "project-nlp"),
                     ("missing", "project-nlp"), ("unmanaged", "project-nlp")], sorted(items)
    assert ("missing", "aws_eks_access_entry.access-lead_gpu-west") in items
    assert ("missing", "aws_eks_access_policy_association.access-policy-lead_gpu-west") in items
    assert ("missing", "aws_organizations_policy_attachment.scp-attachment") in items
    (limit,) = [i for (kind, _), i in items.items() if kind == "changed"]
    assert (limit["address"], limit["attributes"]) == ("aws_budgets_budget.budget_ml-prod", [
        {"path": "limitAmount", "expected": "171428.57", "live": "999999"}])  # 400000 * 3/7: ml-prod's share
    (stranger,) = [i for (kind, _), i in items.items() if kind == "unmanaged"]
    assert "contractor" in stranger["address"] and stranger["region"] == REGION
    assert {"path": "kubernetesGroups", "expected": None, "live": ["hyperpod-ns-nlp-engineer-group"]} in \
        stranger["attributes"], stranger

    repo = git.Repo(env["HYPERGOV_CONFIG_DIR"], search_parent_directories=True)
    before = len(audit_records(repo.working_dir))
    repaired = drift(env, "--remediate", "--prune-unmanaged", "--yes")
    assert repaired.exit_code == 0, repaired.output
    records = [r for r in audit_records(repo.working_dir)[before:] if r["type"] != "intent"]
    assert sorted((r.get("stack", "(prune)"), r["reason"]) for r in records) == [
        ("(prune)", "prune unmanaged"), ("org", "drift repair"), ("project-nlp", "drift repair")]
    assert drift(env).exit_code == 0
    assert [e for e in eks.list_access_entries(clusterName="gpu-west-eks")["accessEntries"] if e == outsider] == []
    assert lead in eks.list_access_entries(clusterName="gpu-west-eks")["accessEntries"]


def test_iam_boundary_removed_and_hand_made_role_are_found_and_repaired(endpoint: EmbeddedAwsProcess,
                                                                        env: dict[str, str]) -> None:
    iam = endpoint.client("iam", account=PROD, region=REGION)
    boundary = f"arn:aws:iam::{PROD}:policy/acme-hypergov-permissions-boundary"  # naming: <org>-hypergov-...
    iam.delete_role_permissions_boundary(RoleName="acme-nlp-lead")  # config/projects/nlp.yaml: ravi leads
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                     "Principal": {"AWS": f"arn:aws:iam::{PROD}:root"}}]}
    iam.create_role(RoleName="console-made", Path="/hypergov/", AssumeRolePolicyDocument=json.dumps(trust),
                    PermissionsBoundary=boundary)
    result = drift(env, "--json")
    assert result.exit_code == 2, result.output
    items = {(i["kind"], i["address"]): i for i in report(result)["items"]}
    assert sorted(items) == [("unbounded", "aws_iam_role.role-lead_ml-prod"),
                             ("unmanaged", "aws_iam_role.console-made")]  # nothing else
    unbounded = items[("unbounded", "aws_iam_role.role-lead_ml-prod")]
    assert (unbounded["stack"], unbounded["account"], unbounded["attributes"], unbounded["fix"]) == (
        "project-nlp", PROD, [{"path": "permissionsBoundary", "expected": boundary, "live": None}],
        "hypergov apply --stack project-nlp re-attaches the boundary")
    assert items[("unmanaged", "aws_iam_role.console-made")]["stack"] == "org"

    restored = drift(env, "--remediate", "--yes")
    assert restored.exit_code == 2, restored.output  # the boundary is back; the hand-made role is left
    assert iam.get_role(RoleName="acme-nlp-lead")["Role"]["PermissionsBoundary"]["PermissionsBoundaryArn"] == boundary
    (left,) = report(drift(env, "--json"))["items"]
    assert (left["kind"], left["address"]) == ("unmanaged", "aws_iam_role.console-made")
    pruned = drift(env, "--prune-unmanaged", "--yes")
    assert pruned.exit_code == 0, pruned.output
    roles = {r["RoleName"] for r in iam.list_roles(PathPrefix="/hypergov/")["Roles"]}
    assert "console-made" not in roles and "acme-nlp-lead" in roles
    assert drift(env).exit_code == 0
