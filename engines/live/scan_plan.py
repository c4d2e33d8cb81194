"""A merge request's terraform changes decided from the live scan instead of `terraform plan`.

Terraform plans a stack by refreshing what its state holds (the objects of the tree last applied,
here the base tree's desired objects) and diffing the configuration (the head tree's) with what it
read. The live scan of the head's desired objects reads the same live values in a few list calls
for the whole org, so the plan follows from three inputs, without a terraform process per stack:

- an object the head declares that the base did not: create;
- one both declare: replace when an input the provider cannot update in place differs between
  them (`REPLACED_WHEN`, the provider docs' "Forces new resource") or the scan finds it changed
  there; else create when the scan finds it missing (terraform's refresh drops it from state),
  update when the scan finds it changed, and nothing to do when it finds it as the head declares;
- one the base declared and the head does not: delete.

Pure: desired objects and drift items in, `ResourceChange`s in terraform's spelling out. What
terraform alone decides (computed values, provider defaults) is not shown; the reconciler's real
terraform plan is compared with this one before anything is applied (`reconciler.reviewed`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engines.live.desired import DesiredObject
from engines.live.items import DriftItem
from engines.plan import Action, AttributeChange, ResourceChange
from engines.terraform.translate import MAPPINGS, snake

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
    """One stack's terraform changes, in address order (no-ops left out)."""
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
        attributes = [AttributeChange(terraform_name(obj.type, a.path), before=a.live, after=a.expected,
                                      forces_replacement=a.path.partition(".")[0] in forced)
                      for i in drifted for a in i.attributes]
        if renamed or any(a.forces_replacement for a in attributes):
            moved = [AttributeChange(terraform_name(obj.type, k), before=was.inputs.get(k), after=obj.inputs.get(k),
                                     forces_replacement=True) for k in renamed]
            changes.append(_change(obj, Action.REPLACE, moved or attributes))
        elif attributes:
            changes.append(_change(obj, Action.UPDATE, attributes))
    changes += [_change(gone, Action.DELETE) for address, gone in before.items()
                if address not in {o.address for o in head}]
    return tuple(sorted(changes, key=lambda c: c.address))


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
