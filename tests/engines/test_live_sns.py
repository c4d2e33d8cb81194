"""The live scan of the org's budget-alert SNS topics and topic policies.

Pure: the org stack's declared topic and policy; ListTopics ARNs and the Policy attribute of
GetTopicAttributes as SNS returns them. Against the embedded endpoint: the example tree's topics
created as terraform's provider creates them (CreateTopic, SetTopicAttributes Policy), then
edited or deleted out of band."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from embedded_aws import EmbeddedAws
from engines.desired import DesiredObject
from engines.live import sns
from engines.live.items import LiveScan
from engines.live.sns import TOPIC, TOPIC_POLICY, PlaceTopics, compare
from tests.engines.live_apply import applied_example, scan_service

PROD = "111122223333"
ARN = f"arn:aws:sns:us-west-2:{PROD}:acme-hypergov-budget-alerts"
POLICY_TEXT = json.dumps({"Version": "2012-10-17", "Statement": [{
    "Sid": "AwsBudgetsPublish", "Effect": "Allow", "Principal": {"Service": "budgets.amazonaws.com"},
    "Action": "SNS:Publish", "Resource": ARN, "Condition": {"StringEquals": {"aws:SourceAccount": PROD}}}]})


def declared(type_token: str, logical: str, address: str, **inputs: Any) -> DesiredObject:
    return DesiredObject(stack="org", type=type_token, name=logical, address=address, account=PROD, region="us-west-2",
                         inputs=inputs, property_dependencies={})


PLACE = PlaceTopics(
    account=PROD, region="us-west-2",
    topics={ARN: declared(TOPIC, "budget-alerts@ml-prod", "aws_sns_topic.budget-alerts_ml-prod",
                          name="acme-hypergov-budget-alerts")},
    policies={ARN: declared(TOPIC_POLICY, "budget-alerts-policy@ml-prod",
                            "aws_sns_topic_policy.budget-alerts-policy_ml-prod", arn=ARN, policy=POLICY_TEXT)})


def test_the_policy_as_sns_returns_it_in_another_spelling_is_no_drift() -> None:
    respelled = json.loads(POLICY_TEXT)
    respelled["Statement"][0]["Action"] = ["SNS:Publish"]
    respelled["Statement"][0]["Resource"] = [ARN]
    assert compare(PLACE, [ARN, f"arn:aws:sns:us-west-2:{PROD}:other"], {ARN: json.dumps(respelled)}) == []


def test_an_edited_policy_is_changed() -> None:
    edited = json.loads(POLICY_TEXT)
    edited["Statement"][0]["Principal"] = {"AWS": "*"}
    (item,) = compare(PLACE, [ARN], {ARN: json.dumps(edited)})
    assert (item.kind, item.type, item.address, item.stack) == (
        "changed", TOPIC_POLICY, "aws_sns_topic_policy.budget-alerts-policy_ml-prod", "org")
    (drift,) = item.attributes
    assert drift.path == "policy"
    assert (drift.expected["Statement"][0]["Principal"], drift.live["Statement"][0]["Principal"]) == (
        {"Service": ["budgets.amazonaws.com"]}, {"AWS": ["*"]})


def test_a_deleted_topic_is_missing_with_its_policy() -> None:
    assert [(i.kind, i.type) for i in compare(PLACE, [], {})] == [("missing", TOPIC), ("missing", TOPIC_POLICY)]


# --- against the embedded endpoint ----------------------------------------------------------------

TYPES = (TOPIC, TOPIC_POLICY)


def scan(aws: EmbeddedAws, context: Any) -> LiveScan:
    return scan_service(aws, sns.units, context)


def test_after_an_apply_the_scan_is_clean_with_one_list_and_one_policy_read_per_topic(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    aws.clear_calls()
    result = scan(aws, applied.context)
    assert (result.items, result.complete) == ((), True)
    calls = Counter(c["operation"] for c in aws.calls() if c["service"] == "sns")
    assert calls == {"ListTopics": 2, "GetTopicAttributes": 2}  # 2 accounts, a topic each


def test_an_edited_topic_policy_is_changed_and_nothing_else(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    client = aws.client("sns", account=PROD, region="us-west-2")
    edited = json.loads(POLICY_TEXT)
    edited["Statement"][0]["Condition"] = {}
    client.set_topic_attributes(TopicArn=ARN, AttributeName="Policy", AttributeValue=json.dumps(edited))
    client.create_topic(Name="someone-elses")
    (item,) = scan(aws, applied.context).items
    assert (item.kind, item.address, item.account, [a.path for a in item.attributes]) == (
        "changed", "aws_sns_topic_policy.budget-alerts-policy_ml-prod", PROD, ["policy"])


def test_a_deleted_topic_is_missing_with_its_policy_and_no_attributes_are_read(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    aws.client("sns", account=PROD, region="us-west-2").delete_topic(TopicArn=ARN)
    aws.clear_calls()
    result = scan(aws, applied.context)
    assert [(i.kind, i.account, i.type) for i in result.items] == [("missing", PROD, TOPIC),
                                                                    ("missing", PROD, TOPIC_POLICY)]
    assert Counter(c["operation"] for c in aws.calls() if c["service"] == "sns")["GetTopicAttributes"] == 1
