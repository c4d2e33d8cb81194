"""Repairing what a live scan found: `changed`, `missing` and `unbounded` items by the normal
audited apply of their stacks (terraform and the HyperPod driver restore what the tree declares,
the boundary of an unbounded role included); `unmanaged` items only on request, by deleting
exactly the objects listed (each with its type's pruner), with an audit record.

Deciding is pure (`repair_plan`); acting takes the engine, the clients and the audit repository.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engines.kube import KubeApi
from engines.live.items import DriftItem
from engines.live.runner import CallCounter, Pruner, ServiceClientFor, pruning_client
from engines.outcomes import Failure, guarded
from reconciler.audit import AuditLog

REPAIRED_BY_APPLY = ("changed", "missing", "unbounded")
PRUNE_REASON = "prune unmanaged"
REPAIR_REASON = "drift repair"


@dataclass(frozen=True)
class RepairPlan:
    stacks: tuple[str, ...]  # to apply, in the tree's dependency order
    items: Mapping[str, tuple[str, ...]]  # stack -> "<kind> <address>" it repairs (the audit record's list)
    unmanaged: tuple[DriftItem, ...]
    unprunable: tuple[DriftItem, ...]  # unmanaged items of a type nothing knows how to delete


def repair_plan(items: Sequence[DriftItem], order: Sequence[str], pruners: Mapping[str, Pruner]) -> RepairPlan:
    by_stack: dict[str, list[str]] = {}
    for item in items:
        if item.kind in REPAIRED_BY_APPLY:
            by_stack.setdefault(item.stack, []).append(f"{item.kind} {item.address}")
    unmanaged = tuple(i for i in items if i.kind == "unmanaged")
    return RepairPlan(stacks=tuple(s for s in order if s in by_stack),
                      items={s: tuple(sorted(v)) for s, v in by_stack.items()},
                      unmanaged=tuple(i for i in unmanaged if i.type in pruners),
                      unprunable=tuple(i for i in unmanaged if i.type not in pruners))


@dataclass(frozen=True)
class Pruned:
    item: DriftItem
    error: Failure | None  # None: deleted

    def record(self) -> dict[str, Any]:
        i = self.item
        return {"kind": i.kind, "stack": i.stack, "address": i.address, "type": i.type, "account": i.account,
                "region": i.region, "outcome": "deleted" if self.error is None else "failed",
                **({"error": self.error.message, "error_kind": self.error.kind} if self.error else {})}


def prune(items: Sequence[DriftItem], pruners: Mapping[str, Pruner], client_for: ServiceClientFor, *,
          kube_apis: Mapping[str, Callable[[], KubeApi]] | None = None,
          on_done: Callable[[Pruned], None] | None = None) -> list[Pruned]:
    """Delete exactly these unmanaged objects, one after the other (an object's pruner knows what
    must go first, e.g. a role's policies); a failure is recorded and the others still go."""
    done: list[Pruned] = []
    calls = CallCounter()
    for item in items:
        if item.kind != "unmanaged":  # never: only what the scan found and nobody declares
            raise ValueError(f"{item.address} is {item.kind}, not unmanaged: it is not pruned")
        pruner = pruners[item.type]
        def delete(i: DriftItem, p: Pruner = pruner) -> None:
            p.delete(pruning_client(p, i, client_for, kube_apis or {}), i, calls)

        outcome = guarded(delete, item)
        result = Pruned(item, outcome if isinstance(outcome, Failure) else None)
        done.append(result)
        if on_done:
            on_done(result)
    return done


def prune_intent_payload(items: Sequence[DriftItem], *, intent_id: str, source_commit: str | None) -> dict[str, Any]:
    """Before anything is deleted: per stack, the objects the prune will delete."""
    by_stack: dict[str, list[str]] = {}
    for item in items:
        by_stack.setdefault(item.stack, []).append(f"delete {item.address}")
    return {"type": "intent", "intent": intent_id, "reason": PRUNE_REASON, "source_commit": source_commit,
            "stacks": [{"stack": s, "actions": sorted(a)} for s, a in sorted(by_stack.items())]}


def prune_payload(pruned: Sequence[Pruned], *, source_commit: str | None, intent_id: str | None) -> dict[str, Any]:
    """One audit record of a prune: which objects were deleted (identities, never values)."""
    failed = sum(1 for p in pruned if p.error)
    return {"type": "prune", "subject": "prune", "intent": intent_id, "reason": PRUNE_REASON,
            "source_commit": source_commit, "objects": [p.record() for p in pruned],
            "outcome": "applied" if not failed else "failed"}


def record_prune_intent(audit: AuditLog, items: Sequence[DriftItem], *, source_commit: str | None) -> str:
    """Write-ahead, as for applies: the intent is on the audit branch before the first delete."""
    intent_id = uuid.uuid4().hex
    audit.write([prune_intent_payload(items, intent_id=intent_id, source_commit=source_commit)],
                subject=f"intent: {PRUNE_REASON}, {len(items)} object(s)")
    return intent_id


def record_prune(audit: AuditLog, pruned: Sequence[Pruned], *, source_commit: str | None,
                 intent_id: str | None = None) -> str | None:
    """Write the prune's record on the audit branch; the branch's new tip (None: nothing pruned)."""
    if not pruned:
        return None
    failed = sum(1 for p in pruned if p.error)
    subject = f"{PRUNE_REASON}: {len(pruned) - failed} object(s) deleted" + (f", {failed} failed" if failed else "")
    audit.write([prune_payload(pruned, source_commit=source_commit, intent_id=intent_id)], subject=subject)
    return audit.store.tip()
