"""The whole example tree's EKS access, Organizations, Budgets and SNS objects applied on the
embedded endpoint and scanned through `scan_with` with the registered services: nothing reported,
every call counted, and the must-show out-of-band changes found together, each once."""

from __future__ import annotations

from embedded_aws import DEFAULT_ACCOUNT, EmbeddedAws
from engines.live import budgets, eks_read, organizations, sns
from engines.live.scan import PRUNERS, scan_with
from tests.engines.live_apply import ORG_REGION, applied_example

SERVICES = (eks_read.units, organizations.units, budgets.units, sns.units)
TYPES = ("aws:iam/role:Role", "aws:sns/topic:Topic", "aws:sns/topicPolicy:TopicPolicy",
         "aws:organizations/policy:Policy", "aws:organizations/policyAttachment:PolicyAttachment",
         "aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
         "aws:budgets/budget:Budget")
PROD = "111122223333"


def test_the_applied_tree_scans_clean_and_each_out_of_band_change_is_found_once(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    client_for = lambda s, a, r: aws.client(s, account=a or DEFAULT_ACCOUNT, region=r)  # noqa: E731
    aws.clear_calls()
    clean = scan_with(applied.context, client_for, services=SERVICES)
    assert (clean.items, clean.complete) == ((), True)
    # EKS 2 lists + 22 entries x 2, Organizations 6, Budgets 2 accounts x 2 lists, SNS 2 lists + 2
    # policies; first the programs' reads: 9 identity-store members, a ListRoles page per account
    assert clean.api_calls == len(aws.calls()) == 46 + 6 + 4 + 4 + 9 + 2
    assert set(PRUNERS) >= {"aws:eks/accessEntry:AccessEntry", "aws:organizations/policyAttachment:PolicyAttachment",
                            "aws:budgets/budget:Budget"}

    eks = aws.client("eks", account=PROD, region="us-west-2")
    eks.delete_access_entry(clusterName="gpu-west-eks", principalArn=f"arn:aws:iam::{PROD}:role/hypergov/acme-nlp-lead")
    aws.client("organizations", region=ORG_REGION).detach_policy(PolicyId=applied.policy_ids["scp"],
                                                                 TargetId="ou-ml01-platform1")
    aws.client("sns", account=PROD, region="us-west-2").set_topic_attributes(
        TopicArn=f"arn:aws:sns:us-west-2:{PROD}:acme-hypergov-budget-alerts", AttributeName="Policy",
        AttributeValue='{"Version":"2012-10-17","Statement":[]}')
    drifted = scan_with(applied.context, client_for, services=SERVICES)
    assert [(i.kind, i.stack, i.address) for i in drifted.items] == [
        ("missing", "org", "aws_organizations_policy_attachment.scp-attachment"),
        ("changed", "org", "aws_sns_topic_policy.budget-alerts-policy_ml-prod"),
        ("missing", "project-nlp", "aws_eks_access_entry.access-lead_gpu-west"),
        ("missing", "project-nlp", "aws_eks_access_policy_association.access-policy-lead_gpu-west")]
