"""How a Pulumi `aws:*` resource is named and spelled in Terraform: per type token its Terraform
type, renamed inputs, nested blocks and the attribute its id is read from (`MAPPINGS`); everything
else is camelCase -> snake_case. Pure and below both engines: the terraform engine translates a
graph with it (`engines.terraform.translate`), and the live scan names and compares desired
objects with the same addresses and attribute names terraform plans (`engines.desired`,
`engines.live.scan_plan`), so a drift item and a plan name an object alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TypeMapping:
    tf_type: str
    renames: Mapping[str, str] = field(default_factory=dict)
    blocks: frozenset[str] = frozenset()  # Terraform attribute names that are nested blocks
    drop: frozenset[str] = frozenset()  # Pulumi-only inputs with no Terraform counterpart
    id_attribute: str = "id"
    # A lookup (a Pulumi invoke, `stacks.resource_graph.LOOKUPS`) is a Terraform data source: each result
    # path a graph's placeholder names -> the Terraform expression of it, `@` for the data source.
    results: Mapping[str, str] = field(default_factory=dict)

    @property
    def data_source(self) -> bool:
        return bool(self.results)


MAPPINGS: dict[str, TypeMapping] = {
    "aws:iam/role:Role": TypeMapping("aws_iam_role", renames={"inlinePolicies": "inline_policy"},
                                     blocks=frozenset({"inline_policy"})),
    "aws:iam/policy:Policy": TypeMapping("aws_iam_policy"),
    "aws:iam/rolePolicy:RolePolicy": TypeMapping("aws_iam_role_policy"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": TypeMapping("aws_iam_role_policy_attachment"),
    "aws:organizations/policy:Policy": TypeMapping("aws_organizations_policy"),
    "aws:organizations/policyAttachment:PolicyAttachment": TypeMapping("aws_organizations_policy_attachment"),
    "aws:budgets/budget:Budget": TypeMapping(
        "aws_budgets_budget", renames={"costFilters": "cost_filter", "notifications": "notification"},
        blocks=frozenset({"cost_filter", "notification", "cost_types", "auto_adjust_data", "planned_limit"})),
    "aws:eks/accessEntry:AccessEntry": TypeMapping("aws_eks_access_entry"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": TypeMapping(
        "aws_eks_access_policy_association", blocks=frozenset({"access_scope"})),
    "aws:sns/topic:Topic": TypeMapping("aws_sns_topic"),
    "aws:sns/topicPolicy:TopicPolicy": TypeMapping("aws_sns_topic_policy"),
    "aws:ssoadmin/permissionSet:PermissionSet": TypeMapping("aws_ssoadmin_permission_set", id_attribute="arn"),
    "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy": TypeMapping(
        "aws_ssoadmin_permission_set_inline_policy"),
    "aws:ssoadmin/permissionsBoundaryAttachment:PermissionsBoundaryAttachment": TypeMapping(
        "aws_ssoadmin_permissions_boundary_attachment", blocks=frozenset({"permissions_boundary"})),
    "aws:ssoadmin/accountAssignment:AccountAssignment": TypeMapping("aws_ssoadmin_account_assignment"),
}
MAPPINGS_BY_TF = {m.tf_type: m for m in MAPPINGS.values()}
# The reads a graph may hold (`stacks.resource_graph.LOOKUPS`), as Terraform data sources. A role lookup
# gives exactly one role (`one`: none or two is an error at apply, never a guess).
DATA_SOURCES: dict[str, TypeMapping] = {
    "aws:identitystore/getGroup:getGroup": TypeMapping(
        "aws_identitystore_group", blocks=frozenset({"alternate_identifier"}), results={"groupId": "@.group_id"}),
    "aws:identitystore/getUser:getUser": TypeMapping(
        "aws_identitystore_user", blocks=frozenset({"alternate_identifier"}), results={"userId": "@.user_id"}),
    "aws:iam/getRoles:getRoles": TypeMapping("aws_iam_roles", results={"arns[0]": "one(@.arns)"}),
}
AWS_PROVIDER_TYPE = "pulumi:providers:aws"


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def tf_name(logical: str) -> str:
    """A Terraform resource name from a Pulumi logical name (letters, digits, '_', '-')."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", logical)
    return cleaned if re.match(r"^[A-Za-z_]", cleaned) else f"r_{cleaned}"
