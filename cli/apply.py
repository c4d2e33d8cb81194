"""`hypergov apply`: plan, show, and apply exactly what was shown, audited; the clusters the tree
declares around the stacks in the order AWS needs (`reconciler.clusters`). Exit codes as
`cli.plan` says: 0 applied or nothing to apply, 1 any error or refusal, 75 busy."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.output import echo
from cli.plan import (
    _common,
    _plan_progress,
    _report_failures,
    _stacks,
    _state_lock,
    cli_engine,
    cli_errors,
    load_cli_settings,
    report_audit,
    report_interrupted,
    to_stderr,
    valid_tree,
)
from engines.plan import ApplyResult
from engines.settings import Settings
from reconciler.render import apply_line, render_text

if TYPE_CHECKING:
    from engines.hyperpod.cluster_executor import ClusterExecutor
    from hypergov.model.tree import GovernanceTree
    from reconciler.audit import AuditLog
    from reconciler.clusters import ClustersApplied
    from reconciler.rollout import ClusterRollout, Source


@click.command("apply", epilog="Exit status: 0 applied (or nothing to apply), 1 any error, failure or refusal "
               "(usage included), 75 a reconciler pass or another apply holds the state directory.")
@_common
@click.option("--yes", is_flag=True, help="Apply without asking (CI, the reconciler).")
@click.option("--no-audit", is_flag=True, help="Do not record audit records (a local experiment, never CI).")
@cli_errors
def apply_cmd(settings_file: Path | None, config_dir: Path | None, stack_names: tuple[str, ...], yes: bool,
              no_audit: bool) -> None:
    """Plan, show the plan, and apply exactly that plan, in dependency order: the org stack, then
    the cluster stacks side by side, then the project stacks (terraform.parallelism at a time); a
    stack whose dependency failed is not applied. Nothing is applied when any stack fails to plan.

    Before anything is applied an intent record (stacks, plan fingerprints, actions) is committed
    on the audit branch (settings audit_branch, default hypergov/audit) of the governance
    repository (the Git repository holding the config tree, or `audit_repo`), and after it one
    outcome record per stack (source commit and author, what was applied or failed; never
    attribute values); both are pushed when the repository has a remote. The governed branch,
    the working tree and the index are never touched. Apply refuses to start when there is no
    such repository, unless --no-audit.
    """
    from reconciler.audit import AuditLog, AuditRepoError, find_audit_repo

    settings = load_cli_settings(settings_file, config_dir)
    audit = None
    if not no_audit:
        try:
            audit = AuditLog.from_settings(settings, find_audit_repo(settings.config_dir, settings.audit_repo))
        except AuditRepoError as exc:
            raise click.UsageError(str(exc)) from exc
    with _state_lock(settings):  # never beside a reconciler pass, a plan or another apply
        _apply(settings, stack_names, yes=yes, audit=audit)


def _apply(settings: Settings, stack_names: Sequence[str], *, yes: bool, audit: AuditLog | None) -> None:
    """The rollout every applier runs (`reconciler.rollout`), shown and confirmed step by step:
    the declared clusters' first phase (create, adopt, scale: the stacks bind to the live
    clusters), every stack planned and judged against its review, the audited apply, then the
    decommissions. A `--stack` run applies only those stacks (with the clusters' live ARNs)."""
    from engines.factory import reconciler_records
    from engines.hyperpod.cluster_executor import awaiting_cluster
    from engines.plan import Plan
    from reconciler.pass_result import Scope
    from reconciler.rollout import Carrying, ClusterRollout, ReviewGate, carry_out, prepare

    if audit is not None:
        report_interrupted(audit)
    source = _source(settings, audit)
    names = _stacks(source.tree, stack_names)  # an unknown --stack is a usage error before any AWS call
    clusters = ClusterRollout.plan(None if stack_names else _cluster_executor(settings), source)
    tree = _first_phase(clusters, audit, yes=yes)
    engine = cli_engine(settings, tree, source_commit=source.commit)
    waiting = awaiting_cluster(tree)  # a cluster still to be created: its stack is planned once it exists
    prepared = prepare(engine, Scope(plan=tuple(n for n in names if n not in waiting), destroy=()),
                       replace(source, tree=tree), gate=ReviewGate(reconciler_records(settings),
                                                                   settings.require_reviewed),
                       progress=_plan_progress(False))
    notes = [Plan(stack=n, engine=engine.name, changes=(), source_commit=source.commit, notes=(waiting[n],))
             for n in names if n in waiting]
    last = clusters.last
    echo(render_text([*prepared.plans, *notes, *([last] if last else [])]), nl=False)
    if not prepared.ready:  # apply nothing of a run that could not be planned whole
        _report_failures(prepared.failures)
        echo("nothing applied: every stack must plan before any is applied", err=True)
        sys.exit(1)
    if not prepared.pending and last is None:
        echo("nothing to apply")
        return
    count = len(prepared.pending)
    if not yes and not click.confirm(f"apply {count} stack(s){' and the decommissions' if last else ''}?"):
        sys.exit(1)
    outcome = carry_out(engine, prepared, Carrying(audit=audit, on_apply=_say_applied))
    report_audit(audit, outcome.audit_error, outcome.records, outcome.push)
    ok = outcome.audit_error is None and all(r.ok for r in outcome.results)
    if ok and last is not None:  # only once the stacks deleted config and quotas
        done = clusters.last_phase(audit, on_apply=_say_applied)
        ok = done is not None and _reported(audit, done)
    sys.exit(0 if ok else 1)


def _source(settings: Settings, audit: AuditLog | None) -> Source:
    """The valid working tree, the commit it is at and its author (with an audit repository), and
    its Git tree id, by which a merge request's review is found (None when it has uncommitted
    changes: no review can be of it)."""
    from hypergov.gitsource import NotInRepositoryError, config_tree_id, locate_tree
    from reconciler.audit import commit_author, source_commit
    from reconciler.rollout import Source

    commit = source_commit(audit.store.repo, settings.config_dir) if audit else None
    try:
        tree_id = config_tree_id(locate_tree(settings.config_dir))
    except NotInRepositoryError:
        tree_id = None
    return Source(valid_tree(settings), commit, commit_author(audit.store.repo, commit) if audit else None, tree_id)


def _cluster_executor(settings: Settings) -> Callable[[GovernanceTree], ClusterExecutor]:
    from engines.factory import cluster_executor

    return lambda tree: cluster_executor(settings, tree, progress=to_stderr)


def _first_phase(clusters: ClusterRollout, audit: AuditLog | None, *, yes: bool) -> GovernanceTree:
    """Show and apply the create/adopt/scale decisions (exit 1 on a refusal or a failure: no
    stack is planned past a cluster that is not as the tree says); the tree with the live ARNs."""
    from engines.hyperpod.cluster_executor import CLUSTERS_STACK

    if clusters.failure is not None:
        _report_failures({CLUSTERS_STACK: clusters.failure})
        echo("nothing applied: the clusters must be planned before their stacks", err=True)
        sys.exit(1)
    if clusters.held is not None:
        echo(render_text([clusters.done[0].plan]), nl=False)
        echo(f"ERROR {clusters.held.failure}", err=True)
        echo("nothing applied: the clusters must be as the tree says before their stacks are applied", err=True)
        sys.exit(1)
    first = clusters.first
    if clusters.executor is None or first.is_empty:
        return clusters.tree
    echo(render_text([first]), nl=False)
    if not yes and not click.confirm("apply the cluster changes (the stacks are planned once they are InService)?"):
        sys.exit(1)
    tree = clusters.first_phase(audit, on_apply=_say_applied)
    if not _reported(audit, clusters.done[-1]):
        sys.exit(1)
    return tree


def _reported(audit: AuditLog | None, done: ClustersApplied) -> bool:
    report_audit(audit, done.audit_error, done.records, done.push)
    return done.result.ok and done.audit_error is None


def _say_applied(result: ApplyResult) -> None:
    echo(apply_line(result), err=not result.ok)
