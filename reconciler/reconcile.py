"""The reconciler: bring live state to the tree at the head of the governance branch.

One pass: record as `interrupted` an apply a killed process left between its intent and its
outcome; take the branch's head commit; read its tree straight from Git (never the working copy,
which may hold someone's unfinished edit); refuse it when it fails validation (a `rejected`
record; also for CLU003 against the commit applied last); create, adopt or scale the clusters
the tree declares (`reconciler.clusters`: before the stacks, which bind to the live clusters'
ARNs); plan only the stacks whose inputs changed since the last commit applied in full (every
stack on the first pass, plus destroys for stacks whose source left the tree, plus the stacks an
interrupted apply left); apply in dependency order between an `intent` and the `outcome` records
(`reconciler.write_ahead`); remember the head as applied only when every stack succeeded, so a
failed pass is retried from the same base next time (decommissions run after the stacks); push
the audit branch. One reconciler at a
time per state directory. A head that does not contain the commit applied last (a force-push, a
reset) is refused ("rewritten", a `refused` record) unless the caller allows it: what was applied
is no longer in the branch's history.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

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
from engines.leases import Held
from engines.objects import RecordStore
from engines.outcomes import Failure, TemporaryError, classify
from engines.plan import ApplyResult, StackName, split_outcomes
from engines.schedule import STOPPING
from hypergov.gitsource import RefNotFoundError, read_tree_at, tree_id_at
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem
from hypergov.rules.clusters import removed_managed_clusters
from hypergov.validate import validate_files
from reconciler.applied_record import _keep_replan, _remember, applied_commit, local_records, replan_stacks
from reconciler.audit import AuditLog, commit_author, refused_payload, rejected_payload
from reconciler.clusters import ClustersApplied, apply_clusters_audited, held_back, phases
from reconciler.lock_holder import clear_holder, write_holder
from reconciler.pass_result import PassResult, PassStatus, Scope
from reconciler.remote import is_ancestor, rewrite_refusal
from reconciler.replicas import Replica, break_dead_locks
from reconciler.reviewed import record_name, review_verdict, reviewed_plan
from reconciler.shared_pass import EngineFactory, SharedPass, follow
from reconciler.write_ahead import apply_audited, resolve_interrupted
from stacks.affected import affected_stacks
from stacks.spec import plan_stacks

LOCK_FILE = "reconciler.lock"



class ReconcilerBusyError(TemporaryError):
    """Another reconciler (or `hypergov apply`) holds the lock on this state directory."""

    reason = "busy"
    retry_after_s = 10.0


def reconcile_scope(base: GovernanceTree | None, head: GovernanceTree, known: Sequence[StackName]) -> Scope:
    """Pure: the stacks a pass must plan. Without a base (first pass) every stack of the head,
    and a destroy for every stack that has state but no source any more."""
    if base is None:
        wanted = [s.name for s in plan_stacks(head)]
        return Scope(plan=tuple(wanted), destroy=tuple(sorted(s for s in known if s not in wanted)))
    affected = affected_stacks(base, head)
    return Scope(plan=affected.to_plan, destroy=affected.removed)


@contextmanager
def exclusive(state_dir: Path) -> Iterator[None]:
    """The state directory's flock; its holder is recorded beside it for `hypergov status`."""
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / LOCK_FILE, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise ReconcilerBusyError(f"another reconciler or hypergov apply is running on {state_dir}; try again "
                                      "when it is done") from exc
        write_holder(state_dir / LOCK_FILE)
        try:
            yield
        finally:
            clear_holder(state_dir / LOCK_FILE)
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class PassOptions:
    """How a pass gets and judges its head, beyond the local repository's branch."""

    fetch: Callable[[], object] | None = None  # called under the lock first: a remote's fetch into `repo_path`
    allow_rewrite: bool = False  # apply a head that does not contain the commit applied last
    clusters: Callable[[GovernanceTree], ClusterExecutor] | None = None  # the declared clusters' (None: untouched)
    records: RecordStore | None = None  # the applied-commit record's home (None: the state directory)
    replica: Replica | None = None  # several reconcilers share the pass through leases (None: alone)
    require_reviewed: bool = False  # refuse a tree no merge request's plan was recorded for (`reconciler.reviewed`)


