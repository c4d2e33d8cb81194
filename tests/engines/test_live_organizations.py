"""The live scan of the org layer's Organizations policies and their attachments to the OU.

Pure: the org stack's declared policies and attachments, live PolicySummary lists and contents
shaped as ListPolicies / DescribePolicy / ListPoliciesForTarget return them. Against the embedded
endpoint: the example tree's policies created and attached as terraform's provider does
(CreatePolicy, AttachPolicy), then detached or joined by another SCP out of band."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from embedded_aws import DEFAULT_ACCOUNT, EmbeddedAws
from engines.desired import DesiredObject
from engines.live import organizations
from engines.live.items import AttributeDrift, LiveScan
from engines.live.organizations import ATTACHMENT, POLICY, LivePolicies, OrgPolicies, compare
from engines.live.runner import CallCounter
from tests.engines.live_apply import ORG_REGION, applied_example, scan_service

OU = "ou-ml01-platform1"
SCP_TEXT = ('{"Version":"2012-10-17","Statement":[{"Sid":"Deny","Effect":"Deny","Action":["iam:*","organizations:*"],'
            '"Resource":"*"}]}')
SCP = DesiredObject(stack="org", type=POLICY, name="scp", address="aws_organizations_policy.scp", account=None,
                    region="us-west-2", inputs={"name": "acme-hypergov-maximum-boundary", "content": SCP_TEXT,
                                                "description": "the boundary", "type": "SERVICE_CONTROL_POLICY"},
                    property_dependencies={})
SCP_ATTACHMENT = DesiredObject(
    stack="org", type=ATTACHMENT, name="scp-attachment", address="aws_organizations_policy_attachment.scp-attachment",
    account=None, region="us-west-2", inputs={"policyId": "<id:scp>", "targetId": OU},
    property_dependencies={"policyId": ("urn:pulumi:org::hypergov::x$aws:organizations/policy:Policy::scp",)})
DECLARED = OrgPolicies(account=DEFAULT_ACCOUNT, region="us-west-2", policies={"scp": SCP},
                       attachments=[SCP_ATTACHMENT], targets=(OU,))


def summary(policy_id: str, name: str, *, managed: bool = False, description: str = "the boundary") -> dict[str, Any]:
    return {"Id": policy_id, "Arn": f"arn:aws:organizations::{DEFAULT_ACCOUNT}:policy/o-1/service_control_policy/"
            f"{policy_id}", "Name": name, "Description": description, "Type": "SERVICE_CONTROL_POLICY",
            "AwsManaged": managed}


FULL_ACCESS = summary("p-FullAWSAccess", "FullAWSAccess", managed=True, description="Allows access to every operation")
OURS = summary("p-abcd1234", "acme-hypergov-maximum-boundary")


def live(content: str = SCP_TEXT, attached: tuple[dict[str, Any], ...] = (FULL_ACCESS, OURS)) -> LivePolicies:
    return LivePolicies(listed=[FULL_ACCESS, OURS], contents={"p-abcd1234": content}, attached={OU: list(attached)})


def test_as_declared_is_no_drift_whatever_the_spelling_and_aws_managed_policies() -> None:
    respelled = json.dumps({"Statement": {"Resource": ["*"], "Action": ["organizations:*", "iam:*"], "Effect": "Deny",
                                          "Sid": "Deny"}, "Version": "2012-10-17"}, indent=2)
    assert compare(DECLARED, live(respelled)) == []


def test_changed_content_is_reported_as_canonical_documents() -> None:
    widened = SCP_TEXT.replace('"iam:*",', "")
    (item,) = compare(DECLARED, live(widened))
    assert (item.kind, item.address, item.stack, item.account) == (
        "changed", "aws_organizations_policy.scp", "org", DEFAULT_ACCOUNT)
    (drift,) = item.attributes
    assert drift.path == "content"
    assert drift.expected["Statement"][0]["Action"] == ["iam:*", "organizations:*"]
    assert drift.live["Statement"][0]["Action"] == ["organizations:*"]


def test_a_detached_scp_is_a_missing_attachment() -> None:
    (item,) = compare(DECLARED, live(attached=(FULL_ACCESS,)))
    assert (item.kind, item.type, item.address) == ("missing", ATTACHMENT,
                                                    "aws_organizations_policy_attachment.scp-attachment")
    assert item.fix == "hypergov apply --stack org re-attaches it"


def test_a_deleted_policy_is_missing_with_its_attachment() -> None:
    gone = LivePolicies(listed=[FULL_ACCESS], contents={}, attached={OU: [FULL_ACCESS]})
    assert [(i.kind, i.type) for i in compare(DECLARED, gone)] == [("missing", POLICY), ("missing", ATTACHMENT)]


def test_another_customer_policy_on_the_ou_is_unmanaged() -> None:
    extra = summary("p-ffff0000", "deny-regions", description="by hand")
    (item,) = compare(DECLARED, live(attached=(FULL_ACCESS, OURS, extra)))
    assert (item.kind, item.stack, item.address) == (
        "unmanaged", "org", "aws_organizations_policy_attachment.deny-regions_ou-ml01-platform1")
    assert item.ref == {"PolicyId": "p-ffff0000", "TargetId": OU}
    assert AttributeDrift("targetId", None, OU) in item.attributes


# --- against the embedded endpoint ----------------------------------------------------------------

TYPES = (POLICY, ATTACHMENT)


def scan(aws: EmbeddedAws, context: Any) -> LiveScan:
    return scan_service(aws, organizations.units, context)


def test_after_an_apply_the_scan_is_clean_with_one_describe_per_declared_policy(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    aws.clear_calls()
    result = scan(aws, applied.context)
    assert (result.items, result.complete) == ((), True)
    calls = Counter(c["operation"] for c in aws.calls() if c["service"] == "organizations")
    assert calls == {"ListPolicies": 2, "ListPoliciesForTarget": 2, "DescribePolicy": 2}  # 2 types, 1 OU
    assert result.api_calls == 6


def test_the_scp_detached_and_another_attached_are_found_and_pruning_detaches_only_the_other(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    org = aws.client("organizations", region=ORG_REGION)
    org.detach_policy(PolicyId=applied.policy_ids["scp"], TargetId=OU)
    extra = org.create_policy(Name="deny-regions", Type="SERVICE_CONTROL_POLICY", Description="by hand",
                              Content=json.dumps({"Version": "2012-10-17", "Statement": [
                                  {"Effect": "Deny", "NotAction": "iam:*", "Resource": "*"}]}))["Policy"]
    extra_id = extra["PolicySummary"]["Id"]
    org.attach_policy(PolicyId=extra_id, TargetId=OU)
    result = scan(aws, applied.context)
    assert [(i.kind, i.address) for i in result.items] == [
        ("unmanaged", "aws_organizations_policy_attachment.deny-regions_ou-ml01-platform1"),
        ("missing", "aws_organizations_policy_attachment.scp-attachment")]
    unmanaged = result.items[0]
    assert unmanaged.ref == {"PolicyId": extra_id, "TargetId": OU}
    organizations.PRUNERS[unmanaged.type].delete(org, unmanaged, CallCounter())
    assert [i.kind for i in scan(aws, applied.context).items] == ["missing"]
    attached = {p["Id"] for p in org.list_policies_for_target(TargetId=OU, Filter="SERVICE_CONTROL_POLICY")["Policies"]}
    assert extra_id not in attached and "p-FullAWSAccess" in attached
    assert org.describe_policy(PolicyId=extra_id)["Policy"]["PolicySummary"]["Name"] == "deny-regions"  # not deleted


def test_an_edited_scp_is_changed_content(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    org = aws.client("organizations", region=ORG_REGION)
    org.update_policy(PolicyId=applied.policy_ids["scp"], Content=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "iam:*", "Resource": "*"}]}))
    (item,) = scan(aws, applied.context).items
    assert (item.kind, item.address, [a.path for a in item.attributes]) == (
        "changed", "aws_organizations_policy.scp", ["content"])
