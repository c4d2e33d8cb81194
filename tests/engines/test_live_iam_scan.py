"""The live IAM scan against the embedded endpoint (in this process): the example tree's IAM
objects created with boto3 the way terraform's AWS provider creates them (CreatePolicy, CreateRole
with Path, the trust policy as JSON text, PermissionsBoundary and Tags, PutRolePolicy) scan clean;
then each out-of-band change is found as the right kind with the right attributes and nothing
else, with the GetAccountAuthorizationDetails pages counted against the endpoint's own call log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.config import Config

from embedded_aws import EmbeddedAws
from engines.desired import DesiredObject, of_type
from engines.live import iam_read
from engines.live.iam import IAM_TYPES, POLICY, ROLE, ROLE_POLICY
from engines.live.items import LiveScan
from engines.live.runner import CallCounter, ScanContext
from engines.live.scan import PRUNERS, scan_context, scan_with
from hypergov.validate import load_valid_tree

PROD, RESEARCH = "111122223333", "444455556666"  # the example tree's accounts (config/org.yaml)
BOUNDARY = f"arn:aws:iam::{PROD}:policy/acme-hypergov-permissions-boundary"
ONE_TRY = Config(retries={"mode": "standard", "total_max_attempts": 1})
TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                 "Principal": {"AWS": f"arn:aws:iam::{PROD}:root"}}]}


@pytest.fixture(scope="module")
def context() -> ScanContext:
    return scan_context(load_valid_tree("config"), cache_dir=None)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[EmbeddedAws]:
    with EmbeddedAws() as aws:
        yield aws


@pytest.fixture
def aws(endpoint: EmbeddedAws, context: ScanContext) -> EmbeddedAws:
    """The endpoint with the example tree's IAM objects applied, and nothing else."""
    endpoint.reset()
    apply_iam(endpoint, of_type(context.desired, *IAM_TYPES))
    endpoint.clear_calls()
    return endpoint


def tags(obj: DesiredObject) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in sorted((obj.input("tags") or {}).items())]


def apply_iam(aws: EmbeddedAws, objects: list[DesiredObject]) -> None:
    """As terraform's AWS provider applies them: policies, then roles, then inline policies."""
    for obj in of_type(objects, POLICY):
        iam(aws, obj.account).create_policy(PolicyName=obj.input("name"), Path=obj.input("path") or "/",
                                            Description=obj.input("description") or "",
                                            PolicyDocument=obj.input("policy"), Tags=tags(obj))
    for obj in of_type(objects, ROLE):
        optional = {k: obj.input(i) for k, i in (("PermissionsBoundary", "permissionsBoundary"),
                                                  ("Description", "description"),
                                                  ("MaxSessionDuration", "maxSessionDuration")) if obj.input(i)}
        iam(aws, obj.account).create_role(RoleName=obj.input("name"), Path=obj.input("path"),
                                          AssumeRolePolicyDocument=obj.input("assumeRolePolicy"), Tags=tags(obj),
                                          **optional)
    for obj in of_type(objects, ROLE_POLICY):
        iam(aws, obj.account).put_role_policy(RoleName=obj.input("role"), PolicyName=obj.input("name"),
                                              PolicyDocument=obj.input("policy"))


def iam(aws: EmbeddedAws, account: str | None) -> Any:
    return aws.client("iam", account=account or PROD, region="us-east-1")


def scan(aws: EmbeddedAws, context: ScanContext) -> LiveScan:
    return scan_with(context, lambda service, account, region: aws.client(service, account=account, region=region,
                                                                           config=ONE_TRY),
                     services=(iam_read.units,))


def iam_calls(aws: EmbeddedAws) -> list[str]:
    return [c["operation"] for c in aws.calls() if c["service"] == "iam"]


def declared(context: ScanContext, type_token: str, name: str, account: str = PROD) -> DesiredObject:
    return next(o for o in of_type(context.desired, type_token) if o.input("name") == name and o.account == account)


def test_an_applied_tree_scans_clean_with_one_page_per_account(aws: EmbeddedAws, context: ScanContext) -> None:
    result = scan(aws, context)
    assert (result.items, result.complete) == ((), True)
    # Per account: one GAAD page (fewer than 1,000 roles and policies) and one ListRoles page for the
    # description and maximum session duration GAAD does not carry; nothing per role. Before that,
    # the programs' reads: per account one ListRoles page under Identity Center's path (the roles
    # of every permission set there), and one identity-store lookup per member the tree names
    # (config/: 8 groups, ml-platform-admins to finance-analysts, and the user ravi).
    assert sorted(iam_calls(aws)) == ["GetAccountAuthorizationDetails"] * 2 + ["ListRoles"] * 4
    assert result.api_calls == 6 + 9 and result.calls_by_service == {"iam": 6, "identitystore": 9}


