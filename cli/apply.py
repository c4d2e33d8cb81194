"""`hypergov apply`: plan, show, and apply exactly what was shown, audited; the clusters the tree
declares around the stacks in the order AWS needs (`reconciler.clusters`). Exit codes as
`cli.plan` says: 0 applied or nothing to apply, 1 any error or refusal, 75 busy."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.plan import (
    _common,
    _report_failures,
    _state_lock,
    cli_errors,
    load_cli_settings,
    plan_all,
    planned_clusters,
    report_audit,
    report_interrupted,
    valid_tree,
)
from engines.settings import Settings
from reconciler.render import apply_line, render_text

if TYPE_CHECKING:
    from engines.hyperpod.cluster_executor import Applied, ClusterExecutor, PlannedCluster
    from reconciler.audit import AuditLog


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
    """The declared clusters' first phase (create, adopt, scale: the stacks bind to the live
    clusters), then the stacks, then the decommissions (`reconciler.clusters`); each shown and
    applied between its own intent and outcome records. Without --stack only: a `--stack` run
    applies only those stacks (with the clusters' live ARNs)."""
    from engines.hyperpod.cluster_executor import cluster_plan
    from reconciler.audit import commit_author, source_commit
    from reconciler.clusters import phases
    from reconciler.write_ahead import apply_audited

    if audit is not None:
        report_interrupted(audit)
    commit = source_commit(audit.store.repo, settings.config_dir) if audit else None
    author = commit_author(audit.store.repo, commit) if audit else None
    tree = valid_tree(settings)
    clusters, executor = planned_clusters(settings, tree) if not stack_names else ([], None)
    steps = phases(clusters)
    first = _apply_first_clusters(clusters, executor, yes=yes, audit=audit, commit=commit, author=author)
    plans, failures, engine = plan_all(settings, stack_names, source_commit=commit, tree=tree, clusters=clusters,
                                       applied=first)
    last = cluster_plan(steps.last, source_commit=commit) if steps.last else None
    click.echo(render_text([*plans, *([last] if last else [])]), nl=False)
    if failures:  # apply nothing of a run that could not be planned whole
        _report_failures(failures)
        click.echo("nothing applied: every stack must plan before any is applied", err=True)
        sys.exit(1)
    pending = [p for p in plans if not p.is_empty]
    if not pending and last is None:
        click.echo("nothing to apply")
        return
    if not yes and not click.confirm(f"apply {len(pending)} stack(s){' and the decommissions' if last else ''}?"):
        sys.exit(1)
    outcome = apply_audited(engine, pending, audit, source_author=author,
                            on_done=lambda result: click.echo(apply_line(result), err=not result.ok))
    report_audit(audit, outcome.audit_error, outcome.records)
    ok = outcome.audit_error is None and all(r.ok for r in outcome.results)
    if ok and last is not None and executor is not None:  # only once the stacks deleted config and quotas
        ok = _apply_clusters(executor, steps.last, audit=audit, commit=commit, author=author)
    sys.exit(0 if ok else 1)


def _apply_first_clusters(clusters: Sequence[PlannedCluster], executor: ClusterExecutor | None, *, yes: bool,
                          audit: AuditLog | None, commit: str | None, author: str | None) -> list[Applied]:
    """Show and apply the create/adopt/scale decisions (exit 1 on a refusal or a failure: no
    stack is planned past a cluster that is not as the tree says); what they left live."""
    from engines.hyperpod.cluster_executor import cluster_plan
    from reconciler.clusters import held_back, phases

    if executor is None:
        return []
    first = phases(clusters).first
    held = held_back(clusters)
    if held is not None:
        click.echo(render_text([cluster_plan(clusters, source_commit=commit)]), nl=False)
        click.echo(f"ERROR {held.failure}", err=True)
        click.echo("nothing applied: the clusters must be as the tree says before their stacks are applied", err=True)
        sys.exit(1)
    plan = cluster_plan(first, source_commit=commit)
    if plan.is_empty:
        return []
    click.echo(render_text([plan]), nl=False)
    if not yes and not click.confirm("apply the cluster changes (the stacks are planned once they are InService)?"):
        sys.exit(1)
    applied: list[Applied] = []
    if not _apply_clusters(executor, first, audit=audit, commit=commit, author=author, applied=applied):
        sys.exit(1)
    return applied


def _apply_clusters(executor: ClusterExecutor, planned: Sequence[PlannedCluster], *, audit: AuditLog | None,
                    commit: str | None, author: str | None, applied: list[Applied] | None = None) -> bool:
    from reconciler.clusters import apply_clusters_audited

    done = apply_clusters_audited(executor, planned, audit=audit, source_commit=commit, source_author=author)
    click.echo(apply_line(done.result), err=not done.result.ok)
    report_audit(audit, done.audit_error, done.records)
    if applied is not None:
        applied.extend(done.applied)
    return done.result.ok and done.audit_error is None
