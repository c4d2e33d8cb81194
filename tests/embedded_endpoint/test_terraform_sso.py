"""The real Terraform AWS provider manages a project persona's IAM Identity Center permission set
against the embedded endpoint, as hypergov will generate it: a permission set with tags and a
session duration, its inline policy, the org's permissions boundary as a customer managed policy
reference, an account assignment of an Identity Center group found by display name, and the role
Identity Center provisions read back with ``aws_iam_roles``. An empty ``plan -detailed-exitcode``
after apply proves every read matches its write; destroy removes the assignment and with it the
role (AWS deletes the role when the last assignment of the permission set in the account goes)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws import EmbeddedAwsProcess
from embedded_aws.terraform import provider_block

from .tfsupport import Terraform, module_terraform

ACCOUNT = "111122223333"
REGION = "us-west-2"
PERMISSION_SET = "nlp-Engineer"
ROLE_NAME = re.compile(rf"^AWSReservedSSO_{PERMISSION_SET}_[0-9a-f]{{16}}$")

pytestmark = pytest.mark.integration


def _policy(*actions: str) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": list(actions),
                                                               "Resource": "*"}]})


def stack(endpoint: str, *, instance_arn: str, store_id: str) -> dict[str, Any]:
    ps_arn = "${aws_ssoadmin_permission_set.engineer.arn}"
    return {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "5.100.0"}}},
        "provider": {"aws": provider_block(endpoint, region=REGION, account=ACCOUNT)},
        "resource": {
            "aws_iam_policy": {"boundary": {"name": "acme-hypergov-permissions-boundary",
                                            "policy": _policy("sagemaker:*", "eks:Describe*")}},
            "aws_ssoadmin_permission_set": {"engineer": {
                "name": PERMISSION_SET, "instance_arn": instance_arn, "session_duration": "PT8H",
                "description": "nlp Engineer", "tags": {"Project": "nlp", "CostCentre": "CC-2001"}}},
            "aws_ssoadmin_permission_set_inline_policy": {"engineer": {
                "instance_arn": instance_arn, "permission_set_arn": ps_arn,
                "inline_policy": _policy("sagemaker:DescribeCluster", "sagemaker:ListClusters")}},
            "aws_ssoadmin_permissions_boundary_attachment": {"engineer": {
                "instance_arn": instance_arn, "permission_set_arn": ps_arn,
                "permissions_boundary": [{"customer_managed_policy_reference": [
                    {"name": "${aws_iam_policy.boundary.name}", "path": "/"}]}]}},
            "aws_ssoadmin_account_assignment": {"engineers": {
                "instance_arn": instance_arn, "permission_set_arn": ps_arn,
                "principal_id": "${data.aws_identitystore_group.engineers.group_id}", "principal_type": "GROUP",
                "target_id": ACCOUNT, "target_type": "AWS_ACCOUNT",
                "depends_on": ["aws_ssoadmin_permission_set_inline_policy.engineer",
                               "aws_ssoadmin_permissions_boundary_attachment.engineer"]}},
        },
        "data": {
            "aws_identitystore_group": {"engineers": {
                "identity_store_id": store_id,
                "alternate_identifier": [{"unique_attribute": [{"attribute_path": "DisplayName",
                                                                "attribute_value": "nlp-engineers"}]}]}},
            "aws_iam_roles": {"provisioned": {
                "name_regex": f"^AWSReservedSSO_{PERMISSION_SET}_.*", "path_prefix": "/aws-reserved/sso.amazonaws.com/",
                "depends_on": ["aws_ssoadmin_account_assignment.engineers"]}},
        },
        "output": {"role_names": {"value": "${data.aws_iam_roles.provisioned.names}"}},
    }


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    return module_terraform(tmp_path_factory, "terraform-sso")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[EmbeddedAwsProcess]:
    with EmbeddedAwsProcess() as aws:
        yield aws


def _check(result: Any, step: str) -> None:
    assert result.returncode == 0, f"terraform {step} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"


def _sso_roles(endpoint: EmbeddedAwsProcess) -> list[dict[str, Any]]:
    iam = endpoint.client("iam", account=ACCOUNT, region=REGION)
    return list(iam.list_roles(PathPrefix="/aws-reserved/sso.amazonaws.com/")["Roles"])


def test_permission_set_assignment_and_provisioned_role(terraform: Terraform, endpoint: EmbeddedAwsProcess) -> None:
    """Apply, an empty re-plan, the role read back by `aws_iam_roles`, and destroy removing it."""
    sso = endpoint.client("sso-admin", account=ACCOUNT, region=REGION)
    instance = sso.list_instances()["Instances"][0]
    store = endpoint.client("identitystore", account=ACCOUNT, region=REGION)
    store.create_group(IdentityStoreId=instance["IdentityStoreId"], DisplayName="nlp-engineers")
    endpoint.clear_calls()

    terraform.write_config(stack(endpoint.endpoint_url, instance_arn=instance["InstanceArn"],
                                 store_id=instance["IdentityStoreId"]))
    _check(terraform.run("init"), "init")
    _check(terraform.run("apply", "-auto-approve"), "apply")
    plan = terraform.run("plan", "-detailed-exitcode")
    assert plan.returncode == 0, f"the plan after apply is not empty:\n{plan.stdout[-4000:]}\n{plan.stderr[-2000:]}"

    failed = [(c["service"], c["operation"], c["status"]) for c in endpoint.calls() if int(c["status"]) >= 400]
    assert failed == [], f"the provider's calls that the endpoint refused: {failed}"
    output = json.loads(terraform.run("output", "-json").stdout)
    names = output["role_names"]["value"]
    assert len(names) == 1 and ROLE_NAME.match(names[0]), names
    role = endpoint.client("iam", account=ACCOUNT, region=REGION).get_role(RoleName=names[0])["Role"]
    assert role["Path"] == f"/aws-reserved/sso.amazonaws.com/{REGION}/"
    assert role["MaxSessionDuration"] == 8 * 3600
    assert role["PermissionsBoundary"]["PermissionsBoundaryArn"] == \
        f"arn:aws:iam::{ACCOUNT}:policy/acme-hypergov-permissions-boundary"

    _check(terraform.run("destroy", "-auto-approve"), "destroy")
    called = {(c["service"], c["operation"]) for c in endpoint.calls()}
    # What provider 5.100.0 calls for these resources (all extended or fixed here).
    assert {("sso", op) for op in (
        "CreatePermissionSet", "DescribePermissionSet", "ListTagsForResource", "DeletePermissionSet",
        "PutInlinePolicyToPermissionSet", "GetInlinePolicyForPermissionSet", "DeleteInlinePolicyFromPermissionSet",
        "PutPermissionsBoundaryToPermissionSet", "GetPermissionsBoundaryForPermissionSet",
        "DeletePermissionsBoundaryFromPermissionSet", "ProvisionPermissionSet",
        "DescribePermissionSetProvisioningStatus", "CreateAccountAssignment",
        "DescribeAccountAssignmentCreationStatus", "ListAccountAssignments", "DeleteAccountAssignment",
        "DescribeAccountAssignmentDeletionStatus")} <= called
    assert {("identitystore", "GetGroupId"), ("identitystore", "DescribeGroup"), ("iam", "ListRoles")} <= called
    assert _sso_roles(endpoint) == []
    assert sso.list_permission_sets(InstanceArn=instance["InstanceArn"])["PermissionSets"] == []
