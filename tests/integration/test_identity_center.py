"""People who arrive through IAM Identity Center, for real: the example tree's project stacks
through the real terraform and AWS provider against the embedded endpoint (which serves sso-admin
and identitystore, and provisions each assigned permission set as the IAM role AWS documents),
checked with boto3, not with hypergov's records.

Expected values come from the tree as written (config/org.yaml's persona actions, the members of
config/projects/*.yaml) and from AWS's documentation of Identity Center: a permission set
provisioned to an account is the role `AWSReservedSSO_<name>_<16 hex>` under
`/aws-reserved/sso.amazonaws.com/<region>/` ("Referencing permission sets in resource policies").
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest
import yaml

from embedded_aws import EmbeddedAwsProcess
from engines.plan import Plan, StackName
from tests.integration.conftest import CONFIG, PROD, REGION, EngineFactory, example_files

pytestmark = pytest.mark.integration

ORG, GPU_WEST, TRN_EAST = StackName("org"), StackName("cluster-gpu-west"), StackName("cluster-trn-east")
VISION, NLP = StackName("project-vision"), StackName("project-nlp")
STACKS = (ORG, GPU_WEST, TRN_EAST, VISION, NLP)
RESEARCH_ACCOUNT = "444455556666"  # ml-research (trn-east): nlp holds quota there, vision does not
INSTANCE = "arn:aws:sso:::instance/ssoins-7223a7b5d1e5e2c4"  # config/org.yaml identity_center
STORE = "d-9067c1a2b3"
SSO_PATH = "/aws-reserved/sso.amazonaws.com/us-west-2/"


def _apply(engine_for: EngineFactory, files: dict[str, bytes], stacks: tuple[StackName, ...] = STACKS) -> None:
    engine = engine_for(files)
    plans = engine.plan_many(stacks)
    assert all(isinstance(p, Plan) for p in plans.values()), plans
    for result in engine.apply_many([p for p in plans.values() if isinstance(p, Plan)]):
        assert result.ok, (result.stack, result.error, result.refusal, result.failed)


@pytest.fixture(scope="module")
def applied(engine_for: EngineFactory) -> None:
    _apply(engine_for, example_files())


def _permission_sets(endpoint: EmbeddedAwsProcess) -> dict[str, str]:
    sso = endpoint.client("sso-admin", account=PROD, region=REGION)
    arns = sso.list_permission_sets(InstanceArn=INSTANCE)["PermissionSets"]
    return {sso.describe_permission_set(InstanceArn=INSTANCE, PermissionSetArn=a)["PermissionSet"]["Name"]: a
            for a in arns}


def _group_id(endpoint: EmbeddedAwsProcess, name: str) -> str:
    store = endpoint.client("identitystore", account=PROD, region=REGION)
    return str(store.get_group_id(IdentityStoreId=STORE, AlternateIdentifier={
        "UniqueAttribute": {"AttributePath": "DisplayName", "AttributeValue": name}})["GroupId"])


def _assignments(endpoint: EmbeddedAwsProcess, permission_set: str, account: str) -> set[tuple[str, str]]:
    sso = endpoint.client("sso-admin", account=PROD, region=REGION)
    found = sso.list_account_assignments(InstanceArn=INSTANCE, AccountId=account, PermissionSetArn=permission_set)
    return {(a["PrincipalType"], a["PrincipalId"]) for a in found["AccountAssignments"]}


def _granted(document: dict[str, Any]) -> set[str]:
    return {a for st in document["Statement"] if st["Effect"] == "Allow"
            for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"])}


def _tree_actions(persona: str, project: str) -> set[str]:
    """What the tree gives `persona` in `project`: org.yaml's persona actions plus the project's
    extra permissions for it, read from the YAML itself."""
    org = yaml.safe_load((CONFIG / "org.yaml").read_text())
    extra = yaml.safe_load((CONFIG / "projects" / f"{project}.yaml").read_text()).get("extra_permissions") or {}
    return set(org["personas"][persona]["actions"]) | set(extra.get(persona) or [])


def _sso_roles(endpoint: EmbeddedAwsProcess, account: str = PROD) -> dict[str, dict[str, Any]]:
    iam = endpoint.client("iam", account=account, region=REGION)
    return {r["RoleName"]: r for r in iam.list_roles(PathPrefix="/aws-reserved/sso.amazonaws.com/")["Roles"]}


def test_one_permission_set_per_persona_with_its_policy_and_the_boundary(
        applied: None, endpoint: EmbeddedAwsProcess) -> None:
    sets = _permission_sets(endpoint)
    # vision: Engineer (vision-engineers) and Viewer (finance-analysts) have Identity Center members,
    # its ProjectLead has none; nlp: ProjectLead (user ravi) and Engineer (nlp-engineers).
    assert {"acme-vision-engineer", "acme-vision-viewer", "acme-nlp-lead", "acme-nlp-engineer"} <= set(sets)
    assert "acme-vision-lead" not in sets
    sso = endpoint.client("sso-admin", account=PROD, region=REGION)
    for name, persona, project in (("acme-vision-engineer", "Engineer", "vision"),
                                   ("acme-vision-viewer", "Viewer", "vision"), ("acme-nlp-lead", "ProjectLead", "nlp")):
        inline = json.loads(sso.get_inline_policy_for_permission_set(
            InstanceArn=INSTANCE, PermissionSetArn=sets[name])["InlinePolicy"])
        # exactly the persona's: each action of the tree granted, and nothing granted that no
        # action of the tree covers (a pattern may be written out as the concrete cluster actions
        # it covers, to scope them to the project's clusters by ARN)
        wanted, granted = _tree_actions(persona, project), _granted(inline)
        assert wanted <= granted, (name, wanted - granted)
        assert all(any(fnmatch.fnmatch(g.lower(), w.lower()) for w in wanted) for g in granted), name
        boundary = sso.get_permissions_boundary_for_permission_set(InstanceArn=INSTANCE, PermissionSetArn=sets[name])
        assert boundary["PermissionsBoundary"] == {
            "CustomerManagedPolicyReference": {"Name": "acme-hypergov-permissions-boundary", "Path": "/"}}
        described = sso.describe_permission_set(InstanceArn=INSTANCE, PermissionSetArn=sets[name])["PermissionSet"]
        assert described["SessionDuration"] == "PT8H"  # org.yaml: session_duration: 8h


def test_assigned_to_exactly_the_members_in_exactly_the_projects_accounts(
        applied: None, endpoint: EmbeddedAwsProcess) -> None:
    sets = _permission_sets(endpoint)
    assert _assignments(endpoint, sets["acme-vision-engineer"], PROD) == {
        ("GROUP", _group_id(endpoint, "vision-engineers"))}
    assert _assignments(endpoint, sets["acme-vision-viewer"], PROD) == {
        ("GROUP", _group_id(endpoint, "finance-analysts"))}
    store = endpoint.client("identitystore", account=PROD, region=REGION)
    ravi = store.get_user_id(IdentityStoreId=STORE, AlternateIdentifier={
        "UniqueAttribute": {"AttributePath": "UserName", "AttributeValue": "ravi"}})["UserId"]
    # nlp holds quota on gpu-west (ml-prod) and trn-east (ml-research): assigned in both
    assert _assignments(endpoint, sets["acme-nlp-lead"], PROD) == {("USER", ravi)}
    assert _assignments(endpoint, sets["acme-nlp-lead"], RESEARCH_ACCOUNT) == {("USER", ravi)}
    for name in ("acme-vision-engineer", "acme-vision-viewer"):
        assert _assignments(endpoint, sets[name], RESEARCH_ACCOUNT) == set(), name  # no quota there


def test_the_provisioned_role_is_mapped_into_the_cluster_exactly(applied: None, endpoint: EmbeddedAwsProcess) -> None:
    roles = _sso_roles(endpoint)
    (engineer,) = [r for n, r in roles.items() if fnmatch.fnmatch(n, "AWSReservedSSO_acme-vision-engineer_*")]
    assert engineer["Path"] == SSO_PATH and len(engineer["RoleName"].rsplit("_", 1)[1]) == 16
    eks = endpoint.client("eks", account=PROD, region=REGION)
    entry = eks.describe_access_entry(clusterName="gpu-west-eks", principalArn=engineer["Arn"])["accessEntry"]
    assert entry["kubernetesGroups"] == ["hyperpod-ns-vision-engineer-group"]
    scopes = eks.list_associated_access_policies(clusterName="gpu-west-eks", principalArn=engineer["Arn"])
    assert [p["accessScope"] for p in scopes["associatedAccessPolicies"]] == [
        {"type": "namespace", "namespaces": ["hyperpod-ns-vision"]}]


def test_a_second_plan_is_empty(applied: None, engine_for: EngineFactory) -> None:
    plans = engine_for(example_files()).plan_many(STACKS)
    for stack, plan in plans.items():
        assert isinstance(plan, Plan), (stack, plan)
        assert not plan.actionable, (stack, [(c.address, c.action) for c in plan.actionable])


def _trusts(document: dict[str, Any], principal_arn: str, account: str, session: str) -> bool:
    """Whether a trust policy lets a session `session` (Identity Center names it after the user) of
    the role `principal_arn` in `account` assume the role: IAM's evaluation of the forms hypergov
    has written (a principal by ARN, or the account root with ArnLike / StringLike conditions on
    aws:PrincipalArn / aws:userid, `<role id>:<session>` for a role session), `*` and `?` as IAM
    has them."""
    for statement in document["Statement"]:
        if statement["Effect"] != "Allow":
            continue
        aws = statement.get("Principal", {}).get("AWS", [])
        aws = [aws] if isinstance(aws, str) else aws
        if principal_arn in aws:
            return True
        if f"arn:aws:iam::{account}:root" not in aws:
            continue
        conditions = statement.get("Condition", {})
        arns = conditions.get("ArnLike", {}).get("aws:PrincipalArn", ["*"])
        userids = conditions.get("StringLike", {}).get("aws:userid", ["*"])
        if any(fnmatch.fnmatchcase(principal_arn, p) for p in ([arns] if isinstance(arns, str) else arns)) and \
                any(fnmatch.fnmatchcase(f"AROA3XFRBF23EXAMPLE:{session}", p)
                    for p in ([userids] if isinstance(userids, str) else userids)):
            return True
    return False


def _hand_made_role(endpoint: EmbeddedAwsProcess, name: str, principal_type: str, principal_id: str) -> str:
    """A permission set somebody made by hand, assigned in ml-prod: the ARN of its role."""
    sso = endpoint.client("sso-admin", account=PROD, region=REGION)
    arn = sso.create_permission_set(InstanceArn=INSTANCE, Name=name)["PermissionSet"]["PermissionSetArn"]
    sso.create_account_assignment(InstanceArn=INSTANCE, TargetId=PROD, TargetType="AWS_ACCOUNT",
                                  PermissionSetArn=arn, PrincipalType=principal_type, PrincipalId=principal_id)
    (role,) = [r for n, r in _sso_roles(endpoint).items() if n.startswith(f"AWSReservedSSO_{name}_")]
    return str(role["Arn"])


def test_a_hand_made_permission_set_named_like_a_member_reaches_nothing(
        applied: None, endpoint: EmbeddedAwsProcess) -> None:
    """Before: a group was trusted through any `AWSReservedSSO_<group>_*` role, so a permission
    set named `<group>_anything` (or any set a user holds) reached the project's roles."""
    store = endpoint.client("identitystore", account=PROD, region=REGION)
    ravi = store.get_user_id(IdentityStoreId=STORE, AlternateIdentifier={
        "UniqueAttribute": {"AttributePath": "UserName", "AttributeValue": "ravi"}})["UserId"]
    engineers = _group_id(endpoint, "vision-engineers")
    impostors = [(_hand_made_role(endpoint, "vision-engineers_anything", "GROUP", engineers), "ktanaka"),
                 (_hand_made_role(endpoint, "acme-vision-engineer_x", "GROUP", engineers), "ktanaka"),
                 (_hand_made_role(endpoint, "ravi-adhoc", "USER", ravi), "ravi")]
    iam = endpoint.client("iam", account=PROD, region=REGION)
    roles = [*iam.list_roles(PathPrefix="/hypergov/")["Roles"],
             *iam.list_roles(PathPrefix="/hypergov-platform/")["Roles"]]
    assert roles
    for role in roles:
        document = role["AssumeRolePolicyDocument"]
        document = json.loads(document) if isinstance(document, str) else document
        for impostor, session in impostors:
            assert not _trusts(document, impostor, PROD, session), (role["RoleName"], impostor)
    eks = endpoint.client("eks", account=PROD, region=REGION)
    entries = set(eks.list_access_entries(clusterName="gpu-west-eks")["accessEntries"])
    assert not entries & {arn for arn, _ in impostors}
