"""`OrganizationGovernance`: the organization layer. The SCP built from the org's maximum
boundary, attached to the OU; the IAM permissions-boundary policy, in every org account (project
roles live in the accounts of their clusters and must all carry it); the tag policy for the cost
tags; per account the SNS topic project budgets alert to; and, when org.yaml defines
`personas.PlatformAdministrator`, the Platform Administrator persona: per account a role trusted by
`platform_admins` with that policy, and on every governed EKS cluster an access entry binding it
to `AmazonEKSClusterAdminPolicy` (cluster scope).

The Platform Administrator role is the article's "can create/reclaim clusters and set global
policies". The maximum boundary caps project roles and denies exactly that, so the role carries no
permissions boundary and lives under `naming.PLATFORM_ADMIN_ROLE_PATH`, outside the SCP's
`/hypergov/` condition (README: "The Platform Administrator persona")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components import arns, policies
from components.identity_center import (
    ClusterAccess,
    PermissionSetSpec,
    declare_permission_set,
    identity_center_members,
)
from components.tags import cost_tags
from hypergov import naming
from hypergov.model.common import is_identity_center
from hypergov.model.org import PlatformAdministratorPolicy
from hypergov.stack_views import OrgView

TYPE = "hypergov:index:OrganizationGovernance"
CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"  # EKS's published access policy for cluster-admin


@dataclass(frozen=True)
class OrganizationGovernanceArgs:
    view: OrgView  # the org; projects' cost centres (tag policy); clusters' account, region, EKS name
    management: aws.Provider  # Organizations lives in the management account
    accounts: Mapping[str, aws.Provider]  # account id -> provider for that account (home region)
    cluster_providers: Mapping[str, aws.Provider]  # cluster name -> provider of its account and region
    identity_center: aws.Provider | None = None  # the Identity Center account and region, when org.yaml names one


def _json(document: object) -> str:
    return json.dumps(document, sort_keys=False, separators=(",", ":"))


class OrganizationGovernance(pulumi.ComponentResource):
    def __init__(self, name: str, args: OrganizationGovernanceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        org = args.view.org
        tags = cost_tags(org, layer="organization")
        child = pulumi.ResourceOptions(parent=self, provider=args.management)
        self.scp = aws.organizations.Policy(
            "scp", name=naming.scp_name(org.name), type="SERVICE_CONTROL_POLICY",
            description="hypergov: the org's maximum permission boundary for every hypergov role",
            content=_json(policies.scp_document(org)), tags=tags, opts=child)
        aws.organizations.PolicyAttachment("scp-attachment", policy_id=self.scp.id,
                                           target_id=org.organizational_unit, opts=child)
        centres = [p.cost_centre for p in args.view.projects.values() if p.cost_centre]
        self.tag_policy = aws.organizations.Policy(
            "tag-policy", name=naming.tag_policy_name(org.name), type="TAG_POLICY",
            description="hypergov: cost-attribution tag keys and known values",
            content=_json(policies.tag_policy_document(org, teams=args.view.projects, cost_centres=centres)),
            tags=tags, opts=child)
        aws.organizations.PolicyAttachment("tag-policy-attachment", policy_id=self.tag_policy.id,
                                           target_id=org.organizational_unit, opts=child)
        boundary = _json(policies.boundary_document(org.permission_boundary))
        for account in org.accounts:
            provider = args.accounts[str(account.id)]
            in_account = pulumi.ResourceOptions(parent=self, provider=provider)
            aws.iam.Policy(f"boundary@{account.name}", name=naming.boundary_policy_name(org.name),
                           description="hypergov: permissions boundary of every hypergov-made role",
                           policy=boundary, tags=tags, opts=in_account)
            topic_arn = arns.budget_topic_arn(org, str(account.id))
            topic = aws.sns.Topic(f"budget-alerts@{account.name}", name=naming.budget_alert_topic_name(org.name),
                          tags=tags, opts=in_account)
            aws.sns.TopicPolicy(f"budget-alerts-policy@{account.name}", arn=topic_arn,
                                policy=_json(_budget_topic_policy(topic_arn, str(account.id))),
                                opts=pulumi.ResourceOptions(parent=self, provider=provider,
                                                            depends_on=[topic]))
        admin = org.personas.PlatformAdministrator
        if admin is not None:
            self._platform_administrator(args, admin, tags=tags)
        self.register_outputs({"scpName": naming.scp_name(org.name),
                               "boundaryPolicyArns": [arns.boundary_policy_arn(org, str(a.id)) for a in org.accounts]})


    def _platform_administrator(self, args: OrganizationGovernanceArgs, admin: PlatformAdministratorPolicy, *,
                                tags: Mapping[str, str]) -> None:
        """The Platform Administrator role in every account (for IAM platform admins) and its
        permission set (for Identity Center ones), each with cluster-admin access entries."""
        org = args.view.org
        if any(not is_identity_center(p) for p in org.platform_admins):
            self._platform_administrator_role(args, admin, tags=tags)
        members = identity_center_members(org.platform_admins)
        ic = org.identity_center
        if not members or ic is None:  # validation refuses Identity Center members without it (REF008)
            return
        clusters = [ClusterAccess(
            key=name, eks_cluster_name=c.eks.cluster_name, account=arns.account_id(org, c.account),
            provider=args.cluster_providers[name], groups=(), scope={"type": "cluster"},
            policy_arn=arns.eks_access_policy_arn(org, CLUSTER_ADMIN_POLICY))
            for name, c in sorted(args.view.clusters.items())]
        spec = PermissionSetSpec(
            key="platform-admin", name=naming.platform_admin_permission_set_name(org.name),
            description="hypergov: Platform Administrator (org layer)",
            policy=policies.platform_admin_policy(admin), boundary=None, members=members,
            accounts={str(a.id): (a.name, args.accounts[str(a.id)]) for a in org.accounts}, clusters=clusters)
        assert args.identity_center is not None, "stacks.program gives the Identity Center provider with members"
        declare_permission_set(self, spec, identity_center=ic, provider=args.identity_center, tags=tags)

    def _platform_administrator_role(self, args: OrganizationGovernanceArgs, admin: PlatformAdministratorPolicy, *,
                                     tags: Mapping[str, str]) -> None:
        org = args.view.org
        name = naming.platform_admin_role_name(org.name)
        roles: dict[str, aws.iam.Role] = {}
        for account in org.accounts:
            acct = str(account.id)
            in_account = pulumi.ResourceOptions(parent=self, provider=args.accounts[acct])
            roles[acct] = aws.iam.Role(
                f"platform-admin@{account.name}", name=name, path=naming.PLATFORM_ADMIN_ROLE_PATH,
                description="hypergov: Platform Administrator (org layer), assumed by the org's platform_admins",
                assume_role_policy=_json(policies.trust_policy(org.platform_admins)),
                max_session_duration=3600, tags=tags, opts=in_account)
            aws.iam.RolePolicy(
                f"platform-admin-access@{account.name}", name=naming.platform_admin_policy_name(org.name),
                role=name, policy=_json(policies.platform_admin_policy(admin)),
                opts=pulumi.ResourceOptions(parent=self, provider=args.accounts[acct], depends_on=[roles[acct]]))
        for cluster_name, cluster in sorted(args.view.clusters.items()):
            acct = arns.account_id(org, cluster.account)
            principal = arns.platform_admin_role_arn(org, acct)
            provider = args.cluster_providers[cluster_name]
            entry = aws.eks.AccessEntry(
                f"platform-admin-access@{cluster_name}", cluster_name=cluster.eks.cluster_name,
                principal_arn=principal, type="STANDARD", tags=tags,
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[roles[acct]]))
            aws.eks.AccessPolicyAssociation(
                f"platform-admin-cluster-admin@{cluster_name}", cluster_name=cluster.eks.cluster_name,
                principal_arn=principal, policy_arn=arns.eks_access_policy_arn(org, CLUSTER_ADMIN_POLICY),
                access_scope={"type": "cluster"},
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[entry]))


def _budget_topic_policy(topic_arn: str, account: str) -> dict[str, object]:
    return {"Version": policies.VERSION, "Statement": [{
        "Sid": "AwsBudgetsPublish", "Effect": "Allow", "Principal": {"Service": "budgets.amazonaws.com"},
        "Action": "SNS:Publish", "Resource": topic_arn,
        "Condition": {"StringEquals": {"aws:SourceAccount": account}}}]}
