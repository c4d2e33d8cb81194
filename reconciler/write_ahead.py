"""Write-ahead auditing of an apply: the `intent` record (stacks, plan fingerprints, actions) is
committed on the audit branch before anything is applied, and the `outcome` records after, also
when the apply fails or is stopped. A process killed in between leaves an intent without an
outcome; the next run of the same state directory records its stacks as `interrupted`
(`resolve_interrupted`) and plans them again. No intent, no apply: when the intent cannot be
recorded, nothing is applied.

Shared by `hypergov apply`, `drift --remediate` and the reconciler, so every apply is audited the
same way. The failpoints (`engines.failpoints`) mark the phases the crash tests kill at.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines import failpoints
from engines.leases import StaleEpochError
from engines.outcomes import Refusal
from engines.plan import ApplyResult, Plan, StackName
from engines.protocol import Engine
from reconciler.audit import AuditLog, AuditTrail, intent_payload, interrupted_payloads, outcome_payload
from reconciler.audit_store import AuditConflictError, AuditWriteError, PushOutcome


@dataclass(frozen=True)
class LeaseStamp:
    """The leases an apply runs under (several reconcilers): each stack's epoch, the holder, and
    the check every record write makes first (raises StaleEpochError once one is lost)."""

    holder: str
    epochs: Mapping[str, int]
    check: Callable[[], None]


@dataclass(frozen=True)
class AuditedApply:
    results: list[ApplyResult]
    audit_commit: str | None  # the audit branch's tip after the outcome records (None: not recorded)
    audit_error: str | None  # the apply happened but its outcome could not be recorded
    records: list[dict[str, Any]] = field(default_factory=list)  # intent and outcomes, as written
    push: PushOutcome | None = None  # the audit branch's push after the records (`reconciler.rollout.publish`)


def apply_audited(engine: Engine, plans: Sequence[Plan], audit: AuditLog | None, *,
                  on_done: Callable[[ApplyResult], None] | None = None,
                  stop: threading.Event | None = None, reason: str | None = None,
                  drift: Mapping[str, tuple[str, ...]] | None = None,
                  refused: Mapping[StackName, Refusal] | None = None, source_author: str | None = None,
                  leases: LeaseStamp | None = None, review: str | None = None) -> AuditedApply:
    """Record the intent, apply in dependency order, record the outcomes (in a `finally`: a stack
    cut off mid-apply is recorded as interrupted). Without `audit` (`--no-audit`) nothing is
    recorded. `reason` and `drift` (per stack, the drift items repaired) say why, when it is not a
    merge; `refused` stacks (stack -> why) are recorded as refused and not applied. With `leases`
    (several reconcilers) every record carries the epoch of the lease each stack is applied under,
    and each write first checks the leases are still held: a stale holder writes nothing (its
    intent stays open; its next pass records it interrupted and the stack is planned again).
    `review` ("reviewed" | "unreviewed": whether a merge request's plan of the applied tree was
    recorded, `reconciler.reviewed`) goes into the intent; None: not a merge (a repair, a CLI apply).
    Raises `AuditWriteError` (nothing applied) when the intent cannot be recorded, and
    `StaleEpochError` (nothing applied) when a lease is lost before it."""
    refused = refused or {}
    if not plans:
        return AuditedApply([], None, None)
    trail = AuditTrail.of(plans, reason=reason, drift=drift)
    intent_id = uuid.uuid4().hex
    records: list[dict[str, Any]] = []
    if audit is not None:
        intent = intent_payload(plans, intent_id=intent_id, source_author=source_author, reason=reason, refused=refused,
                                review=review)
        if leases is not None:
            leases.check()
            intent["epochs"] = {p.stack: leases.epochs[p.stack] for p in plans if p.stack in leases.epochs}
            intent["holder"] = leases.holder
        records += audit.write([intent], subject=f"intent: {len(plans)} stack(s)")
        failpoints.reached("after-intent")
    for stack, why in refused.items():
        result = ApplyResult(stack=StackName(stack), refusal=why)
        trail.finished(result)
        if on_done:
            on_done(result)
    finished_any = threading.Event()

    def started(stack: StackName) -> None:
        if finished_any.is_set():
            failpoints.reached("mid-apply")  # a stack applied, the next starting: live state half changed
        trail.started(stack)

    def finished(result: ApplyResult) -> None:
        finished_any.set()
        trail.finished(result)
        if on_done:
            on_done(result)

    sha = error = None
    try:
        engine.apply_many([p for p in plans if p.stack not in refused], on_start=started, on_done=finished, stop=stop)
    finally:
        if audit is not None:
            failpoints.reached("after-apply")
            try:
                outcomes = [outcome_payload(e, intent_id=intent_id, source_author=source_author)
                            for e in trail.recorded()]
                if leases is not None:
                    leases.check()
                    outcomes = [{**o, "epoch": leases.epochs.get(str(o["stack"])), "holder": leases.holder}
                                for o in outcomes]
                written = audit.write(outcomes, subject=_subject(trail))
                records += written
                sha = audit.store.tip()
            except (AuditWriteError, AuditConflictError, StaleEpochError) as exc:
                error = f"applied, but the outcome could not be recorded: {exc}"
    return AuditedApply([e.result for e in trail.recorded()], sha, error, records)


def _subject(trail: AuditTrail) -> str:
    entries = trail.recorded()
    failed = sum(1 for e in entries if not e.result.ok)
    return f"outcome: {len(entries)} stack(s){f', {failed} not applied cleanly' if failed else ''}"


def resolve_interrupted(audit: AuditLog, *,
                        keep: Callable[[list[StackName]], None] | None = None) -> list[StackName]:
    """When this writer's last record is an intent (the process died before its outcome), record
    its stacks as `interrupted`; the stacks, which the caller must plan again. `keep` is called
    with them first, so that a crash right after the records still leaves them to be planned."""
    intent = audit.open_intent()
    if intent is None:
        return []
    payloads = interrupted_payloads(intent)
    stacks = [StackName(str(p["stack"])) for p in payloads]
    if keep is not None:
        keep(stacks)
    if payloads:
        audit.write(payloads, subject=f"interrupted: {len(payloads)} stack(s)")
    return stacks
