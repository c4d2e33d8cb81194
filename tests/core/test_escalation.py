"""The escalation set (PERM003) is defined by what actions do: every member is a published
action, the old fifteen are all in it, and every member is caught when a project grants it or
the boundary allows it (issue 10 item 3)."""

from __future__ import annotations

from collections import Counter

import pytest

from hypergov.rules.aws_actions import service_actions
from hypergov.rules.escalation import CATEGORIES, escalation_actions, escalation_by_category, escalation_matches
from hypergov.validate import validate_files
from tests.validation.corpus_overlay import example_tree

OLD_FIFTEEN = (
    "iam:DeleteRolePermissionsBoundary", "iam:PutRolePermissionsBoundary",
    "iam:DeleteUserPermissionsBoundary", "iam:PutUserPermissionsBoundary",
    "iam:CreatePolicyVersion", "iam:SetDefaultPolicyVersion", "iam:DeletePolicyVersion",
    "iam:DeletePolicy", "iam:CreateRole", "iam:CreateUser",
    "organizations:DetachPolicy", "organizations:DeletePolicy", "organizations:UpdatePolicy",
    "organizations:DisablePolicyType", "organizations:LeaveOrganization",
)

# The issue's examples and Rhino Security Labs' single-permission methods, by name.
MUST_HAVE = (
    "organizations:MoveAccount", "organizations:AttachPolicy", "organizations:RemoveAccountFromOrganization",
    "organizations:CreateAccount", "organizations:InviteAccountToOrganization", "iam:PassRole", "sts:AssumeRole",
    "iam:UpdateAssumeRolePolicy", "iam:CreateAccessKey", "iam:CreateLoginProfile", "iam:UpdateLoginProfile",
    "iam:AttachUserPolicy", "iam:AttachGroupPolicy", "iam:AttachRolePolicy", "iam:PutUserPolicy",
    "iam:PutGroupPolicy", "iam:PutRolePolicy", "iam:AddUserToGroup", "sts:GetFederationToken",
    "iam:CreateServiceSpecificCredential", "lambda:UpdateFunctionCode", "lambda:UpdateFunctionConfiguration",
    "glue:UpdateDevEndpoint", "sagemaker:CreatePresignedNotebookInstanceUrl", "sso:CreateAccountAssignment",
    "identitystore:CreateGroupMembership",
)


def test_every_member_is_a_published_action() -> None:
    for action in escalation_actions():
        service, _, name = action.partition(":")
        assert name in {a.name for a in service_actions(service)}, action


def test_the_old_fifteen_and_the_documented_methods_are_members() -> None:
    members = set(escalation_actions())
    assert set(OLD_FIFTEEN) <= members
    assert set(MUST_HAVE) <= members


def test_every_category_selects_something_and_members_are_listed_once() -> None:
    by_category = escalation_by_category()
    assert set(by_category) == {c.name for c in CATEGORIES}
    assert all(by_category.values())
    assert len(escalation_actions()) == len(set(escalation_actions()))


def test_iam_permissions_management_is_derived_from_the_access_level() -> None:
    derived = {a.full for a in service_actions("iam") if "Permissions management" in a.access_levels}
    assert derived == set(escalation_by_category()["IAM permissions management"])


def test_read_only_actions_are_not_members() -> None:
    assert escalation_matches("iam:Get*") == ()
    assert escalation_matches("organizations:Describe*") == ()
    assert escalation_matches("sts:GetCallerIdentity") == ()
    assert escalation_matches("s3:*") == ()


def _project_granting(actions: tuple[str, ...]) -> dict[str, bytes]:
    files = example_tree()
    vision = files["projects/vision.yaml"].decode().rstrip("\n") + "\n"
    files["projects/vision.yaml"] = (vision + "".join(f"    - {a}\n" for a in actions)).encode()
    return files


def test_every_member_granted_by_a_project_is_perm003() -> None:
    members = escalation_actions()
    report = validate_files(_project_granting(members))
    lines = Counter(p.pos.line for p in report.problems if p.rule == "PERM003")
    first = 38  # the line after vision.yaml's last extra permission
    assert sorted(lines) == list(range(first, first + len(members)))


@pytest.mark.parametrize("shape", ["literal", "wildcard"])
def test_every_member_allowed_by_the_boundary_is_perm003(shape: str) -> None:
    members = escalation_actions()
    batch = 60  # a boundary must fit in one SCP (PERM005 otherwise)
    for start in range(0, len(members), batch):
        chunk = members[start:start + batch]
        files = example_tree()
        org = files["org.yaml"].decode().replace("    - iam:*\n    - organizations:*\n", "", 1)
        org = org.replace("    - sagemaker:CreatePresignedNotebookInstanceUrl\n", "", 1)
        allowed = [a if shape == "literal" else a[:-1] + "?" for a in chunk]
        org = org.replace("    - sts:GetCallerIdentity\n",
                          "    - sts:GetCallerIdentity\n" + "".join(f"    - {a}\n" for a in allowed), 1)
        files["org.yaml"] = org.encode()
        report = validate_files(files)
        flagged = {p.pos.line: p.message for p in report.problems if p.rule == "PERM003"}
        first = 38  # the line after the example boundary's last allow
        for offset, action in enumerate(chunk):
            assert action in flagged.get(first + offset, ""), (action, shape)
