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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import git

from engines.hyperpod.cluster_executor import ClusterExecutor
from engines.leases import Held
from engines.objects import RecordStore
from engines.outcomes import Refusal, TemporaryError
from engines.plan import ApplyResult, StackName
from engines.protocol import Engine
from hypergov.gitsource import RefNotFoundError, read_tree_at, tree_id_at
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem
from hypergov.rules.clusters import removed_managed_clusters
from hypergov.validate import validate_files
from reconciler.applied_record import _keep_replan, _remember, applied_commit, local_records, replan_stacks
from reconciler.audit import AuditLog, commit_author, refused_payload, rejected_payload
from reconciler.lock_holder import clear_holder, write_holder
from reconciler.pass_result import PassResult, Scope, concluded
from reconciler.remote import is_ancestor, rewrite_refusal
from reconciler.replicas import Replica, break_dead_locks
from reconciler.rollout import Carrying, ClusterRollout, Prepared, ReviewGate, Source, carry_out, prepare, publish
from reconciler.shared_pass import EngineFactory, SharedPass, follow
from reconciler.write_ahead import resolve_interrupted
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
    records: RecordStore | None = None  # the shared records' home: applied commit, reviews (None: the state directory)
    replica: Replica | None = None  # several reconcilers share the pass through leases (None: alone)
    require_reviewed: bool = False  # refuse a tree no merge request reviewed (else: applied, recorded unreviewed)


@dataclass(frozen=True)
class _Run:
    """One pass's inputs: where the head comes from, where records go, how the rollout is carried out."""

    repo_path: Path
    branch: str
    subdir: str
    state_dir: Path
    engine_for: EngineFactory
    audit: AuditLog | None
    on_apply: Callable[[ApplyResult], None] | None
    stop: threading.Event | None
    options: PassOptions

    @property
    def records(self) -> RecordStore:
        return self.options.records or local_records(self.state_dir)

    @property
    def gate(self) -> ReviewGate:
        return ReviewGate(self.records, require_reviewed=self.options.require_reviewed)

    @property
    def how(self) -> Carrying:
        return Carrying(audit=self.audit, on_apply=self.on_apply, stop=self.stop)


def reconcile_once(repo_path: Path, branch: str, subdir: str, state_dir: Path, engine_for: EngineFactory,
                   *, audit: AuditLog | None = None, on_apply: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None, options: PassOptions | None = None) -> PassResult:
    """One pass. Raises only for what ends the pass before any stack is touched (busy, the branch
    or the reconciler's record unreadable, Git errors, a remote that cannot be fetched, an engine
    that cannot be built, the intent record refused). With `audit`, first resolves an intent a
    killed process left without an outcome, and last pushes the audit branch (a failed push is
    reported, the records stay local). `options.fetch` runs first, under the lock."""
    run = _Run(repo_path, branch, subdir, state_dir, engine_for, audit, on_apply, stop, options or PassOptions())
    pushed_before = audit.pushed_total if audit is not None else 0
    with exclusive(state_dir):
        if run.options.fetch is not None:
            run.options.fetch()
        interrupted = resolve_interrupted(audit, keep=lambda s: _keep_replan(run.records, branch, s)) if audit else []
        leader = run.options.replica.lead() if run.options.replica is not None else None
        if run.options.replica is not None and leader is None:  # another leads: this replica's share of its pass
            result = follow(repo_path, subdir, engine_for, replica=run.options.replica, branch=branch, gate=run.gate,
                            how=run.how)
        else:
            result = _pass(run, leader)
        result.interrupted = tuple(interrupted)
        if audit is not None:  # what an earlier failed push left, and records written since the last push
            last = publish(audit)
            result.push = replace(last, pushed=audit.pushed_total - pushed_before) if last is not None else None
            result.unpushed = audit.unpushed()
        return result


@dataclass(frozen=True)
class _Head:
    """A head that validated and changed since the commit applied last: what the pass rolls out."""

    source: Source
    base: str | None
    base_tree: GovernanceTree | None
    replan: tuple[StackName, ...]


