"""The Identity Center drift decision without I/O: small desired objects (as the captured graph
spells them: a set's ARN is `<arn:LOGICAL>`, a member's id a resolved lookup or its placeholder)
and sso-admin responses written by hand in the shapes botocore's model gives (DescribePermissionSet's
PermissionSet, GetPermissionsBoundaryForPermissionSet's PermissionsBoundary, ListAccountAssignments'
AccountAssignment, ...), the org as the example tree's org.yaml declares it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engines.desired import DesiredObject, address_of
from engines.live.identity_center import (
    ASSIGNMENT,
    BOUNDARY,
    CUSTOMER_ATTACHMENT,
    INLINE_POLICY,
    MANAGED_ATTACHMENT,
    PERMISSION_SET,
    LiveAssignment,
    LiveIdentityCenter,
    LivePermissionSet,
    OrgIdentityCenter,
    compare,
)
from engines.live.identity_center_read import PRUNERS, read_instance
from engines.live.items import AttributeDrift
from engines.live.runner import CallCounter
from engines.live.scan import PRUNERS as ALL_PRUNERS
from engines.live.scan import SERVICES, TERRAFORM_SERVICES
from engines.live.scan_plan import REPLACED_WHEN
from hypergov.validate import load_valid_tree
from stacks.spec import plan_stacks

IC_ACCOUNT, RESEARCH = "111122223333", "444455556666"  # ml-prod holds Identity Center (config/org.yaml)
REGION = "us-west-2"
INSTANCE = "arn:aws:sso:::instance/ssoins-7223a7b5d1e5e2c4"
ENGINEER_ARN = "arn:aws:sso:::permissionSet/ssoins-7223a7b5d1e5e2c4/ps-0123456789abcdef"
POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["sagemaker:DescribeCluster"],
                                                  "Resource": "*"}]}
TAGS = {"Project": "vision", "hypergov:org": "acme"}
ENGINEERS, SUPPORT = "g-111", "g-222"  # identity store group ids
LOOKUP = "group-8c435b3833dc"


@pytest.fixture(scope="module")
def org() -> OrgIdentityCenter:
    tree = load_valid_tree("config")
    found = OrgIdentityCenter.of(tree, plan_stacks(tree), {LOOKUP: "group vision-engineers"})
    assert found is not None
    return found


def desired(type_token: str, logical: str, stack: str = "project-vision", **inputs: Any) -> DesiredObject:
    return DesiredObject(stack=stack, type=type_token, name=logical, address=address_of(type_token, logical),
                         account=IC_ACCOUNT, region=REGION, inputs={"instanceArn": INSTANCE, **inputs},
                         property_dependencies={})


def engineer_objects(principal: str = ENGINEERS, **overrides: Any) -> list[DesiredObject]:
    ps = {"name": "acme-vision-engineer", "description": "hypergov: Engineer of project vision",
          "sessionDuration": "PT8H", "tags": TAGS, **overrides}
    ref = "<arn:permission-set-engineer>"
    return [desired(PERMISSION_SET, "permission-set-engineer", **ps),
            desired(INLINE_POLICY, "permission-set-engineer-policy", permissionSetArn=ref,
                    inlinePolicy=json.dumps(POLICY, separators=(",", ":"))),
            desired(BOUNDARY, "permission-set-engineer-boundary", permissionSetArn=ref, permissionsBoundary={
                "customerManagedPolicyReference": {"name": "acme-hypergov-permissions-boundary", "path": "/"}}),
            desired(ASSIGNMENT, "assignment-engineer-group-vision-engineers@ml-prod", permissionSetArn=ref,
                    principalId=principal, principalType="GROUP", targetId=IC_ACCOUNT, targetType="AWS_ACCOUNT")]


def live_set(name: str = "acme-vision-engineer", arn: str = ENGINEER_ARN, *, inline: Any = None,
             boundary: Any = "default", managed: tuple[str, ...] = (), customer: tuple[tuple[str, str], ...] = (),
             **described: Any) -> LivePermissionSet:
    """As the read gives it, from responses shaped as botocore's model says."""
    return LivePermissionSet.read(
        {"Name": name, "PermissionSetArn": arn, "Description": "hypergov: Engineer of project vision",
         "CreatedDate": "2025-01-01T00:00:00Z", "SessionDuration": "PT8H", **described},
        inline=json.dumps(POLICY) if inline is None else inline,
        boundary={"CustomerManagedPolicyReference": {"Name": "acme-hypergov-permissions-boundary", "Path": "/"}}
        if boundary == "default" else boundary,
        managed=[{"Name": a.rsplit("/", 1)[-1], "Arn": a} for a in managed],
        customer=[{"Name": n, "Path": p} for n, p in customer],
        tags=[{"Key": k, "Value": v} for k, v in TAGS.items()])


