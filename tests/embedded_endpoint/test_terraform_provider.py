"""The real Terraform AWS provider creates, reads, updates and re-plans every governed resource
type against the embedded endpoint: proof that every operation it calls exists and answers as
AWS does (an empty `plan -detailed-exitcode` after apply means every read matched the write),
and that injected faults reach a non-Python client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws import EmbeddedAwsProcess
from embedded_aws.terraform import provider_block

from .tfsupport import Terraform, module_terraform

ACCOUNT = "111122223333"
REGION = "us-west-2"
EKS_CLUSTER = "gpu-west-eks"

pytestmark = pytest.mark.integration


def _policy(*actions: str) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": list(actions),
                                                               "Resource": "*"}]})


def stack(endpoint: str, *, ou_id: str, revision: int) -> dict[str, Any]:
    """A project's resources; revision 2 changes something in every resource type."""
    second = revision == 2
    tags = {"Project": "nlp", "CostCentre": "CC-2000" if second else "CC-1000"}
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                                "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}}]})
    return {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "5.100.0"}}},
        # max_retries is the provider's attempt count (1 = no retry); 2 lets it absorb one injected throttle.
        "provider": {"aws": provider_block(endpoint, region=REGION, account=ACCOUNT, max_retries=2)},
        "resource": {
            "aws_organizations_policy": {"boundary": {
                "name": "acme-hypergov-maximum-boundary", "type": "SERVICE_CONTROL_POLICY", "tags": tags,
                "content": _policy("sagemaker:*", "eks:Describe*") if second else _policy("sagemaker:*")}},
            "aws_organizations_policy_attachment": {"boundary": {
                "policy_id": "${aws_organizations_policy.boundary.id}", "target_id": ou_id}},
            "aws_iam_policy": {
                "boundary": {"name": "acme-hypergov-permissions-boundary", "policy": _policy("sagemaker:*"),
                             "tags": tags},
                "access": {"name": "acme-nlp-lead-access", "tags": tags,
                           "policy": _policy("sagemaker:DescribeCluster", *(["sagemaker:ListClusters"] * second))}},
            "aws_iam_role": {"lead": {"name": "acme-nlp-lead", "assume_role_policy": trust, "tags": tags,
                                      "permissions_boundary": "${aws_iam_policy.boundary.arn}"}},
            "aws_iam_role_policy_attachment": {"lead": {"role": "${aws_iam_role.lead.name}",
                                                        "policy_arn": "${aws_iam_policy.access.arn}"}},
            "aws_budgets_budget": {"nlp": {
                "name": "acme-nlp-monthly", "budget_type": "COST", "limit_unit": "USD", "time_unit": "MONTHLY",
                "limit_amount": "2000.0" if second else "1000.0", "tags": tags,
                "notification": [{"comparison_operator": "GREATER_THAN", "threshold": 90 if second else 80,
                                  "threshold_type": "PERCENTAGE", "notification_type": "ACTUAL",
                                  "subscriber_email_addresses": ["lead@example.com"]}]}},
            "aws_eks_access_entry": {"lead": {
                "cluster_name": EKS_CLUSTER, "principal_arn": "${aws_iam_role.lead.arn}", "tags": tags,
                "kubernetes_groups": ["hyperpod-ns-nlp-namespace-level-group", *(["nlp-readers"] * second)]}},
            "aws_eks_access_policy_association": {"lead": {
                "cluster_name": EKS_CLUSTER, "principal_arn": "${aws_eks_access_entry.lead.principal_arn}",
                "policy_arn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy",
                "access_scope": [{"type": "namespace",
                                  "namespaces": ["hyperpod-ns-nlp", *(["hyperpod-ns-research"] * second)]}]}},
        },
    }


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    return module_terraform(tmp_path_factory, "terraform")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[EmbeddedAwsProcess]:
    with EmbeddedAwsProcess() as aws:
        yield aws


def _organization_unit(aws: EmbeddedAwsProcess) -> str:
    organizations = aws.client("organizations", account=ACCOUNT, region=REGION)
    organizations.create_organization(FeatureSet="ALL")
    root = organizations.list_roots()["Roots"][0]["Id"]
    organizations.enable_policy_type(RootId=root, PolicyType="SERVICE_CONTROL_POLICY")
    ou: str = organizations.create_organizational_unit(ParentId=root, Name="ml-platform")["OrganizationalUnit"]["Id"]
    return ou


def _check(result: Any, step: str) -> None:
    assert result.returncode == 0, f"terraform {step} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"


def test_apply_update_and_replan_is_empty(terraform: Terraform, endpoint: EmbeddedAwsProcess) -> None:
    endpoint.seed_hyperpod_cluster("gpu-west", EKS_CLUSTER, account=ACCOUNT, region=REGION)
    ou_id = _organization_unit(endpoint)
    endpoint.clear_calls()
    # Faults reach the Go SDK too: one throttle each, which the provider's one retry absorbs.
    throttled = {("budgets", "ListTagsForResource"), ("eks", "DescribeAccessEntry")}
    for service, operation in sorted(throttled):
        endpoint.inject_fault(service, operation, kind="throttle", times=1)

    terraform.write_config(stack(endpoint.endpoint_url, ou_id=ou_id, revision=1))
    _check(terraform.run("init"), "init")
    _check(terraform.run("apply", "-auto-approve"), "apply (create)")
    terraform.write_config(stack(endpoint.endpoint_url, ou_id=ou_id, revision=2))
    _check(terraform.run("apply", "-auto-approve"), "apply (update)")
    plan = terraform.run("plan", "-detailed-exitcode")

    assert plan.returncode == 0, f"the plan after apply is not empty:\n{plan.stdout[-4000:]}\n{plan.stderr[-2000:]}"
    failed = [(c["service"], c["operation"], c["status"]) for c in endpoint.calls() if int(c["status"]) >= 400]
    assert sorted(failed) == [("budgets", "ListTagsForResource", 400), ("eks", "DescribeAccessEntry", 429)], \
        f"the provider's calls that the endpoint refused (only the injected throttles may be): {failed}"
    assert endpoint.pending_faults() == []
    called = {(c["service"], c["operation"]) for c in endpoint.calls()}
    assert {("budgets", "ListTagsForResource"), ("budgets", "UpdateBudget"), ("eks", "UpdateAccessEntry"),
            ("eks", "ListAssociatedAccessPolicies")} <= called
    # What Terraform wrote is what any other client reads.
    entry = endpoint.client("eks", account=ACCOUNT, region=REGION).describe_access_entry(
        clusterName=EKS_CLUSTER, principalArn=f"arn:aws:iam::{ACCOUNT}:role/acme-nlp-lead")["accessEntry"]
    assert sorted(entry["kubernetesGroups"]) == ["hyperpod-ns-nlp-namespace-level-group", "nlp-readers"]
    tags = endpoint.client("budgets", account=ACCOUNT, region="us-east-1").list_tags_for_resource(
        ResourceARN=f"arn:aws:budgets::{ACCOUNT}:budget/acme-nlp-monthly")["ResourceTags"]
    assert {t["Key"]: t["Value"] for t in tags} == {"Project": "nlp", "CostCentre": "CC-2000"}
