"""`OrganizationGovernance`: the organization layer. The SCP built from the org's maximum
boundary, attached to the OU; the IAM permissions-boundary policy, in every org account (project
roles live in the accounts of their clusters and must all carry it); the tag policy for the cost
tags; and per account the SNS topic project budgets alert to."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components import arns, policies
from components.tags import cost_tags
from hypergov import naming
from hypergov.model.org import Organization
from hypergov.model.project import Project

TYPE = "hypergov:index:OrganizationGovernance"


@dataclass(frozen=True)
class OrganizationGovernanceArgs:
    org: Organization
    projects: Mapping[str, Project]  # the tag policy's allowed values come from them
    management: aws.Provider  # Organizations lives in the management account
    accounts: Mapping[str, aws.Provider]  # account id -> provider for that account


def _json(document: object) -> str:
    return json.dumps(document, sort_keys=False, separators=(",", ":"))


class OrganizationGovernance(pulumi.ComponentResource):
    def __init__(self, name: str, args: OrganizationGovernanceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        org = args.org
        tags = cost_tags(org, layer="organization")
        child = pulumi.ResourceOptions(parent=self, provider=args.management)
        self.scp = aws.organizations.Policy(
            "scp", name=naming.scp_name(org.name), type="SERVICE_CONTROL_POLICY",
            description="hypergov: the org's maximum permission boundary for every hypergov role",
            content=_json(policies.scp_document(org)), tags=tags, opts=child)
        aws.organizations.PolicyAttachment("scp-attachment", policy_id=self.scp.id,
                                           target_id=org.organizational_unit, opts=child)
        centres = [p.cost_centre for p in args.projects.values() if p.cost_centre]
        self.tag_policy = aws.organizations.Policy(
            "tag-policy", name=naming.tag_policy_name(org.name), type="TAG_POLICY",
            description="hypergov: cost-attribution tag keys and known values",
            content=_json(policies.tag_policy_document(org, teams=args.projects, cost_centres=centres)),
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
        self.register_outputs({"scpName": naming.scp_name(org.name),
                               "boundaryPolicyArns": [arns.boundary_policy_arn(org, str(a.id)) for a in org.accounts]})


def _budget_topic_policy(topic_arn: str, account: str) -> dict[str, object]:
    return {"Version": policies.VERSION, "Statement": [{
        "Sid": "AwsBudgetsPublish", "Effect": "Allow", "Principal": {"Service": "budgets.amazonaws.com"},
        "Action": "SNS:Publish", "Resource": topic_arn,
        "Condition": {"StringEquals": {"aws:SourceAccount": account}}}]}