def assignment(principal: str = ENGINEERS, account: str = IC_ACCOUNT, arn: str = ENGINEER_ARN) -> LiveAssignment:
    return LiveAssignment.read({"AccountId": account, "PermissionSetArn": arn, "PrincipalType": "GROUP",
                                "PrincipalId": principal})


def live(*sets: LivePermissionSet, assignments: tuple[LiveAssignment, ...] = (assignment(),)) -> LiveIdentityCenter:
    return LiveIdentityCenter(permission_sets={s.name: s for s in sets}, assignments=assignments)


def test_as_declared_nothing_is_reported(org: OrgIdentityCenter) -> None:
    assert compare(org, engineer_objects(), live(live_set())) == []


def test_policy_session_description_tags_and_boundary_changed_by_hand(org: OrgIdentityCenter) -> None:
    widened = {**POLICY, "Statement": [{"Effect": "Allow", "Action": "sagemaker:*", "Resource": "*"}]}
    found = live_set(inline=json.dumps(widened), SessionDuration="PT12H", Description="edited",
                     boundary={"ManagedPolicyArn": "arn:aws:iam::aws:policy/AdministratorAccess"})
    items = {i.address: i for i in compare(org, engineer_objects(), live(found))}
    assert {a: i.kind for a, i in items.items()} == {
        "aws_ssoadmin_permission_set.permission-set-engineer": "changed",
        "aws_ssoadmin_permission_set_inline_policy.permission-set-engineer-policy": "changed",
        "aws_ssoadmin_permissions_boundary_attachment.permission-set-engineer-boundary": "changed"}
    ps = items["aws_ssoadmin_permission_set.permission-set-engineer"]
    assert ps.attributes == (AttributeDrift("description", "hypergov: Engineer of project vision", "edited"),
                             AttributeDrift("sessionDuration", "PT8H", "PT12H"))
    assert (ps.stack, ps.account, ps.region, ps.fix) == (
        "project-vision", IC_ACCOUNT, REGION, "hypergov apply --stack project-vision restores it")
    (policy,) = items["aws_ssoadmin_permission_set_inline_policy.permission-set-engineer-policy"].attributes
    assert (policy.path, policy.expected, policy.live) == ("inlinePolicy", POLICY, widened)
    (boundary,) = items["aws_ssoadmin_permissions_boundary_attachment.permission-set-engineer-boundary"].attributes
    assert boundary.live == {"managedPolicyArn": "arn:aws:iam::aws:policy/AdministratorAccess"}


def test_the_same_policy_in_another_spelling_is_not_drift(org: OrgIdentityCenter) -> None:
    respelled = {"Statement": [{"Resource": "*", "Action": "sagemaker:DescribeCluster", "Effect": "Allow"}],
                 "Version": "2012-10-17"}
    assert compare(org, engineer_objects(), live(live_set(inline=json.dumps(respelled, indent=2)))) == []


def test_declared_but_absent_is_missing(org: OrgIdentityCenter) -> None:
    items = compare(org, engineer_objects(), live(assignments=()))
    assert sorted((i.kind, i.type) for i in items) == sorted(
        ("missing", t) for t in (PERMISSION_SET, INLINE_POLICY, BOUNDARY, ASSIGNMENT))
    no_boundary = compare(org, engineer_objects(), live(live_set(boundary=None, inline="")))
    assert sorted((i.kind, i.address) for i in no_boundary) == [
        ("missing", "aws_ssoadmin_permission_set_inline_policy.permission-set-engineer-policy"),
        ("missing", "aws_ssoadmin_permissions_boundary_attachment.permission-set-engineer-boundary")]