def test_gaad_pages_are_followed(aws: EmbeddedAws, context: ScanContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(iam_read, "PAGE_SIZE", 3)
    objects = of_type(context.desired, ROLE, POLICY)
    per_account = {a: sum(1 for o in objects if o.account == a) for a in (PROD, RESEARCH)}
    result = scan(aws, context)
    assert result.items == ()
    # MaxItems counts roles and policies together (the endpoint pages as the API reference says).
    expected_pages = sum(-(-n // 3) for n in per_account.values())
    assert iam_calls(aws).count("GetAccountAuthorizationDetails") == expected_pages


def test_a_removed_boundary_is_unbounded(aws: EmbeddedAws, context: ScanContext) -> None:
    iam(aws, PROD).delete_role_permissions_boundary(RoleName="acme-nlp-lead")
    (item,) = scan(aws, context).items
    role = declared(context, ROLE, "acme-nlp-lead")
    assert (item.kind, item.stack, item.address, item.type, item.account) == (
        "unbounded", "project-nlp", role.address, ROLE, PROD)
    assert [(a.path, a.expected, a.live) for a in item.attributes] == [("permissionsBoundary", BOUNDARY, None)]
    assert item.fix == "hypergov apply --stack project-nlp re-attaches the boundary"


def test_a_role_made_by_hand_under_the_hypergov_path_is_unmanaged(aws: EmbeddedAws, context: ScanContext) -> None:
    client = iam(aws, PROD)
    # nlp's Viewer persona has no members, so the project declares no viewer role: named as hypergov
    # would name it, it is attributed to project-nlp at the address that stack would give it.
    client.create_role(RoleName="acme-nlp-viewer", Path="/hypergov/", AssumeRolePolicyDocument=json.dumps(TRUST),
                       PermissionsBoundary=BOUNDARY)
    client.create_role(RoleName="console-made", Path="/hypergov/", AssumeRolePolicyDocument=json.dumps(TRUST),
                       PermissionsBoundary=BOUNDARY)
    client.create_role(RoleName="elsewhere", Path="/", AssumeRolePolicyDocument=json.dumps(TRUST))  # not governed
    items = scan(aws, context).items
    assert [(i.kind, i.stack, i.address, i.account, i.ref["RoleName"]) for i in items] == [
        ("unmanaged", "org", "aws_iam_role.console-made", PROD, "console-made"),
        ("unmanaged", "project-nlp", "aws_iam_role.role-viewer_ml-prod", PROD, "acme-nlp-viewer")]
    assert {a.path: a.live for a in items[0].attributes} == {"path": "/hypergov/", "assumeRolePolicy": TRUST,
                                                             "permissionsBoundary": BOUNDARY}
    assert items[1].fix == "delete it (hypergov drift --prune-unmanaged) or declare it in projects/nlp.yaml"


def test_a_hand_made_role_without_boundary_is_unmanaged_and_unbounded(aws: EmbeddedAws,
                                                                      context: ScanContext) -> None:
    iam(aws, RESEARCH).create_role(RoleName="console-made", Path="/hypergov/",
                                   AssumeRolePolicyDocument=json.dumps(TRUST))
    items = sorted(scan(aws, context).items, key=lambda i: i.kind)
    assert [(i.kind, i.address, i.account) for i in items] == [
        ("unbounded", "aws_iam_role.console-made", RESEARCH), ("unmanaged", "aws_iam_role.console-made", RESEARCH)]
    assert [(a.path, a.live) for a in items[0].attributes] == [("permissionsBoundary", None)]


def test_an_inline_policy_granting_iam_is_unmanaged_and_unbounded(aws: EmbeddedAws, context: ScanContext) -> None:
    grant = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "iam:*", "Resource": "*"}]}
    iam(aws, PROD).put_role_policy(RoleName="acme-nlp-lead", PolicyName="by-hand",
                                   PolicyDocument=json.dumps(grant))
    items = sorted(scan(aws, context).items, key=lambda i: i.kind)
    role = declared(context, ROLE, "acme-nlp-lead")
    assert [(i.kind, i.type, i.stack, i.address) for i in items] == [
        ("unbounded", ROLE, "project-nlp", role.address),
        ("unmanaged", ROLE_POLICY, "project-nlp", "aws_iam_role_policy.acme-nlp-lead_by-hand")]
    assert [(a.path, a.live) for a in items[0].attributes] == [("inlinePolicies.by-hand", ["iam:*"])]
    assert items[1].ref == {"RoleName": "acme-nlp-lead", "PolicyName": "by-hand"}


