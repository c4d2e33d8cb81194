"""`hypergov drift` on IAM Identity Center, for real: the example tree applied with the real
terraform against the embedded endpoint (the run's snapshot), then permission sets and assignments
changed by hand with boto3 (as a person in the console would): the scan must report exactly those,
as the right kind, and `--prune-unmanaged` / `--remediate` must repair them (remediation through the
audited terraform apply of the stack). Expected values come from the config files (members of
config/projects/*.yaml, org.yaml `identity_center`) and AWS's documentation, never from hypergov's
own output."""

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
INSTANCE = "arn:aws:sso:::instance/ssoins-7223a7b5d1e5e2c4"  # config/org.yaml identity_center (in ml-prod)
STORE = "d-9067c1a2b3"
SSO_PATH = "/aws-reserved/sso.amazonaws.com/us-west-2/"
ACCOUNTS = 2  # config/org.yaml: ml-prod, ml-research
# config/org.yaml platform_admins + the personas with Identity Center members in config/projects/*.yaml:
# nlp lead and engineer, research engineer and viewer, speech engineer and viewer, vision engineer and viewer.
PERMISSION_SETS = 1 + 2 + 2 + 2 + 2


@pytest.fixture(scope="module")
def env(endpoint: EmbeddedAwsProcess, applied_example: Path,
        tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return restore_applied_example(applied_example, endpoint, tmp_path_factory.mktemp("live-drift-ic"))


def drift(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, ["drift", *args], env=env)


def report(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def sso(endpoint: EmbeddedAwsProcess) -> Any:
    return endpoint.client("sso-admin", account=PROD, region=REGION)


def permission_set_arn(endpoint: EmbeddedAwsProcess, name: str) -> str:
    client = sso(endpoint)
    for arn in client.list_permission_sets(InstanceArn=INSTANCE)["PermissionSets"]:
        if client.describe_permission_set(InstanceArn=INSTANCE, PermissionSetArn=arn)["PermissionSet"]["Name"] == name:
            return str(arn)
    raise AssertionError(f"no permission set {name}")


def group_id(endpoint: EmbeddedAwsProcess, name: str) -> str:
    store = endpoint.client("identitystore", account=PROD, region=REGION)
    return str(store.get_group_id(IdentityStoreId=STORE, AlternateIdentifier={
        "UniqueAttribute": {"AttributePath": "DisplayName", "AttributeValue": name}})["GroupId"])


def assigned(endpoint: EmbeddedAwsProcess, arn: str, account: str = PROD) -> set[str]:
    found = sso(endpoint).list_account_assignments(InstanceArn=INSTANCE, AccountId=account, PermissionSetArn=arn)
    return {a["PrincipalId"] for a in found["AccountAssignments"]}


def test_the_applied_tree_has_no_identity_center_drift(env: dict[str, str]) -> None:
    result = drift(env, "--json")
    assert result.exit_code == 0, result.output
    scanned = report(result)
    assert (scanned["items"], scanned["complete"]) == ([], True)
    # One ListPermissionSets page; a Describe per set (its name); for each (all are hypergov's) its
    # inline policy, boundary, managed policies, customer-managed references and tags; one
    # ListAccountAssignments per set and org account.
    assert scanned["api_calls_by_service"]["sso-admin"] == 1 + PERMISSION_SETS * (1 + 5) + PERMISSION_SETS * ACCOUNTS


def test_an_assignment_made_by_hand_is_unmanaged_and_pruned(endpoint: EmbeddedAwsProcess,
                                                             env: dict[str, str]) -> None:
    engineer = permission_set_arn(endpoint, "acme-vision-engineer")  # naming: <org>-<team>-<persona slug>
    support = group_id(endpoint, "support")  # a member of speech's Viewer, not of vision's Engineer
    vision_engineers = group_id(endpoint, "vision-engineers")  # config/projects/vision.yaml
    created = sso(endpoint).create_account_assignment(
        InstanceArn=INSTANCE, TargetId=PROD, TargetType="AWS_ACCOUNT", PermissionSetArn=engineer,
        PrincipalType="GROUP", PrincipalId=support)["AccountAssignmentCreationStatus"]
    assert created["Status"] == "IN_PROGRESS"
    assert assigned(endpoint, engineer) == {vision_engineers, support}

    result = drift(env, "--json")
    assert result.exit_code == 2, result.output
    (item,) = report(result)["items"]  # nothing else
    assert {k: item[k] for k in ("kind", "stack", "type", "account", "region")} == {
        "kind": "unmanaged", "stack": "project-vision", "type": "aws:ssoadmin/accountAssignment:AccountAssignment",
        "account": PROD, "region": REGION}
    assert item["address"] == "aws_ssoadmin_account_assignment.assignment-engineer-group-support_ml-prod"
    assert {"path": "principalId", "expected": None, "live": support} in item["attributes"]
    assert "projects/vision.yaml" in item["fix"]

    repo = git.Repo(env["HYPERGOV_CONFIG_DIR"], search_parent_directories=True)
    before = len(audit_records(repo.working_dir))
    pruned = drift(env, "--prune-unmanaged", "--yes")
    assert pruned.exit_code == 0, pruned.output
    assert assigned(endpoint, engineer) == {vision_engineers}  # exactly the hand-made one deleted
    intent, record = audit_records(repo.working_dir)[before:]
    assert intent["stacks"] == [{"stack": "project-vision", "actions": [f"delete {item['address']}"]}]
    assert [(o["address"], o["outcome"]) for o in record["objects"]] == [(item["address"], "deleted")]
    assert drift(env).exit_code == 0


def test_an_inline_policy_edited_by_hand_is_changed_and_remediation_applies_it_back(
        endpoint: EmbeddedAwsProcess, env: dict[str, str]) -> None:
    client = sso(endpoint)
    engineer = permission_set_arn(endpoint, "acme-nlp-engineer")
    declared = json.loads(client.get_inline_policy_for_permission_set(
        InstanceArn=INSTANCE, PermissionSetArn=engineer)["InlinePolicy"])
    widened = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sagemaker:*", "Resource": "*"}]}
    client.put_inline_policy_to_permission_set(InstanceArn=INSTANCE, PermissionSetArn=engineer,
                                               InlinePolicy=json.dumps(widened))
    client.provision_permission_set(InstanceArn=INSTANCE, PermissionSetArn=engineer,
                                    TargetType="ALL_PROVISIONED_ACCOUNTS")  # as the console does on save

    result = drift(env, "--json")
    assert result.exit_code == 2, result.output
    (item,) = report(result)["items"]
    assert (item["kind"], item["stack"], item["address"]) == (
        "changed", "project-nlp", "aws_ssoadmin_permission_set_inline_policy.permission-set-engineer-policy")
    (changed,) = item["attributes"]
    assert (changed["path"], changed["expected"], changed["live"]) == ("inlinePolicy", declared, widened)
    assert item["fix"] == "hypergov apply --stack project-nlp restores it"

    repo = git.Repo(env["HYPERGOV_CONFIG_DIR"], search_parent_directories=True)
    before = len(audit_records(repo.working_dir))
    repaired = drift(env, "--remediate", "--yes")
    assert repaired.exit_code == 0, repaired.output
    records = [r for r in audit_records(repo.working_dir)[before:] if r["type"] != "intent"]
    assert [(r["stack"], r["reason"], r["outcome"]) for r in records] == [("project-nlp", "drift repair", "applied")]
    live = client.get_inline_policy_for_permission_set(InstanceArn=INSTANCE, PermissionSetArn=engineer)
    assert json.loads(live["InlinePolicy"]) == declared
    # Terraform's update provisions the set again: the role Identity Center made has the policy back.
    iam = endpoint.client("iam", account=PROD, region=REGION)
    (role,) = [r for r in iam.list_roles(PathPrefix=SSO_PATH)["Roles"]
               if r["RoleName"].startswith("AWSReservedSSO_acme-nlp-engineer_")]
    inline = iam.get_role_policy(RoleName=role["RoleName"], PolicyName="AwsSSOInlinePolicy")["PolicyDocument"]
    assert inline == declared
    assert drift(env).exit_code == 0


def test_a_member_group_deleted_in_identity_center_is_reported(endpoint: EmbeddedAwsProcess,
                                                               env: dict[str, str]) -> None:
    """Last: the group cannot be made again with the same id."""
    store = endpoint.client("identitystore", account=PROD, region=REGION)
    analysts = group_id(endpoint, "finance-analysts")  # config/projects/vision.yaml: a Viewer member
    store.delete_group(IdentityStoreId=STORE, GroupId=analysts)

    result = drift(env, "--json")
    assert result.exit_code == 2, result.output
    items = {(i["kind"], i["address"]): i for i in report(result)["items"]}
    missing = items[("missing", "aws_ssoadmin_account_assignment.assignment-viewer-group-finance-analysts_ml-prod")]
    assert missing["stack"] == "project-vision"
    assert "group finance-analysts no longer exists in Identity Center" in missing["fix"], missing
    assert "projects/vision.yaml" in missing["fix"]
    # The assignment of the deleted group's id, where AWS leaves it, is declared by no stack.
    rest = {k: i for k, i in items.items() if k[0] != "missing"}
    assert all(i["kind"] == "unmanaged" and analysts in json.dumps(i["attributes"]) for i in rest.values()), rest
