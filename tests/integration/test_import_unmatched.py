"""`hypergov import` of an org set up by hand (boto3, as a console user or a script would) with
things the tree cannot say: each is named in the report, nothing the endpoint holds is lost from
both the tree and the report, and nothing is invented.

Real: the embedded endpoint seeded with the example clusters (nothing applied), the objects
created here with boto3 (their values are the expectations), `hypergov import` as a CLI run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.integration.common import CONFIG, PROD, REGION, cli_env

pytestmark = pytest.mark.integration
GPU_WEST = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"  # config/clusters/gpu-west.yaml
EKS = "gpu-west-eks"
POLICY = "arn:aws:eks::aws:cluster-access-policy/"
OWNER = "arn:aws:iam::111122223333:role/PlatformAdministrator"


def _principal(name: str) -> str:
    return f"arn:aws:iam::{PROD}:{name}"


def _quota(sagemaker: Any, name: str, team: str, resources: list[dict[str, Any]], sharing: dict[str, Any],
           weight: int) -> None:
    sagemaker.create_compute_quota(Name=name, ClusterArn=GPU_WEST, ComputeQuotaConfig={
        "ComputeQuotaResources": resources, "ResourceSharingConfig": sharing, "PreemptTeamTasks": "LowerPriority"},
        ComputeQuotaTarget={"TeamName": team, "FairShareWeight": weight}, ActivationState="Enabled",
        Tags=[{"Key": "Project", "Value": team}, {"Key": "CostCentre", "Value": "CC-1042"},
              {"Key": "Owner", "Value": f"{team}-team"}, {"Key": "Environment", "Value": "production"}])


def _entry(eks: Any, principal: str, groups: list[str], policy: str | None, scope: dict[str, Any]) -> None:
    eks.create_access_entry(clusterName=EKS, principalArn=principal, kubernetesGroups=groups)
    if policy:
        eks.associate_access_policy(clusterName=EKS, principalArn=principal, policyArn=POLICY + policy,
                                    accessScope=scope)


def _budget(budgets: Any, name: str, amount: str) -> None:
    budgets.create_budget(AccountId=PROD, Budget={
        "BudgetName": name, "BudgetLimit": {"Amount": amount, "Unit": "USD"}, "TimeUnit": "MONTHLY",
        "BudgetType": "COST"}, NotificationsWithSubscribers=[{"Notification": {
            "NotificationType": "ACTUAL", "ComparisonOperator": "GREATER_THAN", "Threshold": t,
            "ThresholdType": "PERCENTAGE"}, "Subscribers": [{"SubscriptionType": "EMAIL", "Address": "a@example.com"}]}
            for t in (80.0, 100.0)])


def _console_org(endpoint: EmbeddedAwsProcess) -> None:
    sagemaker = endpoint.client("sagemaker", account=PROD, region=REGION)
    sagemaker.create_cluster_scheduler_config(Name="console-policy", ClusterArn=GPU_WEST, SchedulerConfig={
        "PriorityClasses": [{"Name": "training", "Weight": 60}, {"Name": "inference", "Weight": 100}],
        "FairShare": "Enabled", "IdleResourceSharing": "Enabled"})
    _quota(sagemaker, "vision-on-gpu-west", "vision", [{"InstanceType": "ml.p5.48xlarge", "Count": 12}],
           {"Strategy": "LendAndBorrow", "BorrowLimit": 50}, 30)
    _quota(sagemaker, "speech-quota", "speech", [{"InstanceType": "ml.g5.12xlarge", "Accelerators": 8}],
           {"Strategy": "DontLend"}, 20)
    _quota(sagemaker, "research-on-gpu-west", "research", [{"InstanceType": "ml.g5.12xlarge", "Count": 2}],
           {"Strategy": "LendAndBorrow", "BorrowLimit": 0}, 10)  # 0: the API's model allows it, AWS's docs 1-500
    iam = endpoint.client("iam", account=PROD, region=REGION)
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                                "Principal": {"AWS": f"arn:aws:iam::{PROD}:root"}}]})
    for role in ("vision-lead", "carol"):
        iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust)
    for user in ("alice", "bob"):
        iam.create_user(UserName=user)
    eks = endpoint.client("eks", account=PROD, region=REGION)
    namespace = {"type": "namespace", "namespaces": ["hyperpod-ns-vision"]}
    _entry(eks, _principal("role/vision-lead"), ["hyperpod-ns-vision-lead-group"], "AmazonEKSViewPolicy", namespace)
    _entry(eks, _principal("user/alice"), [], "AmazonEKSViewPolicy", namespace)
    _entry(eks, _principal("user/bob"), [], "AmazonEKSEditPolicy", namespace)  # the hand-made association
    _entry(eks, _principal("role/carol"), [], "AmazonEKSClusterAdminPolicy", {"type": "cluster"})
    budgets = endpoint.client("budgets", account=PROD, region="us-east-1")
    _budget(budgets, "acme-vision-monthly", "250000")
    _budget(budgets, "acme-ghost-monthly", "1000")  # hypergov's pattern, no such team
    _budget(budgets, "finance-q3", "5")  # not hypergov's pattern: not the import's


def test_what_the_tree_cannot_say_is_named(own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    _console_org(own_endpoint)
    out = tmp_path / "imported"
    result = CliRunner().invoke(main, ["import", "--cluster", GPU_WEST, "--org", str(CONFIG / "org.yaml"),
                                       "--owner", OWNER, "--out", str(out), "--json"],
                                env=cli_env(own_endpoint.endpoint_url, tmp_path))
    assert result.exit_code == 2, result.output
    items = json.loads(result.stdout)["items"]
    named = sorted((i["kind"], i["object"].split(" (")[0]) for i in items if i["kind"] != "invalid")
    assert named == [
        ("not-expressible", "ComputeQuota gpu-west/research"),  # BorrowLimit 0
        ("outside-personas", f"EKS access entry {_principal('user/bob')} on gpu-west"),
        ("renamed", "ClusterSchedulerConfig console-policy"),
        ("renamed", "ComputeQuota gpu-west/speech"),
        ("unmatched-budget", "budget acme-ghost-monthly"),
        ("unmatched-principal", f"EKS access entry {_principal('role/carol')} on gpu-west"),
    ]
    bob = next(i for i in items if i["kind"] == "outside-personas")
    assert bob["live"]["accessPolicies"] == [{"policyArn": POLICY + "AmazonEKSEditPolicy", "scope": {
        "type": "namespace", "namespaces": ["hyperpod-ns-vision"]}}]
    # what the live org lacks for hypergov's rules, each a named rule on the team's file
    assert {(i["file"], i["why"].split(":")[0]) for i in items if i["kind"] == "invalid"} <= {
        (f"projects/{t}.yaml", r) for t in ("speech", "research") for r in ("COST003", "IDN005")}
    # nothing lost, nothing invented: every team a file, exactly the members the entries give
    assert sorted(p.name for p in (out / "projects").iterdir()) == ["research.yaml", "speech.yaml", "vision.yaml"]
    vision = yaml.safe_load((out / "projects" / "vision.yaml").read_text())
    assert vision["members"] == {"ProjectLead": [_principal("role/vision-lead")], "Engineer": [],
                                 "Viewer": [_principal("user/alice")]}
    assert vision["budget"] == {"monthly_usd": 250000, "alert_at_percent": [80, 100]}
    assert vision["quotas"] == {"gpu-west": {"instances": {"ml.p5.48xlarge": 12}, "sharing": "LendAndBorrow",
                                             "borrow_limit_percent": 50}}
    speech = yaml.safe_load((out / "projects" / "speech.yaml").read_text())
    assert speech["quotas"] == {"gpu-west": {"resources": {"ml.g5.12xlarge": {"accelerators": 8}},
                                             "sharing": "DontLend"}}
    assert "borrow_limit_percent" not in yaml.safe_load((out / "projects" / "research.yaml").read_text())["quotas"][
        "gpu-west"]
    assert "finance-q3" not in result.stdout