def test_a_member_deleted_from_identity_center_is_a_missing_assignment_that_says_so(org: OrgIdentityCenter) -> None:
    unresolved = f"${{lookup:{LOOKUP}:groupId}}"  # the identity store found no such group
    (item,) = compare(org, engineer_objects(principal=unresolved), live(live_set(), assignments=()))
    assert (item.kind, item.address) == (
        "missing", "aws_ssoadmin_account_assignment.assignment-engineer-group-vision-engineers_ml-prod")
    assert item.attributes == (AttributeDrift("principalId", "group vision-engineers", None),)
    assert "group vision-engineers no longer exists in Identity Center" in item.fix
    assert "projects/vision.yaml" in item.fix


def test_an_assignment_nobody_declares_is_unmanaged_and_prunable(org: OrgIdentityCenter) -> None:
    support = compare(org, engineer_objects(), live(live_set(), assignments=(
        assignment(), assignment(SUPPORT), assignment(ENGINEERS, RESEARCH))))
    assert sorted((i.kind, i.address) for i in support) == [
        ("unmanaged", "aws_ssoadmin_account_assignment.assignment-engineer-group-g-222_ml-prod"),
        # a member the tree knows is named as its declarations name it: the address terraform would give
        ("unmanaged", "aws_ssoadmin_account_assignment.assignment-engineer-group-vision-engineers_ml-research")]
    item = next(i for i in support if SUPPORT in i.address)
    assert (item.stack, item.account, item.region, item.type) == ("project-vision", IC_ACCOUNT, REGION, ASSIGNMENT)
    assert dict(item.ref) == {"InstanceArn": INSTANCE, "PermissionSetArn": ENGINEER_ARN, "TargetId": IC_ACCOUNT,
                              "TargetType": "AWS_ACCOUNT", "PrincipalType": "GROUP", "PrincipalId": SUPPORT}
    assert AttributeDrift("principalId", None, SUPPORT) in item.attributes
    assert ASSIGNMENT in ALL_PRUNERS and item.kind == "unmanaged"


def test_a_principal_the_tree_knows_is_named_in_the_address(org: OrgIdentityCenter) -> None:
    viewer = [desired(PERMISSION_SET, "permission-set-viewer", name="acme-vision-viewer"),
              desired(ASSIGNMENT, "assignment-viewer-group-support@ml-prod",
                      permissionSetArn="<arn:permission-set-viewer>", principalId=SUPPORT, principalType="GROUP",
                      targetId=IC_ACCOUNT, targetType="AWS_ACCOUNT")]
    viewer_arn = ENGINEER_ARN.replace("0123", "9999")
    found = live(live_set(), live_set("acme-vision-viewer", viewer_arn, Description=None),
                 assignments=(assignment(), assignment(SUPPORT), assignment(SUPPORT, arn=viewer_arn)))
    (item,) = compare(org, [*engineer_objects(), *viewer], found)
    assert item.address == "aws_ssoadmin_account_assignment.assignment-engineer-group-support_ml-prod"


def test_a_permission_set_named_as_hypergov_names_them_and_declared_nowhere_is_unmanaged(
        org: OrgIdentityCenter) -> None:
    nlp = live_set("acme-nlp-viewer", ENGINEER_ARN.replace("0123", "7777"))
    admin = live_set("acme-platform-admin", ENGINEER_ARN.replace("0123", "8888"))
    someone_elses = live_set("AdministratorAccess", ENGINEER_ARN.replace("0123", "6666"))
    items = compare(org, engineer_objects(), live(live_set(), nlp, admin, someone_elses))
    assert sorted((i.kind, i.stack, i.address) for i in items) == [
        ("unmanaged", "org", "aws_ssoadmin_permission_set.permission-set-platform-admin"),
        ("unmanaged", "project-nlp", "aws_ssoadmin_permission_set.permission-set-viewer")]
    assert all(i.ref["PermissionSetArn"] and i.type == PERMISSION_SET for i in items)


