"""Applying the clusters a tree declares, with the audit trail every apply leaves: the intent
(what is about to happen, before anything does), then the outcome (what happened). A
decommission deletes a cluster for good, so it is never done without both records."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from engines.hyperpod.cluster_executor import ClusterExecutor, PlannedCluster, apply_result, cluster_plan
from engines.plan import ApplyResult, Plan
from reconciler.audit import AuditEntry, AuditLog, intent_payload, outcome_payload


def apply_clusters(executor: ClusterExecutor, planned: Sequence[PlannedCluster], *, audit: AuditLog,
                   source_commit: str | None = None, source_author: str | None = None) -> tuple[Plan, ApplyResult]:
    """Record the intent, apply every planned cluster change, record the outcome."""
    plan = cluster_plan(planned, source_commit=source_commit)
    if plan.is_empty:
        return plan, ApplyResult(stack=plan.stack)
    intent = uuid.uuid4().hex
    audit.write([intent_payload([plan], intent_id=intent, source_author=source_author, reason=None, refused={})],
                subject=f"intent: {plan.stack}")
    started = datetime.now(UTC)
    result = apply_result(plan, executor.apply(planned))
    entry = AuditEntry(plan=plan, result=result, started=started, finished=datetime.now(UTC))
    audit.write([outcome_payload(entry, intent_id=intent, source_author=source_author)],
                subject=f"outcome: {plan.stack}")
    return plan, result


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
