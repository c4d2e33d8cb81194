"""People who arrive through IAM Identity Center: one permission set per persona, assigned to
exactly its Identity Center members in exactly the accounts the persona reaches, and mapped into
exactly the clusters it works on. Shared by the project and org components (declarations only).

**The permission set carries the persona's permissions itself** (its inline policy is the
persona's policy; the org's permissions boundary is attached as a customer-managed reference, so
it binds exactly as it binds the persona's IAM role). No IAM role of hypergov trusts an Identity
Center principal: the role Identity Center provisions in each account (`AWSReservedSSO_<permission
set>_<suffix>`) *is* the person's session, and nothing matches it by name prefix. Where a cluster
must know that role (an EKS access entry), its exact ARN is read back from IAM after the
assignment, by a lookup that depends on the assignment (`naming.sso_role_name_regex`: only this
permission set's roles, never `<name>_anything`). ARCHITECTURE.md ("Identity Center") has the
alternatives and why not.

Members are looked up in the identity store by name (a group's display name, a user's user name):
an assignment names the principal's id, which only the identity store knows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from hypergov import naming
from hypergov.model.common import (
    IDENTITY_STORE_NAME_ATTRIBUTE,
    duration_seconds,
    identity_center_member,
    is_identity_center,
)
from hypergov.model.org import IdentityCenter

PolicyDocument = dict[str, Any]
ACCOUNT = "AWS_ACCOUNT"
PRINCIPAL_TYPE = {"group": "GROUP", "user": "USER"}


@dataclass(frozen=True)
class ClusterAccess:
    """What the permission set's role gets on one EKS cluster: an access entry for the role, in
    `groups`, with `policy_arn` at `scope` (`{"type": "cluster"}` or a namespace scope)."""

    key: str  # the cluster's name in the tree (resource names)
    eks_cluster_name: str
    account: str
    provider: pulumi.ProviderResource
    groups: tuple[str, ...]
    policy_arn: str
    scope: Mapping[str, Any]


@dataclass(frozen=True)
class PermissionSetSpec:
    key: str  # the stem of the resources' logical names, e.g. "engineer"
    name: str  # naming.permission_set_name / platform_admin_permission_set_name
    description: str
    policy: PolicyDocument
    boundary: tuple[str, str] | None  # customer-managed policy (name, path) in every assigned account
    members: Sequence[str]  # the Identity Center members ("identitycenter:group/...")
    accounts: Mapping[str, tuple[str, pulumi.ProviderResource]]  # account id -> (alias, its provider)
    clusters: Sequence[ClusterAccess] = ()


def identity_center_members(principals: Sequence[str]) -> list[str]:
    return sorted({p for p in principals if is_identity_center(p)})


def iso_duration(value: str) -> str:
    """'8h' -> 'PT8H' (a permission set's SessionDuration is ISO 8601)."""
    hours, rest = divmod(duration_seconds(value), 3600)
    return f"PT{hours}H" if not rest else f"PT{duration_seconds(value) // 60}M"


def member_key(principal: str) -> str:
    """A logical-name part for a member; names with other characters keep a digest, so two
    members never share one."""
    kind, name = identity_center_member(principal)
    slug = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in name)[:40]
    if slug != name:
        slug = f"{slug}-{naming.short_digest(name)}"
    return f"{kind}-{slug}"


def _json(document: object) -> str:
    return json.dumps(document, separators=(",", ":"))


