"""One rollout: how every path that changes live state applies a tree.

The reconciler's pass, each replica's share of a shared pass (`reconciler.replicas`), `hypergov
apply`, `hypergov drift --remediate` and the daemon's scheduled repair all go through the same
steps, in this module only:

1. `ClusterRollout.plan`: the declared clusters' decisions (create, adopt, scale, decommission,
   or a refusal no stack may go past), then `first_phase`: the creates, adoptions and scalings,
   audited; what it returns is the tree with each managed cluster's live ARN (the stacks bind to it).
2. `prepare`: every stack of the scope planned (or its failure), and the refusals decided before
   anything is applied: a stack whose plan differs from the reviewed one, or every stack of a tree
   nobody reviewed when `require_reviewed` (`reconciler.reviewed`). A value; nothing is applied.
3. `carry_out`: nothing unless every stack planned; the audited apply (`reconciler.write_ahead`:
   an intent before, outcomes after, the lease epochs of a shared pass on each record); then
   `publish`, the one place the audit branch is pushed.
4. `ClusterRollout.last_phase`: the decommissions, once the stacks deleted their configs and quotas.

Callers decide what to plan (the pass: the stacks changed since the last applied commit; a replica:
the stacks it claimed; `apply`: all or `--stack`; a repair: the drifted stacks), show, ask and
render; none of them owns a pipeline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engines import failpoints
from engines.hyperpod.cluster_executor import (
    CLUSTERS_STACK,
    ClusterExecutor,
    PlannedCluster,
    cluster_plan,
    declared_clusters,
    live_arns,
    with_cluster_arns,
)
from engines.objects import RecordStore
from engines.outcomes import Failure, Refusal, classify
from engines.plan import ApplyResult, Plan, PlanOutcome, StackName, split_outcomes
from engines.protocol import Engine, Progress
from hypergov.model.tree import GovernanceTree
from reconciler.audit import AuditLog
from reconciler.audit_store import PushOutcome
from reconciler.clusters import ClustersApplied, apply_clusters_audited, held_back, phases
from reconciler.pass_result import Scope
from reconciler.reviewed import ReviewVerdict, record_name, review_verdict, reviewed_plan
from reconciler.write_ahead import AuditedApply, LeaseStamp, apply_audited

OnApply = Callable[[ApplyResult], None]


@dataclass(frozen=True)
class Source:
    """What is rolled out: the tree, the commit it was read from and its author (on every audit
    record), and the config tree's Git id (its review is looked up by it; None: no review applies,
    e.g. a repair restoring what was applied)."""

    tree: GovernanceTree
    commit: str | None = None
    author: str | None = None
    tree_id: str | None = None


@dataclass(frozen=True)
class ReviewGate:
    """Where merge-request reviews are kept (the shared record store) and whether a tree nobody
    reviewed is refused (`require_reviewed`) or applied and recorded as unreviewed."""

    records: RecordStore
    require_reviewed: bool = False

    def judge(self, tree_id: str | None, plans: Sequence[Plan]) -> ReviewVerdict:
        where = self.records.where(record_name(tree_id)) if tree_id else None
        return review_verdict(reviewed_plan(self.records, tree_id), plans, require_reviewed=self.require_reviewed,
                              where=where)


@dataclass
class Prepared:
    """What a rollout would apply, decided before anything is applied."""

    source: Source
    plans: list[Plan] = field(default_factory=list)
    failures: dict[StackName, Failure] = field(default_factory=dict)  # stacks that could not be planned
    refused: dict[StackName, Refusal] = field(default_factory=dict)  # decided before the apply (the review)
    review: str | None = None  # "reviewed" / "unreviewed"; None: no review gate on this path

    @property
    def ready(self) -> bool:
        """Every stack planned: only then is anything applied."""
        return not self.failures

    @property
    def pending(self) -> list[Plan]:
        """The plans the apply goes through: those with changes, and every refused one (recorded)."""
        return [p for p in self.plans if not p.is_empty or p.stack in self.refused]


def prepare(engine: Engine, scope: Scope, source: Source, *, gate: ReviewGate | None = None,
            progress: Progress[PlanOutcome] | None = None) -> Prepared:
    """Plan every stack of `scope` (and the destroys), then judge the plans against the review."""
    outcomes = (engine.plan_many(list(scope.plan), destroy=scope.destroy, progress=progress) if progress else
                engine.plan_many(list(scope.plan), destroy=scope.destroy))
    plans, failures = split_outcomes(outcomes)
    prepared = Prepared(source, plans, failures)
    if gate is not None and not failures:
        verdict = gate.judge(source.tree_id, plans)
        prepared.review = verdict.state
        prepared.refused = dict(verdict.refused)
    return prepared


@dataclass(frozen=True)
class Carrying:
    """How `carry_out` runs: who hears each stack's result, what stops it, why (a repair), under
    which leases (a shared pass)."""

    audit: AuditLog | None = None
    on_apply: OnApply | None = None
    stop: threading.Event | None = None
    reason: str | None = None  # None: a merge; "repair" for drift repairs
    drift: Mapping[str, tuple[str, ...]] | None = None  # per stack, the drift items a repair restores
    leases: LeaseStamp | None = None


def carry_out(engine: Engine, prepared: Prepared, how: Carrying) -> AuditedApply:
    """Apply what `prepare` decided, audited, and push the records. Applies nothing when a stack
    failed to plan (the caller reports `prepared.failures`)."""
    if not prepared.ready:
        return AuditedApply([], None, None)
    applied = apply_audited(engine, prepared.pending, how.audit, on_done=how.on_apply, stop=how.stop,
                            reason=how.reason, drift=how.drift, refused=prepared.refused,
                            source_author=prepared.source.author, leases=how.leases, review=prepared.review)
    if applied.records:
        applied = replace(applied, push=publish(how.audit))
    return applied


def publish(audit: AuditLog | None) -> PushOutcome | None:
    """The one place the audit branch is pushed: after every audited apply (a replica that dies
    next must not take its records with it) and at the end of a pass (its rejected or refused
    record, and what an earlier failed push left). A failed push is reported; the records stay
    local and go with the next push."""
    if audit is None:
        return None
    failpoints.reached("before-push")
    return audit.push()


def stopped(results: Sequence[ApplyResult]) -> bool:
    """A stack was not started because the reconciler is stopping."""
    return any(r.refusal is not None and r.refusal.kind == "stopping" for r in results)


@dataclass
class ClusterRollout:
    """The declared clusters around the stacks (`reconciler.clusters`): planned and the first
    phase applied before the stacks are planned (their quotas bind to the live cluster's ARN),
    the decommissions after the stacks applied. Without an executor or a declared cluster: nothing."""

    source: Source
    tree: GovernanceTree  # the source's tree with each managed cluster's live ARN
    executor: ClusterExecutor | None = None
    planned: tuple[PlannedCluster, ...] = ()
    done: list[ClustersApplied] = field(default_factory=list)
    held: ApplyResult | None = None  # a refusal (or a busy cluster) that stops the rollout before anything
    failure: Failure | None = None  # the clusters could not be planned
    arns: dict[str, str] = field(default_factory=dict)  # cluster file -> its live cluster's ARN

    @classmethod
    def plan(cls, executor: Callable[[GovernanceTree], ClusterExecutor] | None, source: Source) -> ClusterRollout:
        declared = declared_clusters(source.tree)
        if executor is None or not declared:
            return cls(source, source.tree)
        clusters = executor(source.tree)
        try:
            planned = tuple(clusters.plan(declared))
        except Exception as exc:  # the rollout's boundary: classified, reported as the clusters' plan failure
            return cls(source, source.tree, clusters, failure=classify(exc))
        held, arns = held_back(planned), live_arns(planned)
        run = cls(source, with_cluster_arns(source.tree, arns), clusters, planned, held=held, arns=arns)
        if held is not None:
            run.done.append(ClustersApplied(cluster_plan(planned, source_commit=source.commit), held))
        return run

    @property
    def first(self) -> Plan:
        """The creates, adoptions and scalings, as one plan (to show before they are applied)."""
        return cluster_plan(phases(self.planned).first, source_commit=self.source.commit)

    @property
    def last(self) -> Plan | None:
        """The decommissions (None: none)."""
        last = phases(self.planned).last
        return cluster_plan(last, source_commit=self.source.commit) if last else None

    @property
    def blocked(self) -> bool:
        """No stack may be planned: the clusters could not be planned, one refused a change, or
        the first phase failed."""
        return self.failure is not None or self.held is not None or any(
            not d.result.ok or d.audit_error for d in self.done)

    def first_phase(self, audit: AuditLog | None, on_apply: OnApply | None = None) -> GovernanceTree:
        """Apply the first phase, audited; the tree with the live ARNs it left."""
        if self.executor is None or self.blocked:
            return self.tree
        first = apply_clusters_audited(self.executor, phases(self.planned).first, audit=audit,
                                       source_commit=self.source.commit, source_author=self.source.author)
        if first.records:
            first = replace(first, push=publish(audit))
        self.done.append(first)
        self.arns = live_arns(self.planned, first.applied)
        self.tree = with_cluster_arns(self.source.tree, self.arns)
        if on_apply is not None and not first.plan.is_empty:
            on_apply(first.result)
        return self.tree

    def last_phase(self, audit: AuditLog | None, on_apply: OnApply | None = None) -> ClustersApplied | None:
        """The decommissions, audited (the caller runs them only once every stack applied)."""
        steps = phases(self.planned).last
        if self.executor is None or not steps:
            return None
        last = apply_clusters_audited(self.executor, steps, audit=audit, source_commit=self.source.commit,
                                      source_author=self.source.author)
        if last.records:
            last = replace(last, push=publish(audit))
        self.done.append(last)
        if on_apply is not None:
            on_apply(last.result)
        return last

    def merged(self, plans: list[Plan], results: list[ApplyResult], records: list[dict[str, Any]],
               failures: dict[StackName, Failure]) -> str | None:
        """Put the clusters' plans, results, records and plan failure in place, in the order they
        happened (first phase, the stacks, the decommissions); the first audit error, if any."""
        shown = [d for d in self.done if not d.plan.is_empty or d.result is self.held]
        if self.failure is not None:
            ordered = {CLUSTERS_STACK: self.failure, **failures}
            failures.clear()
            failures.update(ordered)
        first, later = shown[:1], shown[1:]
        plans[:] = [*(d.plan for d in first), *plans, *(d.plan for d in later)]
        results[:] = [*(d.result for d in first), *results, *(d.result for d in later)]
        records[:] = [*(r for d in first for r in d.records), *records, *(r for d in later for r in d.records)]
        errors = [d.audit_error for d in shown if d.audit_error]
        return errors[0] if errors else None
