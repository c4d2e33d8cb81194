"""Live drift of the org layer's Organizations policies (the SCP that is the maximum boundary, the
cost-tag policy) and their attachments to the governed OU, in the management account.

Read (`units`): ListPolicies per policy type the tree declares (paginated; its summaries carry
names, ids and AwsManaged, never the content), DescribePolicy only for the declared policies
found (no list carries the content: one call per declared policy), and ListPoliciesForTarget on
each governed target (org.yaml's `organizational_unit` and every declared attachment's target)
per type. Compared (`compare`, pure): content as canonical JSON and the description, the
attachments declared, and as unmanaged every other customer policy attached to a governed target
(AWS-managed ones such as FullAWSAccess, which AWS attaches to every OU, are left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.desired import DesiredObject, address_of, of_type
from engines.live.documents import canonical, parsed, same_document
from engines.live.items import AttributeDrift, DriftItem, DriftKind, attribute
from engines.live.runner import CallCounter, Pruner, ScanContext, ScanUnit
from hypergov import naming

POLICY = "aws:organizations/policy:Policy"
ATTACHMENT = "aws:organizations/policyAttachment:PolicyAttachment"
DEFAULT_TYPE = "SERVICE_CONTROL_POLICY"  # the provider's default for aws_organizations_policy.type
PAGE_SIZE = 20  # the most ListPolicies and ListPoliciesForTarget return a page (MaxResults)


@dataclass(frozen=True)
class LivePolicies:
    listed: Sequence[Mapping[str, Any]]  # PolicySummary of every policy of the declared types
    contents: Mapping[str, str]  # policy id -> its Content (DescribePolicy), for the declared policies found
    attached: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)  # target id -> summaries


@dataclass(frozen=True)
class OrgPolicies:
    """What the org stack declares in the management account."""

    account: str
    region: str
    policies: Mapping[str, DesiredObject]  # logical name -> policy
    attachments: Sequence[DesiredObject]
    targets: tuple[str, ...]  # the governed targets: the OU and every declared attachment's target

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(sorted({policy_type(p) for p in self.policies.values()}))


def policy_type(obj: DesiredObject) -> str:
    return str(obj.input("type") or DEFAULT_TYPE)


def referenced_policy(attachment: DesiredObject) -> str:
    """The logical name of the policy an attachment's `policyId` refers to ("<id:scp>": scp's id)."""
    urns = attachment.property_dependencies.get("policyId", ())
    if urns:
        return urns[0].rsplit("::", 1)[-1]
    return str(attachment.input("policyId")).removeprefix("<id:").removesuffix(">")


def org_policies(desired: Sequence[DesiredObject], *, caller_account: str | None, ou: str | None) -> OrgPolicies | None:
    policies = {o.name: o for o in of_type(desired, POLICY)}
    attachments = of_type(desired, ATTACHMENT)
    if not policies and not attachments:
        return None
    first = next(iter(policies.values()), None) or attachments[0]
    targets = sorted({str(a.input("targetId")) for a in attachments} | ({ou} if ou else set()))
    return OrgPolicies(account=first.account or caller_account or "", region=first.region, policies=policies,
                       attachments=attachments, targets=tuple(targets))


def compare(declared: OrgPolicies, live: LivePolicies) -> list[DriftItem]:
    found = {(str(s["Type"]), str(s["Name"])): s for s in live.listed}
    ids: dict[str, str] = {}  # logical name -> live id
    items: list[DriftItem] = []
    for name, obj in sorted(declared.policies.items()):
        summary = found.get((policy_type(obj), str(obj.input("name"))))
        if summary is None:
            items.append(_item(declared, obj.stack, obj.address, POLICY, "missing",
                               f"hypergov apply --stack {obj.stack} creates it"))
            continue
        ids[name] = str(summary["Id"])
        if changed := policy_drift(obj, summary, live.contents.get(ids[name])):
            items.append(_item(declared, obj.stack, obj.address, POLICY, "changed",
                               f"hypergov apply --stack {obj.stack} restores it", attributes=changed))
    attached = {(str(s["Id"]), target) for target, listed in live.attached.items() for s in listed}
    declared_pairs = set()
    for obj in declared.attachments:
        policy_id = ids.get(referenced_policy(obj))
        target = str(obj.input("targetId"))
        declared_pairs.add((policy_id, target))
        if policy_id is None or (policy_id, target) not in attached:
            why = "" if policy_id else " (with its policy)"
            items.append(_item(declared, obj.stack, obj.address, ATTACHMENT, "missing",
                               f"hypergov apply --stack {obj.stack} re-attaches it{why}"))
    for target in declared.targets:
        for summary in live.attached.get(target, ()):
            if not summary.get("AwsManaged") and (str(summary["Id"]), target) not in declared_pairs:
                items.append(_unmanaged(declared, summary, target))
    return items


def policy_drift(obj: DesiredObject, summary: Mapping[str, Any], content: str | None) -> tuple[AttributeDrift, ...]:
    drift = []
    if content is not None and not same_document(obj.input("content"), content):
        drift.append(attribute("content", canonical(obj.input("content")), canonical(parsed(content))))
    if obj.input("description") is not None and obj.input("description") != summary.get("Description", ""):
        drift.append(attribute("description", obj.input("description"), summary.get("Description")))
    return tuple(drift)


def _unmanaged(declared: OrgPolicies, summary: Mapping[str, Any], target: str) -> DriftItem:
    return _item(declared, naming.org_stack(), address_of(ATTACHMENT, f"{summary['Name']}@{target}"), ATTACHMENT,
                 "unmanaged", "detach it (hypergov drift --prune-unmanaged) or declare it in org.yaml",
                 attributes=(attribute("policyId", None, summary["Id"]), attribute("name", None, summary["Name"]),
                             attribute("type", None, summary["Type"]), attribute("targetId", None, target)),
                 ref={"PolicyId": str(summary["Id"]), "TargetId": target})


def _item(declared: OrgPolicies, stack: str, address: str, type_token: str, kind: DriftKind, fix: str, *,
          attributes: tuple[AttributeDrift, ...] = (), ref: Mapping[str, str] | None = None) -> DriftItem:
    return DriftItem(kind=kind, stack=stack, address=address, type=type_token, account=declared.account,
                     region=declared.region, fix=fix, attributes=attributes, ref=ref or {})


# --- I/O -------------------------------------------------------------------------------------------

def read_live(client: Any, declared: OrgPolicies, calls: CallCounter) -> LivePolicies:
    listed: list[Mapping[str, Any]] = []
    attached: dict[str, list[Mapping[str, Any]]] = {t: [] for t in declared.targets}
    for kind in declared.types:
        for page in calls.pages(client, "list_policies", Filter=kind, PaginationConfig={"PageSize": PAGE_SIZE}):
            listed += page.get("Policies", [])
        for target in declared.targets:
            for page in calls.pages(client, "list_policies_for_target", TargetId=target, Filter=kind,
                                    PaginationConfig={"PageSize": PAGE_SIZE}):
                attached[target] += page.get("Policies", [])
    wanted = {(policy_type(p), str(p.input("name"))) for p in declared.policies.values()}
    contents = {str(s["Id"]): str(calls(client, "describe_policy", PolicyId=s["Id"])["Policy"]["Content"])
                for s in listed if (s["Type"], s["Name"]) in wanted}
    return LivePolicies(listed=listed, contents=contents, attached=attached)


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit: the management account's declared policies and the governed OU."""
    org = context.tree.org.model if context.tree.org else None
    declared = org_policies(context.desired, caller_account=context.caller_account,
                            ou=org.organizational_unit if org else None)
    if declared is None:
        return []
    account = next(iter(declared.policies.values())).account if declared.policies else None
    return [ScanUnit(service="organizations", account=account, region=declared.region, stack=naming.org_stack(),
                     what=f"Organizations policies and their targets {', '.join(declared.targets)}",
                     read=lambda client, calls: compare(declared, read_live(client, declared, calls)),
                     covers=frozenset({naming.org_stack()}))]


def _detach(client: Any, item: DriftItem, calls: CallCounter) -> None:
    calls(client, "detach_policy", PolicyId=item.ref["PolicyId"], TargetId=item.ref["TargetId"])


PRUNERS = {ATTACHMENT: Pruner(service="organizations", delete=_detach)}  # never DeletePolicy