def reconcile_once(repo_path: Path, branch: str, subdir: str, state_dir: Path, engine_for: EngineFactory,
                   *, audit: AuditLog | None = None, on_apply: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None, options: PassOptions | None = None) -> PassResult:
    """One pass. Raises only for what ends the pass before any stack is touched (busy, the branch
    or the reconciler's record unreadable, Git errors, a remote that cannot be fetched, an engine
    that cannot be built, the intent record refused). With `audit`, first resolves an intent a
    killed process left without an outcome, and last pushes the audit branch (a failed push is
    reported, the records stay local). `options.fetch` runs first, under the lock."""
    options = options or PassOptions()
    with exclusive(state_dir):
        if options.fetch is not None:
            options.fetch()
        records = options.records or local_records(state_dir)
        interrupted = resolve_interrupted(audit, keep=lambda s: _keep_replan(records, branch, s)) if audit else []
        if options.replica is None:
            result = _pass(repo_path, branch, subdir, state_dir, engine_for, on_apply, stop, audit, options)
        else:
            result = _shared_pass(repo_path, branch, subdir, state_dir, engine_for, on_apply, stop, audit, options,
                                  replica=options.replica)
        result.interrupted = tuple(interrupted)
        if audit is not None:
            if result.records:
                failpoints.reached("before-push")
            result.push = audit.push()
            result.unpushed = audit.unpushed()
        return result


def _shared_pass(repo_path: Path, branch: str, subdir: str, state_dir: Path, engine_for: EngineFactory,
                 on_apply: Callable[[ApplyResult], None] | None, stop: threading.Event | None,
                 audit: AuditLog | None, options: PassOptions, *, replica: Replica) -> PassResult:
    """With other replicas (`reconciler.replicas`): the leader's pass, else this replica's share
    of the running pass's project stacks."""
    leader = replica.lead()
    if leader is None:
        return follow(repo_path, subdir, engine_for, replica=replica, branch=branch, audit=audit, on_apply=on_apply,
                       stop=stop, clusters=options.clusters)
    return _pass(repo_path, branch, subdir, state_dir, engine_for, on_apply, stop, audit, options, leader)