def declare_permission_set(parent: pulumi.Resource, spec: PermissionSetSpec, *, identity_center: IdentityCenter,
                           provider: pulumi.ProviderResource, tags: Mapping[str, str]) -> None:
    """The permission set of `spec`, its policy and boundary, its assignments, and its role's
    access to `spec.clusters`. `provider`: the Identity Center account and region."""
    ic = identity_center
    opts = pulumi.ResourceOptions(parent=parent, provider=provider)
    permission_set = aws.ssoadmin.PermissionSet(
        f"permission-set-{spec.key}", name=spec.name, description=spec.description, instance_arn=ic.instance_arn,
        session_duration=iso_duration(ic.session_duration), tags=dict(tags), opts=opts)
    provisioned: list[pulumi.Resource] = [aws.ssoadmin.PermissionSetInlinePolicy(
        f"permission-set-{spec.key}-policy", instance_arn=ic.instance_arn, permission_set_arn=permission_set.arn,
        inline_policy=_json(spec.policy), opts=opts)]
    if spec.boundary is not None:
        name, path = spec.boundary
        provisioned.append(aws.ssoadmin.PermissionsBoundaryAttachment(
            f"permission-set-{spec.key}-boundary", instance_arn=ic.instance_arn,
            permission_set_arn=permission_set.arn,
            permissions_boundary={"customer_managed_policy_reference": {"name": name, "path": path}}, opts=opts))
    principal_ids = {m: _principal_id(m, ic, provider) for m in spec.members}
    assignments: dict[str, list[pulumi.Resource]] = {}
    for account, (alias, _) in sorted(spec.accounts.items()):
        for member in spec.members:
            kind, _ = identity_center_member(member)
            assignments.setdefault(account, []).append(aws.ssoadmin.AccountAssignment(
                f"assignment-{spec.key}-{member_key(member)}@{alias}", instance_arn=ic.instance_arn,
                permission_set_arn=permission_set.arn, principal_id=principal_ids[member],
                principal_type=PRINCIPAL_TYPE[kind], target_id=account, target_type=ACCOUNT,
                opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=provisioned)))
    for cluster in spec.clusters:
        if cluster.account not in assignments:
            continue
        _, account_provider = spec.accounts[cluster.account]
        role = aws.iam.get_roles_output(
            name_regex=naming.sso_role_name_regex(spec.name), path_prefix=naming.sso_role_path(ic.region),
            opts=pulumi.InvokeOutputOptions(provider=account_provider, depends_on=assignments[cluster.account]))
        principal = role.arns.apply(lambda arns: arns[0])
        entry = aws.eks.AccessEntry(
            f"access-sso-{spec.key}@{cluster.key}", cluster_name=cluster.eks_cluster_name, principal_arn=principal,
            kubernetes_groups=list(cluster.groups) or None, type="STANDARD", tags=dict(tags),
            opts=pulumi.ResourceOptions(parent=parent, provider=cluster.provider))
        aws.eks.AccessPolicyAssociation(
            f"access-sso-policy-{spec.key}@{cluster.key}", cluster_name=cluster.eks_cluster_name,
            principal_arn=principal, policy_arn=cluster.policy_arn, access_scope=dict(cluster.scope),
            opts=pulumi.ResourceOptions(parent=parent, provider=cluster.provider, depends_on=[entry]))


def _principal_id(member: str, ic: IdentityCenter, provider: pulumi.ProviderResource) -> pulumi.Output[str]:
    # The Args classes, not dicts: an invoke's nested dict keys are sent as written (snake_case),
    # where the provider reads the schema's names.
    kind, name = identity_center_member(member)
    opts = pulumi.InvokeOutputOptions(provider=provider)
    if kind == "group":
        group = aws.identitystore.GetGroupAlternateIdentifierArgs(
            unique_attribute=aws.identitystore.GetGroupAlternateIdentifierUniqueAttributeArgs(
                attribute_path=IDENTITY_STORE_NAME_ATTRIBUTE[kind], attribute_value=name))
        return aws.identitystore.get_group_output(identity_store_id=ic.identity_store_id, alternate_identifier=group,
                                                  opts=opts).group_id
    user = aws.identitystore.GetUserAlternateIdentifierArgs(
        unique_attribute=aws.identitystore.GetUserAlternateIdentifierUniqueAttributeArgs(
            attribute_path=IDENTITY_STORE_NAME_ATTRIBUTE[kind], attribute_value=name))
    return aws.identitystore.get_user_output(identity_store_id=ic.identity_store_id, alternate_identifier=user,
                                             opts=opts).user_id
