"""Applying the clusters a tree declares, with the audit trail every apply leaves: the intent
(what is about to happen, before anything does), then the outcome (what happened). A
decommission deletes a cluster for good, so it is never done without both records.

Around the stacks, AWS fixes the order (`phases`): a cluster is created, adopted or scaled
before its stack's scheduler config and compute quotas are applied (they bind to the live
cluster and its capacity), and decommissioned only after its stack deleted them (DeleteCluster
refuses a cluster that still has either). `hypergov apply` and the reconciler's pass both run
the first phase, then the stacks, then the last.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engines.hyperpod.cluster_driver import BUSY
from engines.hyperpod.cluster_executor import Applied, ClusterExecutor, PlannedCluster, apply_result, cluster_plan
from engines.outcomes import Refusal, temporary
from engines.plan import ApplyResult, Plan
from reconciler.audit import AuditEntry, AuditLog, intent_payload, outcome_payload
from reconciler.audit_store import AuditConflictError, AuditWriteError, PushOutcome


@dataclass(frozen=True)
class ClusterPhases:
    """A run's cluster decisions in the order AWS needs them around the stacks."""

    first: tuple[PlannedCluster, ...]  # create, adopt, scale (and refusals): before the stacks
    last: tuple[PlannedCluster, ...]  # decommission: after the cluster stacks deleted config and quotas


def phases(planned: Sequence[PlannedCluster]) -> ClusterPhases:
    """Pure: which decisions go before the stacks and which after."""
    return ClusterPhases(first=tuple(p for p in planned if p.plan.action != "decommission"),
                         last=tuple(p for p in planned if p.plan.action == "decommission"))


def held_back(planned: Sequence[PlannedCluster]) -> ApplyResult | None:
    """Pure: a cluster decision the apply must not go past, as the clusters' result (None: none).
    A cluster that is busy (Creating, Updating...) is a temporary failure (a later pass finds it
    InService); any other refusal (not adopted, a changed instance type) needs a new commit."""
    plan = cluster_plan(planned)
    refused = [p for p in planned if p.plan.refusal is not None]
    if not refused:
        return None
    why = "; ".join(f"{p.plan.name}: {p.plan.refusal}" for p in refused)
    if all(p.plan.live_status in BUSY for p in refused):
        return ApplyResult(stack=plan.stack, error=temporary(why, "cluster-busy"))
    return ApplyResult(stack=plan.stack, refusal=Refusal("cluster not as declared", why))


@dataclass(frozen=True)
class ClustersApplied:
    """One audited apply of cluster decisions."""

    plan: Plan
    result: ApplyResult
    applied: list[Applied] = field(default_factory=list)  # per cluster: the live cluster afterwards, or the failure
    records: list[dict[str, Any]] = field(default_factory=list)  # intent and outcome, as written
    audit_error: str | None = None  # applied, but the outcome could not be recorded
    push: PushOutcome | None = None  # the audit branch's push after the records (`reconciler.rollout.publish`)


def apply_clusters_audited(executor: ClusterExecutor, planned: Sequence[PlannedCluster], *, audit: AuditLog | None,
                           source_commit: str | None = None,
                           source_author: str | None = None) -> ClustersApplied:
    """Record the intent, apply every planned cluster change, record the outcome (without
    `audit`, nothing is recorded: --no-audit). An intent that cannot be recorded raises
    `AuditWriteError` and nothing is applied."""
    plan = cluster_plan(planned, source_commit=source_commit)
    if plan.is_empty:
        return ClustersApplied(plan, ApplyResult(stack=plan.stack))
    intent = uuid.uuid4().hex
    records: list[dict[str, Any]] = []
    if audit is not None:
        records += audit.write([intent_payload([plan], intent_id=intent, source_author=source_author, reason=None,
                                               refused={})], subject=f"intent: {plan.stack}")
    started = datetime.now(UTC)
    applied = executor.apply(planned)
    result = apply_result(plan, applied)
    error = None
    if audit is not None:
        entry = AuditEntry(plan=plan, result=result, started=started, finished=datetime.now(UTC))
        try:
            records += audit.write([outcome_payload(entry, intent_id=intent, source_author=source_author)],
                                   subject=f"outcome: {plan.stack}")
        except (AuditWriteError, AuditConflictError) as exc:
            error = f"applied, but the outcome could not be recorded: {exc}"
    return ClustersApplied(plan, result, applied, records, error)


def apply_clusters(executor: ClusterExecutor, planned: Sequence[PlannedCluster], *, audit: AuditLog,
                   source_commit: str | None = None, source_author: str | None = None) -> tuple[Plan, ApplyResult]:
    """Record the intent, apply every planned cluster change, record the outcome."""
    done = apply_clusters_audited(executor, planned, audit=audit, source_commit=source_commit,
                                  source_author=source_author)
    return done.plan, done.result


def clusters_markdown(planned: Sequence[PlannedCluster]) -> str:
    """The merge request's section on the clusters the tree declares: per cluster what happens,
    each changed group's instances before -> after, and the GPU change; refusals say why."""
    lines = ["### HyperPod clusters", ""]
    if not planned:
        return "\n".join([*lines, "The tree declares no cluster."])
    lines += ["| cluster | action | instance group | instances | GPUs |", "|---|---|---|---|---|"]
    for item in planned:
        p = item.plan
        if not p.groups:
            lines.append(f"| `{p.name}` | {p.action} | | | |")
        for g in p.groups:
            lines.append(f"| `{p.name}` | {p.action} | `{g.name}` ({g.instance_type}) | "
                         f"{_count(g.before)} -> {_count(g.after)} | {g.gpu_delta:+d} |")
    lines.append("")
    lines += [f"- `{i.plan.name}`: {i.plan.gpu_delta:+d} GPUs in all" for i in planned if i.plan.groups]
    lines += [f"- `{i.plan.name}` is {i.plan.live_status}" + (f": {i.plan.failure_message}" if i.plan.failure_message
                                                            else "") for i in planned
              if i.plan.live_status not in (None, "InService")]
    lines += [f"- `{i.plan.name}` not changed: {i.plan.refusal}" for i in planned if i.plan.refusal]
    return "\n".join(lines)


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)