def test_an_edited_trust_policy_is_changed(aws: EmbeddedAws, context: ScanContext) -> None:
    iam(aws, RESEARCH).update_assume_role_policy(RoleName="acme-nlp-lead", PolicyDocument=json.dumps(TRUST))
    (item,) = scan(aws, context).items
    role = declared(context, ROLE, "acme-nlp-lead", RESEARCH)
    assert (item.kind, item.address, item.account) == ("changed", role.address, RESEARCH)
    assert [(a.path, a.expected, a.live) for a in item.attributes] == [
        ("assumeRolePolicy", role.document("assumeRolePolicy"), TRUST)]
    assert item.fix == "hypergov apply --stack project-nlp restores it"


def test_description_and_deleted_inline_policy(aws: EmbeddedAws, context: ScanContext) -> None:
    client = iam(aws, PROD)
    client.update_role(RoleName="acme-recsys-lead", Description="edited by hand")
    client.delete_role_policy(RoleName="acme-recsys-engineer", PolicyName="acme-recsys-engineer-access")
    items = scan(aws, context).items
    policy = declared(context, ROLE_POLICY, "acme-recsys-engineer-access")
    assert [(i.kind, i.address, [(a.path, a.live) for a in i.attributes]) for i in items] == [
        ("changed", declared(context, ROLE, "acme-recsys-lead").address, [("description", "edited by hand")]),
        ("missing", policy.address, [])]


def equivalent(document: dict[str, Any]) -> str:
    """The same policy as another writer spells it: keys reversed, indented, lists reversed, a
    one-element list as its string and a string as a one-element list (IAM reads them alike)."""
    def respell(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: member(v) for k, v in reversed(list(value.items()))}
        return value

    def member(value: Any) -> Any:
        if isinstance(value, list):
            items = [respell(v) for v in reversed(value)]
            return items[0] if len(items) == 1 else items
        if isinstance(value, str) and value.startswith(("arn:", "sts:")):
            return [value]
        return respell(value)
    return json.dumps(respell(document), indent=4)


def test_equivalent_documents_are_no_drift(aws: EmbeddedAws, context: ScanContext) -> None:
    client = iam(aws, PROD)
    role = declared(context, ROLE, "acme-nlp-lead")
    policy = declared(context, ROLE_POLICY, "acme-nlp-lead-access")
    client.update_assume_role_policy(RoleName="acme-nlp-lead", PolicyDocument=equivalent(
        role.document("assumeRolePolicy")))
    client.put_role_policy(RoleName="acme-nlp-lead", PolicyName="acme-nlp-lead-access",
                           PolicyDocument=equivalent(policy.document("policy")))
    assert scan(aws, context).items == ()


def test_pruning_an_unmanaged_role_removes_exactly_it(aws: EmbeddedAws, context: ScanContext) -> None:
    client = iam(aws, PROD)
    client.create_role(RoleName="console-made", Path="/hypergov/", AssumeRolePolicyDocument=json.dumps(TRUST))
    client.put_role_policy(RoleName="console-made", PolicyName="extra", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}))
    client.attach_role_policy(RoleName="console-made", PolicyArn=BOUNDARY)
    client.create_instance_profile(InstanceProfileName="console-made")
    client.add_role_to_instance_profile(InstanceProfileName="console-made", RoleName="console-made")
    before = {r["RoleName"] for r in client.list_roles()["Roles"]}
    unmanaged = [i for i in scan(aws, context).items if i.kind == "unmanaged"]
    assert [i.ref for i in unmanaged] == [{"RoleName": "console-made"}]
    pruner = PRUNERS[unmanaged[0].type]
    pruner.delete(aws.client(pruner.service, account=PROD, region="us-east-1"), unmanaged[0], CallCounter())
    assert {r["RoleName"] for r in client.list_roles()["Roles"]} == before - {"console-made"}
    assert client.get_policy(PolicyArn=BOUNDARY)["Policy"]["AttachmentCount"] == 0
    assert scan(aws, context).items == ()


def test_an_account_that_cannot_be_read_makes_the_scan_incomplete(aws: EmbeddedAws, context: ScanContext) -> None:
    aws.inject_fault("iam", "GetAccountAuthorizationDetails", kind="throttle", times=1)
    try:
        result = scan(aws, context)
    finally:
        aws.clear_faults()
    assert not result.complete
    (failure,) = result.failures
    assert (failure.stack, failure.failure.kind) == ("org", "temporary")
    assert failure.what.startswith("IAM of account ")
