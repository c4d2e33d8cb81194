"""What a reconciler pass plans (`Scope`) and what it did (`PassResult`): the values the pass,
the daemon, the metrics and the replicas' shared pass exchange."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from engines.outcomes import Failure, FailureKind, Refusal
from engines.plan import ApplyResult, Plan, StackName, failure_lines
from hypergov.problems import Problem
from reconciler.audit_store import PushOutcome

PassStatus = Literal["up to date", "applied", "invalid", "rewritten", "plan failed", "apply failed", "stopped"]


@dataclass(frozen=True)
class Scope:
    """What a pass plans: stacks to plan against the head tree, and stacks to destroy."""

    plan: tuple[StackName, ...]
    destroy: tuple[StackName, ...]


@dataclass
class PassResult:
    head: str
    base: str | None
    status: PassStatus
    problems: tuple[Problem, ...] = ()
    plans: list[Plan] = field(default_factory=list)
    results: list[ApplyResult] = field(default_factory=list)
    failures: dict[StackName, Failure] = field(default_factory=dict)  # stacks that failed to plan
    audit_error: str | None = None
    audit_commit: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)  # audit records this pass wrote
    interrupted: tuple[StackName, ...] = ()  # stacks a killed process left between intent and outcome
    push: PushOutcome | None = None  # the audit branch's push at the end of the pass
    unpushed: int = 0  # audit records still waiting to be pushed
    refusal: Refusal | None = None  # why the whole pass was refused (its history rewritten)
    review: str | None = None  # "reviewed" | "unreviewed": a merge request's plan of the tree applied was recorded

    @property
    def ok(self) -> bool:
        return self.status in ("up to date", "applied")

    @property
    def errors(self) -> list[str]:
        """One line per failed stack (and the outcome records), for people."""
        lines = failure_lines(self.failures)
        lines += [f"{r.stack}: {r.failure}" for r in self.results
                  if not r.ok and (r.refusal is None or r.refusal.kind != "stopping")]
        return lines + ([self.audit_error] if self.audit_error else [])

    @property
    def failure_kind(self) -> FailureKind | None:
        """None when the pass succeeded; temporary when trying the same head again may succeed
        (every failure of the pass is temporary); permanent when it needs a new commit or a person."""
        if self.ok or self.status == "stopped":
            return None
        if self.status in ("invalid", "rewritten") or self.audit_error:
            return "permanent"
        found = [*self.failures.values(), *(f for r in self.results for f in r.failures)]
        refused = [r for r in self.results if r.refusal and r.refusal.kind not in ("stopping", "dependency failed")]
        return "temporary" if found and not refused and all(f.temporary for f in found) else "permanent"




def concluded(result: PassResult) -> PassStatus:
    """Pure: what a pass that went as far as applying ended as. Stopped (not remembered: the next
    pass plans what was left), a stack that failed to plan (in a shared pass, in any replica: then
    nothing was applied), a stack not applied cleanly, or applied."""
    if result.status == "stopped" or any(r.refusal is not None and r.refusal.kind == "stopping"
                                         for r in result.results):
        return "stopped"
    if result.failures:
        return "plan failed"
    return "apply failed" if result.errors else "applied"
