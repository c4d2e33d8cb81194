"""A merge request's terraform changes decided from the live scan instead of `terraform plan`.

Terraform plans a stack by refreshing what its state holds (the objects of the tree last applied,
here the base tree's desired objects) and diffing the configuration (the head tree's) with what it
read. The live scan of the base's desired objects is that refresh for the whole org in a few list
calls: its items say where live state differs from what was applied. So the plan follows from
three inputs, without a terraform process per stack:

- an object the head declares that the base did not: create;
- one both declare: replace when an input the provider cannot update in place differs between
  them (`REPLACED_WHEN`, the provider docs' "Forces new resource") or has drifted live; else create
  when the scan finds it missing (terraform's refresh drops it from state); else update where the
  live value (the base's, or the scan's where it drifted) differs from the head's; else nothing;
- one the base declared and the head does not: delete.

Scanning the base, not the head, is what terraform does, and it needs no graph of the head: the
scan runs while the head's graphs are captured (`engines.live.scan.scanned_terraform_changes`).

Pure: desired objects and drift items in, `ResourceChange`s in terraform's spelling out. What
terraform alone decides (computed values, provider defaults) is not shown; the reconciler's real
terraform plan is compared with this one before anything is applied (`reconciler.reviewed`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engines.desired import DesiredObject
from engines.live.documents import parsed, same_document
from engines.live.items import AttributeDrift, DriftItem, masked
from engines.plan import Action, AttributeChange, ResourceChange
from engines.type_mappings import MAPPINGS, snake

# Pulumi inputs (as the graph spells them) whose change the AWS provider can only apply by
# replacing the resource ("Forces new resource" in the provider's documentation of each type).
REPLACED_WHEN: Mapping[str, frozenset[str]] = {
    "aws:iam/role:Role": frozenset({"name", "namePrefix", "path"}),
    "aws:iam/policy:Policy": frozenset({"name", "namePrefix", "path", "description"}),
    "aws:iam/rolePolicy:RolePolicy": frozenset({"name", "namePrefix", "role"}),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": frozenset({"role", "policyArn"}),
    "aws:organizations/policyAttachment:PolicyAttachment": frozenset({"policyId", "targetId"}),
    "aws:organizations/policy:Policy": frozenset({"type"}),
    "aws:budgets/budget:Budget": frozenset({"accountId", "name", "namePrefix"}),
    "aws:eks/accessEntry:AccessEntry": frozenset({"clusterName", "principalArn", "type"}),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": frozenset(
        {"clusterName", "principalArn", "policyArn", "accessScope"}),
    "aws:sns/topic:Topic": frozenset({"name", "namePrefix", "fifoTopic"}),
    "aws:sns/topicPolicy:TopicPolicy": frozenset({"arn"}),
    "aws:ssoadmin/permissionSet:PermissionSet": frozenset({"instanceArn", "name"}),
    "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy": frozenset({"instanceArn", "permissionSetArn"}),
    "aws:ssoadmin/permissionsBoundaryAttachment:PermissionsBoundaryAttachment": frozenset(
        {"instanceArn", "permissionSetArn", "permissionsBoundary"}),
    "aws:ssoadmin/accountAssignment:AccountAssignment": frozenset(
        {"instanceArn", "permissionSetArn", "principalId", "principalType", "targetId", "targetType"}),
}
EXECUTOR = "terraform"
BOUNDARY = "permissionsBoundary"


def terraform_name(type_token: str, path: str) -> str:
    """A Pulumi input path in terraform's spelling (`maxSessionDuration` -> `max_session_duration`)."""
    head, _, rest = path.partition(".")
    mapping = MAPPINGS.get(type_token)
    name = mapping.renames.get(head, snake(head)) if mapping else snake(head)
    return f"{name}.{rest}" if rest else name


def _change(obj: DesiredObject, action: Action, attributes: Iterable[AttributeChange] = ()) -> ResourceChange:
    tf_type, _, name = obj.address.partition(".")
    return ResourceChange(address=obj.address, type=tf_type, name=name, action=action, executor=EXECUTOR,
                          attributes=tuple(attributes))


def _terraform_item(item: DriftItem) -> bool:
    """Whether terraform would act on what the item says: a changed or missing declared object, or
    an unbounded role whose boundary (a role attribute) is gone; never an unmanaged object."""
    if item.kind in ("changed", "missing"):
        return True
    return item.kind == "unbounded" and any(a.path == BOUNDARY for a in item.attributes)


