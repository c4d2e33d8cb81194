"""The demo's import step: a HyperPod cluster set up by hand, as a console user or a script
would (its scheduler config, two teams' compute quotas, EKS access entries into the team
namespaces, a budget), then `hypergov import` writes its tree and reports what the tree cannot
say: a quota not named as hypergov names it, an access policy no persona has."""

from __future__ import annotations

import json
from typing import Any

from embedded_aws.seed import InstanceGroup, SeedTarget, seed_hyperpod_cluster

ACCOUNT = "111122223333"  # ml-prod (config/org.yaml)
REGION = "us-west-2"
NAME = "console-west"
OWNER = "arn:aws:iam::111122223333:role/PlatformAdministrator"
POLICY = "arn:aws:eks::aws:cluster-access-policy/"


def _principals(endpoint: SeedTarget) -> tuple[str, str]:
    iam = endpoint.client("iam", account=ACCOUNT, region=REGION)
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}}]})
    lead = iam.create_role(RoleName="genomics-lead", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    dana = iam.create_user(UserName="dana")["User"]["Arn"]
    return str(lead), str(dana)


def _quota(sagemaker: Any, arn: str, *, name: str, team: str, resource: dict[str, Any],
           sharing: dict[str, Any], weight: int, cost_centre: str) -> None:
    sagemaker.create_compute_quota(Name=name, ClusterArn=arn, ActivationState="Enabled", ComputeQuotaConfig={
        "ComputeQuotaResources": [resource], "ResourceSharingConfig": sharing, "PreemptTeamTasks": "LowerPriority"},
        ComputeQuotaTarget={"TeamName": team, "FairShareWeight": weight},
        Tags=[{"Key": "Project", "Value": team}, {"Key": "CostCentre", "Value": cost_centre},
              {"Key": "Owner", "Value": f"{team}-team"}, {"Key": "Environment", "Value": "research"}])


def console_cluster(endpoint: SeedTarget) -> str:
    """Set the cluster up by hand with boto3; its ARN."""
    arn = seed_hyperpod_cluster(endpoint, name=NAME, eks_cluster_name=f"{NAME}-eks", account=ACCOUNT, region=REGION,
                                instance_groups=(InstanceGroup("g5", "ml.g5.12xlarge", 8),
                                                 InstanceGroup("p5", "ml.p5.48xlarge", 2)))
    sagemaker = endpoint.client("sagemaker", account=ACCOUNT, region=REGION)
    sagemaker.create_cluster_scheduler_config(Name=f"{NAME}-scheduler", ClusterArn=arn, SchedulerConfig={
        "PriorityClasses": [{"Name": "training", "Weight": 70}, {"Name": "experimentation", "Weight": 30}],
        "FairShare": "Enabled", "IdleResourceSharing": "Enabled"})
    _quota(sagemaker, arn, name=f"genomics-on-{NAME}", team="genomics", weight=20, cost_centre="CC-7001",
           resource={"InstanceType": "ml.g5.12xlarge", "Count": 4}, sharing={"Strategy": "LendAndBorrow",
                                                                              "BorrowLimit": 100})
    _quota(sagemaker, arn, name="robotics-team-quota", team="robotics", weight=20, cost_centre="CC-7002",
           resource={"InstanceType": "ml.p5.48xlarge", "Accelerators": 8}, sharing={"Strategy": "Lend"})
    lead, dana = _principals(endpoint)
    eks = endpoint.client("eks", account=ACCOUNT, region=REGION)
    for principal, groups, policy, team in ((lead, ["hyperpod-ns-genomics-lead-group"], "AmazonEKSViewPolicy",
                                             "genomics"), (dana, [], "AmazonEKSEditPolicy", "robotics")):
        eks.create_access_entry(clusterName=f"{NAME}-eks", principalArn=principal, kubernetesGroups=groups)
        eks.associate_access_policy(clusterName=f"{NAME}-eks", principalArn=principal, policyArn=POLICY + policy,
                                    accessScope={"type": "namespace", "namespaces": [f"hyperpod-ns-{team}"]})
    endpoint.client("budgets", account=ACCOUNT, region="us-east-1").create_budget(AccountId=ACCOUNT, Budget={
        "BudgetName": "acme-genomics-monthly", "BudgetLimit": {"Amount": "30000", "Unit": "USD"},
        "TimeUnit": "MONTHLY", "BudgetType": "COST"})
    return arn


def import_args(arn: str, *, org: str, out: str) -> list[str]:
    return ["import", "--cluster", arn, "--org", org, "--owner", OWNER, "--out", out]


def show_import(endpoint: SeedTarget, hypergov: Any, *, org: str, out: str) -> int:
    """The step: the console cluster, then `hypergov import` as a user runs it (its report shown);
    its exit status (2: imported with report items)."""
    arn = console_cluster(endpoint)
    done = hypergov(*import_args(arn, org=org, out=out), show=30)
    return int(done.returncode)