def test_policies_attached_by_hand_are_unmanaged_attachments(org: OrgIdentityCenter) -> None:
    admin = "arn:aws:iam::aws:policy/AdministratorAccess"
    found = live_set(managed=(admin,), customer=(("break-glass", "/"),))
    items = {i.type: i for i in compare(org, engineer_objects(), live(found))}
    assert sorted(items) == sorted([MANAGED_ATTACHMENT, CUSTOMER_ATTACHMENT])
    assert items[MANAGED_ATTACHMENT].kind == items[CUSTOMER_ATTACHMENT].kind == "unmanaged"
    assert items[MANAGED_ATTACHMENT].address == \
        "aws_ssoadmin_managed_policy_attachment.acme-vision-engineer_AdministratorAccess"
    assert items[MANAGED_ATTACHMENT].ref["ManagedPolicyArn"] == admin
    assert dict(items[CUSTOMER_ATTACHMENT].ref) == {"InstanceArn": INSTANCE, "PermissionSetArn": ENGINEER_ARN,
                                                    "Name": "break-glass", "Path": "/"}
    assert set(PRUNERS) <= set(ALL_PRUNERS)


def test_registered_with_the_scan_and_its_plans() -> None:
    from engines.live import identity_center_read

    assert identity_center_read.units in SERVICES and identity_center_read.units in TERRAFORM_SERVICES
    assert REPLACED_WHEN[ASSIGNMENT] >= {"principalId", "targetId", "permissionSetArn"}
    assert "inlinePolicy" not in REPLACED_WHEN[INLINE_POLICY]
    assert REPLACED_WHEN[PERMISSION_SET] == {"instanceArn", "name"}


class FakeSsoAdmin:
    """sso-admin's responses for the read (botocore's shapes), recording every call."""

    class exceptions:  # boto3's attribute
        class ResourceNotFoundException(Exception):
            pass

    def __init__(self) -> None:
        self.called: list[str] = []

    def get_paginator(self, operation: str) -> Any:
        owner = self

        class Pages:
            def paginate(self, **kwargs: Any) -> list[dict[str, Any]]:
                owner.called.append(operation)
                return [owner.page(operation, kwargs)]

        return Pages()

    def page(self, operation: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        if operation == "list_permission_sets":
            return {"PermissionSets": [ENGINEER_ARN, "arn:aws:sso:::permissionSet/ssoins-x/ps-other"]}
        if operation == "list_account_assignments":
            return {"AccountAssignments": [{"AccountId": kwargs["AccountId"], "PermissionSetArn": ENGINEER_ARN,
                                            "PrincipalType": "GROUP", "PrincipalId": ENGINEERS}]}
        if operation == "list_tags_for_resource":
            return {"Tags": [{"Key": k, "Value": v} for k, v in TAGS.items()]}
        return {}

    def describe_permission_set(self, **kwargs: Any) -> dict[str, Any]:
        self.called.append("describe_permission_set")
        name = "acme-vision-engineer" if kwargs["PermissionSetArn"] == ENGINEER_ARN else "AWSReadOnlyAccess"
        return {"PermissionSet": {"Name": name, "PermissionSetArn": kwargs["PermissionSetArn"],
                                  "Description": "hypergov: Engineer of project vision", "SessionDuration": "PT8H"}}

    def get_inline_policy_for_permission_set(self, **_: Any) -> dict[str, Any]:
        self.called.append("get_inline_policy_for_permission_set")
        return {"InlinePolicy": json.dumps(POLICY)}

    def get_permissions_boundary_for_permission_set(self, **_: Any) -> dict[str, Any]:
        self.called.append("get_permissions_boundary_for_permission_set")
        raise self.exceptions.ResourceNotFoundException()


def test_the_read_reads_only_hypergovs_sets_in_full_and_assignments_per_org_account(org: OrgIdentityCenter) -> None:
    from engines.live.identity_center import Declared

    client, calls = FakeSsoAdmin(), CallCounter()
    found = read_instance(client, calls, org, Declared.of(engineer_objects()))
    assert sorted(found.permission_sets) == ["acme-vision-engineer"]  # AWSReadOnlyAccess: described, no more
    assert found.permission_sets["acme-vision-engineer"].boundary is None  # ResourceNotFound: none attached
    assert client.called.count("describe_permission_set") == 2
    assert client.called.count("get_inline_policy_for_permission_set") == 1
    assert client.called.count("list_account_assignments") == 2  # ml-prod, ml-research
    assert {a.account for a in found.assignments} == {IC_ACCOUNT, RESEARCH}
    assert calls.count == len(client.called)