def _pass(run: _Run, leader: Held | None = None) -> PassResult:
    """The head as the rollout (`reconciler.rollout`) applies it: clusters' first phase, every
    stack of the scope planned and judged against its review, applied audited, decommissions."""
    checked = _checked_head(run, leader)
    if isinstance(checked, PassResult):
        return checked
    head, base = str(checked.source.commit), checked.base
    clusters = ClusterRollout.plan(run.options.clusters, checked.source)
    tree = clusters.first_phase(run.audit, run.on_apply)
    if clusters.blocked:  # a cluster change refused or failed: no stack goes past it
        return _with_clusters(clusters, PassResult(head, base, "plan failed" if clusters.failure else "apply failed"))
    engine = run.engine_for(tree, head)
    known = engine.known_stacks()
    scope = with_replan(reconcile_scope(checked.base_tree, checked.source.tree, known), checked.replan,
                        head=checked.source.tree, known=known)
    shared = SharedPass.of(run.options.replica, leader, scope, checked.source.tree)
    if shared is not None:
        scope = shared.scope
        if leader is not None and leader.taken_from:  # the last leader died: its terraform locks are dead too
            break_dead_locks(engine, [(s, leader) for s in (*scope.plan, *scope.destroy)])
            leader.taken_from = None  # once: from now on this leader's own terraform runs hold them
    prepared = prepare(engine, scope, replace(checked.source, tree=tree), gate=run.gate)
    result = PassResult(head, base, "applied", plans=prepared.plans, failures=prepared.failures,
                        review=prepared.review if prepared.pending else None)
    if not prepared.ready:  # apply nothing of a pass that could not be planned whole
        result.status = "plan failed"
    elif run.stop is not None and run.stop.is_set():
        result.status = "stopped"
    else:
        _apply_pass(run, result, engine, prepared, shared=shared, clusters=clusters, leader=leader)
    return _with_clusters(clusters, result)


def _apply_pass(run: _Run, result: PassResult, engine: Engine, prepared: Prepared, *, shared: SharedPass | None,
                clusters: ClusterRollout, leader: Held | None) -> None:
    """Carry out the prepared stacks (with the other replicas' shares when shared), then the
    decommissions; remember the head only when all of it applied."""
    if shared is not None and shared.projects:
        shared.run(result, prepared, branch=run.branch, engine=engine, gate=run.gate, how=run.how, arns=clusters.arns)
    else:
        applied = carry_out(engine, prepared, replace(run.how, leases=shared.stamp(prepared.pending)) if shared
                            else run.how)
        result.results += applied.results
        result.records += applied.records
        result.audit_error, result.audit_commit = applied.audit_error, applied.audit_commit
    result.status = concluded(result)
    if result.status == "applied":
        last = clusters.last_phase(run.audit, run.on_apply)  # decommissions, after the stacks deleted config and quotas
        if last is not None and (not last.result.ok or last.audit_error):
            result.status = "apply failed"
        else:
            if leader is not None:
                leader.check()
            _remember(run.records, run.branch, result.head, epoch=leader.epoch if leader else None)
    if shared is not None:
        shared.conclude(run.branch, ok=result.status == "applied")


def _checked_head(run: _Run, leader: Held | None) -> PassResult | _Head:
    """The branch's head and whether it is to be rolled out: up to date, rewritten (refused),
    invalid (rejected), or what to roll out and from which base."""
    try:
        head = str(git.Repo(run.repo_path).commit(run.branch).hexsha)
    except (git.BadName, ValueError) as exc:
        raise RefNotFoundError(f"no branch '{run.branch}' in {run.repo_path}") from exc
    base, replan = applied_commit(run.records, run.branch), replan_stacks(run.records, run.branch)
    if base == head and not replan:
        return PassResult(head=head, base=base, status="up to date")
    if base and not run.options.allow_rewrite and not is_ancestor(run.repo_path, base, head):
        refusal = Refusal("history rewritten", rewrite_refusal(branch=run.branch, applied=base, head=head))
        result = PassResult(head=head, base=base, status="rewritten", refusal=refusal)
        result.records = _record_refused(run.audit, run.repo_path, run.branch, head, base, refusal.message)
        return result
    head_tree = tree_id_at(run.repo_path, head, run.subdir)
    if base and not replan and head_tree is not None and head_tree == tree_id_at(run.repo_path, base, run.subdir):
        _remember(run.records, run.branch, head, epoch=leader.epoch if leader else None)  # e.g. only files outside
        return PassResult(head=head, base=base, status="up to date")
    report = validate_files(read_tree_at(run.repo_path, head, run.subdir), display_root=run.subdir)
    base_tree = _valid_tree_at(run.repo_path, base, run.subdir)
    # CLU003 against the last applied commit: a managed cluster's file gone before its decommission
    removals = list(removed_managed_clusters(base_tree, report.tree)) if base_tree is not None else []
    if not report.ok or report.tree is None or removals:  # never apply a tree that fails validation
        problems = (*report.problems, *removals)
        result = PassResult(head=head, base=base, status="invalid", problems=problems)
        result.records = _record_rejected(run.audit, run.repo_path, run.branch, head, problems)
        return result
    source = Source(report.tree, head, commit_author(run.repo_path, head), head_tree)
    return _Head(source, base, base_tree, tuple(replan))


def _with_clusters(clusters: ClusterRollout, result: PassResult) -> PassResult:
    """`result` with the clusters' plans, results, records and plan failure, in the order they happened."""
    error = clusters.merged(result.plans, result.results, result.records, result.failures)
    if error and result.audit_error is None:
        result.audit_error = error
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
