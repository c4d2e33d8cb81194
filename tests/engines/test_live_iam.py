"""The IAM drift decision without I/O: small desired objects and GetAccountAuthorizationDetails
entries written by hand in the shapes botocore's IAM model gives (RoleDetail, ManagedPolicyDetail,
documents already decoded), the org as the example tree's org.yaml declares it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engines.desired import DesiredObject, address_of
from engines.live.documents import canonical, same_document
from engines.live.iam import ATTACHMENT, POLICY, ROLE, ROLE_POLICY, AccountIam, OrgIam, compare
from engines.live.iam_documents import NOT_READ, BoundaryCheck
from hypergov.validate import load_valid_tree
from stacks.spec import plan_stacks

ACCOUNT = "111122223333"  # ml-prod in config/org.yaml
BOUNDARY = f"arn:aws:iam::{ACCOUNT}:policy/acme-hypergov-permissions-boundary"
TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                 "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}}]}
READS = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["sagemaker:Describe*"],
                                                 "Resource": "*"}]}


@pytest.fixture(scope="module")
def org() -> OrgIam:
    tree = load_valid_tree("config")
    found = OrgIam.of(tree, plan_stacks(tree), [])
    assert found is not None
    return found


def desired(type_token: str, logical: str, stack: str = "project-nlp", **inputs: Any) -> DesiredObject:
    return DesiredObject(stack=stack, type=type_token, name=logical, address=address_of(type_token, logical),
                         account=ACCOUNT, region="us-west-2", inputs=inputs, property_dependencies={})


def lead_role(**overrides: Any) -> DesiredObject:
    inputs = {"name": "acme-nlp-lead", "path": "/hypergov/", "assumeRolePolicy": json.dumps(TRUST),
              "permissionsBoundary": BOUNDARY, "tags": {"Project": "nlp"}, "maxSessionDuration": 3600, **overrides}
    return desired(ROLE, "role-lead@ml-prod", **inputs)


def role_detail(name: str = "acme-nlp-lead", path: str = "/hypergov/", boundary: str | None = BOUNDARY,
                inline: dict[str, Any] | None = None, attached: tuple[str, ...] = (),
                trust: Any = None) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "RoleName": name, "Path": path, "Arn": f"arn:aws:iam::{ACCOUNT}:role{path}{name}", "RoleId": "AROAEXAMPLE",
        "AssumeRolePolicyDocument": trust or TRUST, "Tags": [{"Key": "Project", "Value": "nlp"}],
        "RolePolicyList": [{"PolicyName": k, "PolicyDocument": v} for k, v in (inline or {}).items()],
        "AttachedManagedPolicies": [{"PolicyName": a.rsplit("/", 1)[-1], "PolicyArn": a} for a in attached]}
    if boundary:
        detail["PermissionsBoundary"] = {"PermissionsBoundaryType": "PermissionsBoundaryPolicy",
                                         "PermissionsBoundaryArn": boundary}
    return detail


def policy_detail(name: str, document: Any, description: str = "") -> dict[str, Any]:
    return {"PolicyName": name, "Arn": f"arn:aws:iam::{ACCOUNT}:policy/{name}", "Path": "/", "DefaultVersionId": "v2",
            "Description": description,
            "PolicyVersionList": [{"VersionId": "v1", "IsDefaultVersion": False, "Document": {"Statement": []}},
                                  {"VersionId": "v2", "IsDefaultVersion": True, "Document": document}]}


def scan(org: OrgIam, objects: list[DesiredObject], roles: list[dict[str, Any]],
         policies: list[dict[str, Any]] | None = None, listed: dict[str, Any] | None = None) -> list[Any]:
    return compare(org, ACCOUNT, "us-west-2", objects, AccountIam.read(roles, policies or [], listed))


def test_documents_compare_in_one_spelling() -> None:
    spelled = {"Statement": {"Resource": ["*"], "Action": "s3:GetObject", "Effect": "Allow", "Principal": "*",
                             "Condition": {"StringEquals": {"aws:PrincipalTag/team": "nlp"}}},
               "Version": "2012-10-17"}
    condition = {"StringEquals": {"aws:PrincipalTag/team": ["nlp"]}}
    other = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "*",
                                                     "Principal": {"AWS": ["*"]}, "Condition": condition}]}
    assert same_document(spelled, other)
    assert canonical({"Statement": [{"Action": ["b:B", "a:A", "a:A"]}]}) == {"Statement": [{"Action": ["a:A", "b:B"]}]}
    assert not same_document(READS, {**READS, "Statement": [{**READS["Statement"][0], "Effect": "Deny"}]})


def test_the_boundary_check_is_the_rules_containment() -> None:
    check = BoundaryCheck(allow=["sagemaker:*", "s3:GetObject"], deny=["sagemaker:DeleteCluster"])
    assert check.outside("sagemaker:Describe*") is None and check.outside("S3:getobject") is None
    assert check.outside("iam:*") == "iam:*"  # not contained in allow
    assert check.outside("sagemaker:Delete*") == "sagemaker:Delete*"  # contained, but overlaps the deny
    document = {"Statement": [{"Effect": "Deny", "Action": "iam:*"},  # a deny grants nothing
                              {"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"},  # fails closed
                              {"Effect": "Allow", "Action": ["s3:GetObject", "ec2:RunInstances"]}]}
    assert check.actions_outside(document) == ['NotAction ["s3:*"]', "ec2:RunInstances"]
    assert check.actions_outside("not a document") == ["(unreadable document)"]


def test_tags_are_a_map_and_unset_inputs_are_not_compared(org: OrgIam) -> None:
    role = lead_role(description=None)
    live = role_detail()
    live["Tags"] = [{"Key": "Project", "Value": "nlp"}, {"Key": "Owner", "Value": "console"}]
    (item,) = scan(org, [role], [live])
    assert (item.kind, [(a.path, a.expected, a.live) for a in item.attributes]) == (
        "changed", [("tags", {"Project": "nlp"}, {"Project": "nlp", "Owner": "console"})])
    # ListRoles not read: the maximum session duration is not compared; read, it is.
    assert scan(org, [role], [role_detail()]) == []
    (item,) = scan(org, [role], [role_detail()], listed={"acme-nlp-lead": {"MaxSessionDuration": 43200}})
    assert [(a.path, a.expected, a.live) for a in item.attributes] == [("maxSessionDuration", 3600, 43200)]


def test_a_role_without_boundary_and_changed_gives_both_items(org: OrgIam) -> None:
    other = {**TRUST, "Statement": [{**TRUST["Statement"][0], "Principal": {"AWS": "*"}}]}
    items = sorted(scan(org, [lead_role()], [role_detail(boundary=None, trust=other)]), key=lambda i: i.kind)
    assert [(i.kind, [a.path for a in i.attributes]) for i in items] == [
        ("changed", ["assumeRolePolicy"]), ("unbounded", ["permissionsBoundary"])]
    assert items[1].fix == "hypergov apply --stack project-nlp re-attaches the boundary"


def test_another_boundary_is_unbounded(org: OrgIam) -> None:
    wide = f"arn:aws:iam::{ACCOUNT}:policy/wide-open"
    (item,) = scan(org, [lead_role()], [role_detail(boundary=wide)], [policy_detail("wide-open", READS)])
    assert (item.kind, [(a.path, a.expected, a.live) for a in item.attributes]) == (
        "unbounded", [("permissionsBoundary", BOUNDARY, wide)])


def test_policies_beyond_the_boundary_fail_closed(org: OrgIam) -> None:
    aws_managed = "arn:aws:iam::aws:policy/AdministratorAccess"
    wide = f"arn:aws:iam::{ACCOUNT}:policy/wide"
    grant = {"Statement": [{"Effect": "Allow", "Action": "organizations:*", "Resource": "*"}]}
    items = scan(org, [lead_role()], [role_detail(attached=(aws_managed, wide))], [policy_detail("wide", grant)])
    unbounded = [i for i in items if i.kind == "unbounded"]
    assert [(a.path, a.live) for a in unbounded[0].attributes] == [
        (f"managedPolicyArns.{wide}", ["organizations:*"]), (f"managedPolicyArns.{aws_managed}", [NOT_READ])]
    assert unbounded[0].fix == "delete the policies no stack declares (hypergov drift --prune-unmanaged)"
    assert sorted((i.type, i.ref["PolicyArn"]) for i in items if i.kind == "unmanaged") == [
        (ATTACHMENT, wide), (ATTACHMENT, aws_managed)]


def test_only_roles_under_the_role_path_are_bounded(org: OrgIam) -> None:
    admin = desired(ROLE, "platform-admin@ml-prod", stack="org", name="acme-platform-administrator",
                    path="/hypergov-platform/", assumeRolePolicy=json.dumps(TRUST))
    live = role_detail("acme-platform-administrator", path="/hypergov-platform/", boundary=None,
                       inline={"admin": {"Statement": [{"Effect": "Allow", "Action": "eks:*", "Resource": "*"}]}})
    (item,) = scan(org, [admin], [live])  # not unbounded: the platform admin role is outside the SCP's path
    assert (item.kind, item.type, item.stack, item.ref) == (
        "unmanaged", ROLE_POLICY, "org", {"RoleName": "acme-platform-administrator", "PolicyName": "admin"})


def test_missing_objects_and_an_unmanaged_boundary_policy(org: OrgIam) -> None:
    inline = desired(ROLE_POLICY, "role-lead-access@ml-prod", name="acme-nlp-lead-access", role="acme-nlp-lead",
                     policy=json.dumps(READS))
    boundary = desired(POLICY, "boundary@ml-prod", stack="org", name="acme-hypergov-permissions-boundary",
                       description="hypergov boundary", policy=json.dumps(READS))
    items = scan(org, [lead_role(), inline, boundary], [])
    assert [(i.kind, i.address) for i in items] == [("missing", "aws_iam_role.role-lead_ml-prod"),
                                                   ("missing", "aws_iam_role_policy.role-lead-access_ml-prod"),
                                                   ("missing", "aws_iam_policy.boundary_ml-prod")]
    # Declared nowhere in this account, a policy named as hypergov names the boundary is unmanaged.
    (item,) = scan(org, [], [], [policy_detail("acme-hypergov-permissions-boundary", READS)])
    assert (item.kind, item.stack, item.address, item.ref) == (
        "unmanaged", "org", "aws_iam_policy.boundary_ml-prod", {"PolicyArn": BOUNDARY})
    # The default version is what is compared, and the description where the tree sets it.
    (item,) = scan(org, [boundary], [], [policy_detail("acme-hypergov-permissions-boundary", READS, "edited")])
    assert [(a.path, a.expected, a.live) for a in item.attributes] == [("description", "hypergov boundary", "edited")]
