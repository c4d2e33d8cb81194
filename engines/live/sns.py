"""Live drift of the org's budget-alert SNS topics and their topic policies.

Read (`units`, one per account and region of a declared topic): ListTopics (paginated; 100 ARNs
a page, nothing else) and GetTopicAttributes for each declared topic with a declared policy that
is listed: no list carries a topic's policy, so one call per such topic. Tags are not compared
(that would be ListTagsForResource per topic). Compared (`compare`, pure): the topic exists, and
its Policy attribute as canonical JSON. Nothing is unmanaged: topics are not hypergov's namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engines.desired import DesiredObject, of_type
from engines.live.documents import canonical, parsed, same_document
from engines.live.items import DriftItem, DriftKind, attribute
from engines.live.runner import CallCounter, ScanContext, ScanUnit, by_place

TOPIC = "aws:sns/topic:Topic"
TOPIC_POLICY = "aws:sns/topicPolicy:TopicPolicy"


@dataclass(frozen=True)
class PlaceTopics:
    account: str
    region: str
    topics: Mapping[str, DesiredObject]  # topic ARN -> its declaration
    policies: Mapping[str, DesiredObject]  # topic ARN -> its declared policy


def topic_arn(obj: DesiredObject, account: str) -> str:
    return f"arn:aws:sns:{obj.region}:{account}:{obj.input('name')}"


def compare(place: PlaceTopics, listed: Sequence[str], policies: Mapping[str, str | None]) -> list[DriftItem]:
    """`listed`: the ARNs ListTopics returned; `policies`: topic ARN -> its Policy attribute."""
    present = set(listed)
    items = []
    for arn, obj in sorted(place.topics.items()):
        if arn not in present:
            items.append(_item(place, obj, "missing", f"hypergov apply --stack {obj.stack} recreates it"))
    for arn, obj in sorted(place.policies.items()):
        if arn not in present:
            items.append(_item(place, obj, "missing", f"hypergov apply --stack {obj.stack} recreates it"))
        elif not same_document(obj.input("policy"), policies.get(arn)):
            items.append(_item(place, obj, "changed", f"hypergov apply --stack {obj.stack} restores it",
                               attributes=(attribute("policy", canonical(obj.input("policy")),
                                                     canonical(parsed(policies.get(arn)))),)))
    return items


def _item(place: PlaceTopics, obj: DesiredObject, kind: DriftKind, fix: str, *,
          attributes: tuple[Any, ...] = ()) -> DriftItem:
    return DriftItem(kind=kind, stack=obj.stack, address=obj.address, type=obj.type, account=place.account,
                     region=place.region, fix=fix, attributes=attributes)


# --- I/O -------------------------------------------------------------------------------------------

def scan_place(client: Any, place: PlaceTopics, calls: CallCounter) -> list[DriftItem]:
    listed = [str(t["TopicArn"]) for page in calls.pages(client, "list_topics") for t in page.get("Topics", [])]
    present = set(listed)
    policies = {arn: calls(client, "get_topic_attributes", TopicArn=arn).get("Attributes", {}).get("Policy")
                for arn in sorted(place.policies) if arn in present}
    return compare(place, listed, policies)


def places(context: ScanContext) -> list[PlaceTopics]:
    found = []
    for (account, region), objs in sorted(by_place(of_type(context.desired, TOPIC, TOPIC_POLICY), context).items(),
                                          key=lambda kv: (kv[0][0] or "", kv[0][1])):
        acct = account or ""
        found.append(PlaceTopics(account=acct, region=region,
                                 topics={topic_arn(o, acct): o for o in objs if o.type == TOPIC},
                                 policies={str(o.input("arn")): o for o in objs if o.type == TOPIC_POLICY}))
    return found


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit per account and region with declared topics."""
    return [ScanUnit(service="sns", account=p.account or None, region=p.region,
                     stack=next(iter({**p.topics, **p.policies}.values())).stack,
                     what=f"SNS topics of account {p.account} in {p.region}", read=_reader(p),
                     covers=frozenset(o.stack for o in (*p.topics.values(), *p.policies.values())))
            for p in places(context)]


def _reader(place: PlaceTopics) -> Any:
    return lambda client, calls: scan_place(client, place, calls)