def _pass(repo_path: Path, branch: str, subdir: str, state_dir: Path, engine_for: EngineFactory,
          on_apply: Callable[[ApplyResult], None] | None, stop: threading.Event | None,
          audit: AuditLog | None, options: PassOptions, leader: Held | None = None) -> PassResult:
    repo = git.Repo(repo_path)
    try:
        head = str(repo.commit(branch).hexsha)
    except (git.BadName, ValueError) as exc:
        raise RefNotFoundError(f"no branch '{branch}' in {repo_path}") from exc
    records = options.records or local_records(state_dir)
    base = applied_commit(records, branch)
    replan = replan_stacks(records, branch)
    if base == head and not replan:
        return PassResult(head=head, base=base, status="up to date")
    if base and not options.allow_rewrite and not is_ancestor(repo_path, base, head):
        result = PassResult(head=head, base=base, status="rewritten",
                            refusal=rewrite_refusal(branch=branch, applied=base, head=head))
        result.records = _record_refused(audit, repo_path, branch, head, base, result.refusal or "")
        return result
    head_tree = tree_id_at(repo_path, head, subdir)
    if base and not replan and head_tree is not None and head_tree == tree_id_at(repo_path, base, subdir):
        _remember(records, branch, head, epoch=leader.epoch if leader else None)  # e.g. only files outside the tree
        return PassResult(head=head, base=base, status="up to date")
    report = validate_files(read_tree_at(repo_path, head, subdir), display_root=subdir)
    base_tree = _valid_tree_at(repo_path, base, subdir)
    # CLU003 against the last applied commit: a managed cluster's file gone before its decommission
    removals = list(removed_managed_clusters(base_tree, report.tree)) if base_tree is not None else []
    if not report.ok or removals:  # never apply a tree that fails validation
        problems = (*report.problems, *removals)
        result = PassResult(head=head, base=base, status="invalid", problems=problems)
        result.records = _record_rejected(audit, repo_path, branch, head, problems)
        return result
    author = commit_author(repo_path, head)
    clusters = _Clusters.start(options, report.tree, audit=audit, head=head, author=author, on_apply=on_apply)
    if clusters.ended is not None:  # a cluster change refused or failed: no stack goes past it
        return clusters.passed(PassResult(head=head, base=base, status=clusters.ended))
    engine = engine_for(clusters.tree, head)
    scope = with_replan(reconcile_scope(base_tree, report.tree, engine.known_stacks()),
                        replan, head=report.tree, known=engine.known_stacks())
    shared = SharedPass.of(options.replica, leader, scope, report.tree)
    if shared is not None:
        scope = shared.scope
        if leader is not None and leader.taken_from:  # the last leader died: its terraform locks are dead too
            break_dead_locks(engine, [(s, leader) for s in (*scope.plan, *scope.destroy)])
            leader.taken_from = None  # once: from now on this leader's own terraform runs hold them
    plans, failures = split_outcomes(engine.plan_many(list(scope.plan), destroy=scope.destroy))
    if failures:  # apply nothing of a pass that could not be planned whole
        return clusters.passed(PassResult(head=head, base=base, status="plan failed", plans=plans, failures=failures))
    if stop is not None and stop.is_set():
        return clusters.passed(PassResult(head=head, base=base, status="stopped", plans=plans))
    review = review_verdict(reviewed_plan(records, head_tree), plans, require_reviewed=options.require_reviewed,
                            where=records.where(record_name(head_tree)) if head_tree else None)
    refused: dict[str, str] = {str(s): why for s, why in review.refused.items()}
    applied = apply_audited(engine, [p for p in plans if not p.is_empty or p.stack in refused], audit,
                            on_done=on_apply, stop=stop, refused=refused, source_author=author,
                            leases=shared.stamp(plans) if shared else None, review=review.state)
    result = PassResult(head=head, base=base, status="applied", plans=plans, results=applied.results,
                        audit_error=applied.audit_error, audit_commit=applied.audit_commit, records=applied.records,
                        review=review.state if any(not p.is_empty for p in plans) else None)
    if shared is not None and not result.errors and not any(r.refusal == STOPPING for r in applied.results):
        shared.run(result, branch=branch, engine=engine, audit=audit, stop=stop, on_apply=on_apply, author=author)
    if not result.errors and not any(r.refusal == STOPPING for r in applied.results):
        clusters.finish(audit=audit, head=head, author=author, on_apply=on_apply)  # decommissions, after the stacks
    result = clusters.passed(result)
    if any(r.refusal == STOPPING for r in applied.results):
        result.status = "stopped"  # not remembered: the next pass plans what was left
    elif result.errors:
        result.status = "apply failed"
    else:
        if leader is not None:
            leader.check()
        _remember(records, branch, head, epoch=leader.epoch if leader else None)
    if shared is not None:
        shared.conclude(branch, ok=result.status == "applied")
    return result