def stack_changes(base: Sequence[DesiredObject], head: Sequence[DesiredObject],
                  items: Sequence[DriftItem]) -> tuple[ResourceChange, ...]:
    """One stack's terraform changes, in address order (no-ops left out); `items`: the scan of the
    base's objects (live against what was applied)."""
    before = {o.address: o for o in base}
    found: dict[str, list[DriftItem]] = {}
    for item in items:
        if _terraform_item(item):
            found.setdefault(item.address, []).append(item)
    changes: list[ResourceChange] = []
    for obj in head:
        was = before.get(obj.address)
        if was is None:
            changes.append(_change(obj, Action.CREATE))
            continue
        forced = REPLACED_WHEN.get(obj.type, frozenset())
        renamed = sorted(k for k in forced if was.inputs.get(k) != obj.inputs.get(k))
        drifted = found.get(obj.address, [])
        if not renamed and any(i.kind == "missing" for i in drifted):  # renamed: the old object is what is live
            changes.append(_change(obj, Action.CREATE))
            continue
        attributes = _updated(obj, was, [a for i in drifted for a in i.attributes], forced)
        if renamed or any(a.forces_replacement for a in attributes):
            moved = [AttributeChange(terraform_name(obj.type, k), before=was.inputs.get(k), after=obj.inputs.get(k),
                                     forces_replacement=True) for k in renamed]
            changes.append(_change(obj, Action.REPLACE, moved or attributes))
        elif attributes:
            changes.append(_change(obj, Action.UPDATE, attributes))
    changes += [_change(gone, Action.DELETE) for address, gone in before.items()
                if address not in {o.address for o in head}]
    return tuple(sorted(changes, key=lambda c: c.address))


def _updated(obj: DesiredObject, was: DesiredObject, drifted: Sequence[AttributeDrift],
             forced: frozenset[str]) -> list[AttributeChange]:
    """The attributes whose live value differs from the head's: where the scan found drift, its
    live value against the head's (the scan's expected value when the head did not change it);
    elsewhere, the base's value (what the refresh reads back) against the head's."""
    out: list[AttributeChange] = []
    for a in drifted:
        key = a.path.partition(".")[0]
        head_value = _at(obj.inputs, a.path) if was.inputs.get(key) != obj.inputs.get(key) else a.expected
        if not _alike(head_value, a.live):
            out.append(AttributeChange(terraform_name(obj.type, a.path), before=a.live, after=head_value,
                                       forces_replacement=key in forced))
    seen = {a.path.partition(".")[0] for a in drifted}
    for key in sorted({*was.inputs, *obj.inputs} - seen):
        if was.inputs.get(key) != obj.inputs.get(key):
            out.append(AttributeChange(terraform_name(obj.type, key), before=masked(key, was.inputs.get(key)),
                                       after=masked(key, obj.inputs.get(key)), forces_replacement=key in forced))
    return out


def _at(inputs: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of a resource's inputs (None where there is none)."""
    value: Any = inputs
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _alike(declared: Any, live: Any) -> bool:
    """Whether a declared value is what the scan read, in the scan's spellings (a policy document
    as JSON text or parsed, a list of groups in any order, a number as text)."""
    if declared == live:
        return True
    if isinstance(declared, str | Mapping) and isinstance(live, str | Mapping) and (
            isinstance(parsed(declared), Mapping) or isinstance(parsed(live), Mapping)):
        return same_document(declared, live)
    if isinstance(declared, list) and isinstance(live, list):
        return sorted(map(str, declared)) == sorted(map(str, live))
    try:
        return float(declared) == float(live)
    except (TypeError, ValueError):
        return False


def scan_changes(stacks: Sequence[str], base: Iterable[DesiredObject], head: Iterable[DesiredObject],
                 items: Iterable[DriftItem]) -> dict[str, tuple[ResourceChange, ...]]:
    """Every chosen stack's terraform changes (stack -> changes)."""
    def by_stack(objects: Iterable[Any]) -> dict[str, list[Any]]:
        grouped: dict[str, list[Any]] = {s: [] for s in stacks}
        for o in objects:
            if o.stack in grouped:
                grouped[o.stack].append(o)
        return grouped

    b, h, i = by_stack(base), by_stack(head), by_stack(items)
    return {s: stack_changes(b[s], h[s], i[s]) for s in stacks}
