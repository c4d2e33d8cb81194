"""Adoption: which of the objects a plan would create are live already, and the import ID of each.

Against the embedded endpoint: the example tree's objects of some types created with boto3 as
terraform's provider creates them (`live_apply`); `find_imports` must find exactly those, each
with the ID the AWS provider's documentation gives in the "Import" section of its type, and none
of the types that were not created. Pure: the `import` blocks in Terraform's JSON syntax, and
terraform's plan JSON of an import read as the `import` action."""

from __future__ import annotations

import functools
from typing import Any

from embedded_aws import DEFAULT_ACCOUNT, EmbeddedAws
from engines.desired import DesiredObject, desired_objects
from engines.plan import Action
from engines.settings import Settings
from engines.showplan import change_from_entry
from engines.terraform.adoption import Import, find_imports, imports_config
from engines.terraform.translate import translate
from hypergov.stack_views import stack_view
from stacks.graph import capture_view
from tests.engines.live_apply import applied_example, example_context

PROD = "111122223333"
CREATED = ("aws:iam/role:Role", "aws:sns/topic:Topic", "aws:organizations/policy:Policy",
           "aws:organizations/policyAttachment:PolicyAttachment", "aws:eks/accessEntry:AccessEntry",
           "aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "aws:budgets/budget:Budget")


class _Clients:
    """The endpoint's clients as `AwsClients` hands them out (the caller acts in the management account)."""

    def __init__(self, aws: EmbeddedAws) -> None:
        self.aws = aws

    def client(self, service: str, *, region: str, account: str | None = None) -> Any:
        return self.aws.client(service, account=account or DEFAULT_ACCOUNT, region=region)

    def caller_account(self, region: str) -> str:
        return DEFAULT_ACCOUNT


@functools.cache
def _stack(name: str) -> tuple[dict[str, Any], dict[str, DesiredObject]]:
    """The stack's `main.tf.json` as the engine writes it, and its desired objects by address."""
    context = example_context()
    spec = next(s for s in context.specs if s.name == name)
    settings = Settings()
    view = stack_view(context.tree, spec.kind, spec.subject)
    graph = capture_view(view, spec.name, assume_role_name=settings.aws.account_access_role)
    config = translate(graph.resources, aws=settings.aws, provider_version=settings.terraform.provider_version,
                       default_region=view.org.home_region).config
    return config, {o.address: o for o in desired_objects(graph)}


def _adopted(aws: EmbeddedAws, stack: str) -> dict[str, str]:
    config, objects = _stack(stack)
    creates = [f"{t}.{n}" for t, bodies in config["resource"].items() for n in bodies]
    return {i.address: i.id for i in find_imports(creates, config, objects, clients=_Clients(aws))}


def test_what_is_live_is_adopted_with_the_ids_the_provider_documents(aws: EmbeddedAws) -> None:
    applied_example(aws, types=CREATED)
    project = _adopted(aws, "project-vision")
    lead = f"arn:aws:iam::{PROD}:role/hypergov/acme-vision-lead"
    # aws_iam_role: the role's name; aws_eks_access_entry: cluster_name:principal_arn;
    # aws_eks_access_policy_association: cluster_name#principal_arn#policy_arn;
    # aws_budgets_budget: account_id:budget_name.
    assert project["aws_iam_role.role-lead_ml-prod"] == "acme-vision-lead"
    assert project["aws_eks_access_entry.access-lead_gpu-west"] == f"gpu-west-eks:{lead}"
    assert project["aws_eks_access_policy_association.access-policy-lead_gpu-west"] == (
        f"gpu-west-eks#{lead}#arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy")
    assert project["aws_budgets_budget.budget_ml-prod"] == f"{PROD}:acme-vision-monthly"
    # Role policies were not created: nothing to adopt, they stay creates.
    assert not [a for a in project if a.startswith("aws_iam_role_policy.")]

    org = _adopted(aws, "org")
    organizations = aws.client("organizations", account=DEFAULT_ACCOUNT, region="us-east-1")
    scp = next(p["Id"] for p in organizations.list_policies(Filter="SERVICE_CONTROL_POLICY")["Policies"]
               if p["Name"] != "FullAWSAccess")
    governed_ou = _stack("org")[0]["resource"]["aws_organizations_policy_attachment"]["scp-attachment"]["target_id"]
    # aws_organizations_policy: the policy id; its attachment: target_id:policy_id (the id read live).
    assert org["aws_organizations_policy.scp"] == scp
    assert org["aws_organizations_policy_attachment.scp-attachment"] == f"{governed_ou}:{scp}"
    assert org["aws_sns_topic.budget-alerts_ml-prod"] == f"arn:aws:sns:us-west-2:{PROD}:acme-hypergov-budget-alerts"
    # aws_iam_policy: its ARN (live here: the permission sets applied with the access entries
    # reference it, `tests.engines.live_apply`)
    assert org["aws_iam_policy.boundary_ml-prod"] == f"arn:aws:iam::{PROD}:policy/acme-hypergov-permissions-boundary"
    assert not [a for a in org if a.startswith("aws_iam_role_policy.")]  # role policies were not created


def test_identity_center_objects_are_adopted_with_the_ids_the_provider_documents(aws: EmbeddedAws) -> None:
    """The permission sets, their inline policies, boundaries and assignments (made with the access
    entries, `live_apply`), and the access entries of the roles Identity Center provisioned: each
    read back with boto3, the IDs as the provider's "Import" sections give them. The assignment's
    principal and the entry's role come from data sources, read as terraform reads them."""
    applied_example(aws, types=CREATED)
    project = _adopted(aws, "project-vision")
    ic = example_context().tree.org.model.identity_center  # type: ignore[union-attr]
    assert ic is not None
    sso = aws.client("sso-admin", account=PROD, region=ic.region)
    arns = {sso.describe_permission_set(InstanceArn=ic.instance_arn, PermissionSetArn=a)["PermissionSet"]["Name"]: a
            for a in sso.list_permission_sets(InstanceArn=ic.instance_arn)["PermissionSets"]}
    engineer = arns["acme-vision-engineer"]
    # permission set, inline policy, boundary attachment: `<permission set ARN>,<instance ARN>`
    for address in ("aws_ssoadmin_permission_set.permission-set-engineer",
                    "aws_ssoadmin_permission_set_inline_policy.permission-set-engineer-policy",
                    "aws_ssoadmin_permissions_boundary_attachment.permission-set-engineer-boundary"):
        assert project[address] == f"{engineer},{ic.instance_arn}", address
    group = aws.client("identitystore", account=PROD, region=ic.region).get_group_id(
        IdentityStoreId=ic.identity_store_id,
        AlternateIdentifier={"UniqueAttribute": {"AttributePath": "DisplayName", "AttributeValue": "vision-engineers"}})
    # account assignment: principal_id,principal_type,target_id,target_type,permission_set_arn,instance_arn
    assert project["aws_ssoadmin_account_assignment.assignment-engineer-group-vision-engineers_ml-prod"] == (
        f"{group['GroupId']},GROUP,{PROD},AWS_ACCOUNT,{engineer},{ic.instance_arn}")
    (role,) = [r["Arn"] for r in aws.client("iam", account=PROD, region=ic.region).list_roles(
        PathPrefix=f"/aws-reserved/sso.amazonaws.com/{ic.region}/")["Roles"]
        if r["RoleName"].startswith("AWSReservedSSO_acme-vision-engineer_")]
    assert project["aws_eks_access_entry.access-sso-engineer_gpu-west"] == f"gpu-west-eks:{role}"


def test_nothing_live_nothing_adopted(aws: EmbeddedAws) -> None:
    applied_example(aws, types=())
    assert _adopted(aws, "project-vision") == {}


def test_a_role_policy_made_by_hand_is_adopted_with_role_and_name(aws: EmbeddedAws) -> None:
    applied_example(aws, types=("aws:iam/role:Role",))
    config, _ = _stack("project-vision")
    body = config["resource"]["aws_iam_role_policy"]["role-lead-access_ml-prod"]
    aws.client("iam", account=PROD, region="us-west-2").put_role_policy(
        RoleName="acme-vision-lead", PolicyName=body["name"], PolicyDocument=body["policy"])
    adopted = _adopted(aws, "project-vision")
    assert adopted["aws_iam_role_policy.role-lead-access_ml-prod"] == "acme-vision-lead:acme-vision-lead-access"
    assert "aws_iam_role_policy.role-engineer-access_ml-prod" not in adopted


def test_import_blocks_in_terraforms_json_syntax() -> None:
    blocks = imports_config([Import("aws_iam_role.b", "role-b", "aws.prod"), Import("aws_iam_role.a", "role-a", None)])
    assert blocks == {"import": [{"to": "aws_iam_role.a", "id": "role-a"},
                                 {"to": "aws_iam_role.b", "id": "role-b", "provider": "aws.prod"}]}


def test_terraforms_plan_of_an_import_reads_as_import_with_its_update() -> None:
    """`terraform show -json`: an imported resource carries `change.importing`; its actions are
    no-op (imported as configured) or update (imported, then updated where it differs)."""
    def entry(actions: list[str]) -> dict[str, Any]:
        return {"address": "aws_iam_role.r", "type": "aws_iam_role", "name": "r",
                "change": {"actions": actions, "before": {"name": "r", "max_session_duration": 7200},
                           "after": {"name": "r", "max_session_duration": 3600}, "after_unknown": {},
                           "importing": {"id": "r"}}}

    only = change_from_entry(entry(["no-op"]))
    updated = change_from_entry(entry(["update"]))
    assert (only.action, updated.action) == (Action.IMPORT, Action.IMPORT)
    assert [(a.path, a.before, a.after) for a in updated.attributes] == [("max_session_duration", 7200, 3600)]
    plain = change_from_entry({**entry(["update"]), "change": {**entry(["update"])["change"], "importing": None}})
    assert plain.action is Action.UPDATE


def test_plans_say_what_they_import_and_only_then() -> None:
    from engines.plan import Plan, ResourceChange, StackName
    from reconciler.render import render_markdown, render_text, summary_line

    imported = ResourceChange(address="aws_iam_role.r", type="aws_iam_role", name="r", action=Action.IMPORT,
                              executor="terraform")
    plan = Plan(stack=StackName("org"), engine="terraform", changes=(imported,))
    assert not plan.is_empty and plan.counts()["import"] == 1  # an import is applied: it writes the state
    assert summary_line(plan) == "org: 0 to create, 0 to update, 0 to replace, 0 to delete, 1 to import"
    assert "  <- aws_iam_role.r (aws_iam_role)" in render_text([plan])
    assert "0 to delete, 1 to import." in render_markdown([plan])
    created = Plan(stack=StackName("org"), engine="terraform",
                   changes=(ResourceChange(address="aws_iam_role.r", type="aws_iam_role", name="r",
                                           action=Action.CREATE, executor="terraform"),))
    assert summary_line(created) == "org: 1 to create, 0 to update, 0 to replace, 0 to delete"