@dataclass
class _Clusters:
    """The pass's declared clusters (`reconciler.clusters`): planned and the first phase applied
    before the stacks are planned (their quotas bind to the live cluster's ARN), decommissions
    after the stacks applied. Without `PassOptions.clusters` or a declared cluster: nothing."""

    tree: GovernanceTree  # the head's tree with each managed cluster's live ARN
    executor: ClusterExecutor | None = None
    last: tuple[PlannedCluster, ...] = ()
    done: list[ClustersApplied] = field(default_factory=list)
    held: ApplyResult | None = None  # a refusal (or a busy cluster) that stops the pass before anything
    failure: Failure | None = None  # the clusters could not be planned
    ended: PassStatus | None = None  # the pass ends here, with this status

    @classmethod
    def start(cls, options: PassOptions, tree: GovernanceTree, *, audit: AuditLog | None, head: str,
              author: str | None, on_apply: Callable[[ApplyResult], None] | None) -> _Clusters:
        declared = declared_clusters(tree)
        if options.clusters is None or not declared:
            return cls(tree)
        executor = options.clusters(tree)
        try:
            planned = executor.plan(declared)
        except Exception as exc:  # the pass's boundary: classified, reported as the clusters' plan failure
            return cls(tree, executor, failure=classify(exc), ended="plan failed")
        held = held_back(planned)
        if held is not None:
            return cls(tree, executor, held=held, done=[ClustersApplied(cluster_plan(planned, source_commit=head),
                                                                        held)], ended="apply failed")
        steps = phases(planned)
        first = apply_clusters_audited(executor, steps.first, audit=audit, source_commit=head, source_author=author)
        run = cls(with_cluster_arns(tree, live_arns(planned, first.applied)), executor, steps.last, [first])
        if on_apply is not None and not first.plan.is_empty:
            on_apply(first.result)
        if not first.result.ok or first.audit_error:
            run.ended = "apply failed"
        return run

    def finish(self, *, audit: AuditLog | None, head: str, author: str | None,
               on_apply: Callable[[ApplyResult], None] | None) -> None:
        if self.executor is None or not self.last:
            return
        last = apply_clusters_audited(self.executor, self.last, audit=audit, source_commit=head, source_author=author)
        self.done.append(last)
        if on_apply is not None:
            on_apply(last.result)

    def passed(self, result: PassResult) -> PassResult:
        """`result` with the clusters' plans, results and records (in the order they happened)."""
        shown = [d for d in self.done if not d.plan.is_empty or d.result is self.held]
        if self.failure is not None:
            result.failures = {CLUSTERS_STACK: self.failure, **result.failures}
        first, later = shown[:1], shown[1:]
        result.plans = [*(d.plan for d in first), *result.plans, *(d.plan for d in later)]
        result.results = [*(d.result for d in first), *result.results, *(d.result for d in later)]
        result.records = [*(r for d in first for r in d.records), *result.records,
                          *(r for d in later for r in d.records)]
        errors = [d.audit_error for d in shown if d.audit_error]
        if errors and result.audit_error is None:
            result.audit_error = errors[0]
        return result


def with_replan(scope: Scope, replan: Sequence[StackName], *, head: GovernanceTree,
                known: Sequence[StackName]) -> Scope:
    """Pure: the scope plus the stacks an interrupted apply may have half changed (planned again
    whatever the commits since say: a revert would otherwise leave them as the dead process left
    them); one that left the tree is destroyed, if it has state."""
    in_tree = {s.name for s in plan_stacks(head)}
    plan = [*scope.plan, *(s for s in replan if s in in_tree and s not in scope.plan)]
    destroy = [*scope.destroy, *(s for s in replan if s not in in_tree and s in known and s not in scope.destroy)]
    order = [s.name for s in plan_stacks(head)]  # dependency order, as reconcile_scope gives it
    return Scope(plan=tuple(sorted(plan, key=order.index)), destroy=tuple(destroy))


def _record_rejected(audit: AuditLog | None, repo_path: Path, branch: str, head: str,
                     problems: Sequence[Problem]) -> list[dict[str, Any]]:
    """A `rejected` record for an invalid head, once per head (a one-shot reconcile run again on
    the same head, or a restarted daemon, does not repeat it)."""
    return _record_once(audit, "rejected", head, lambda: rejected_payload(
        branch=branch, head=head, source_author=commit_author(repo_path, head), problems=problems))


def _record_refused(audit: AuditLog | None, repo_path: Path, branch: str, head: str, applied: str,
                    why: str) -> list[dict[str, Any]]:
    """A `refused` record for a rewritten head, once per head (as `_record_rejected`)."""
    return _record_once(audit, "refused", head, lambda: refused_payload(
        branch=branch, head=head, source_author=commit_author(repo_path, head), reason=why, applied_commit=applied))


def _record_once(audit: AuditLog | None, kind: str, head: str,
                 payload: Callable[[], dict[str, Any]]) -> list[dict[str, Any]]:
    """Write the `kind` record of `head` unless this writer's last record is already that one."""
    if audit is None:
        return []
    last = audit.last_own()
    if last is not None and (last.get("type"), last.get("source_commit")) == (kind, head):
        return []
    return audit.write([payload()], subject=f"{kind} {head[:12]}")


def _valid_tree_at(repo_path: Path, commit: str | None, subdir: str) -> GovernanceTree | None:
    """The tree last applied; None (plan everything) when there is none or today's rules refuse it."""
    if commit is None:
        return None
    try:
        report = validate_files(read_tree_at(repo_path, commit, subdir))
    except RefNotFoundError:  # history rewritten, or the tree moved: compare with nothing
        return None
    return report.tree if report.ok else None
