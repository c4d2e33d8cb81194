"""`hypergov drift`: the live scan of the whole org (every governed object read with list calls and
compared with the tree at the last applied commit), optionally each stack's terraform refresh
(`--deep`), and the repairs (`--remediate`, `--prune-unmanaged`), each audited.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.plan import (
    _common,
    _stacks,
    _state_lock,
    cli_engine,
    cli_errors,
    load_cli_settings,
    report_audit,
    report_interrupted,
    to_stderr,
    with_live_arns,
)
from engines.plan import Drift, Failure, StackName, split_outcomes
from engines.settings import Settings
from hypergov import naming
from hypergov.model.tree import GovernanceTree
from reconciler.render import apply_line, render_text

if TYPE_CHECKING:
    from engines.live.items import DriftItem, LiveScan
    from reconciler.audit import AuditLog

DRIFT_EXIT = ("Exit status: 0 no drift, 2 drift found (or left after a repair), 1 any error (a part of the org that "
              "could not be read included: an incomplete scan never reads as no drift; usage included), 75 state "
              "directory busy.")


@dataclass(frozen=True)
class ComparedTree:
    tree: GovernanceTree
    commit: str | None
    described: str  # "the tree last applied to main" / "the working tree at config"


def compared_tree(settings: Settings, *, against: str, branch: str, repo: Path | None = None) -> ComparedTree:
    """The tree whose desired state the scan compares with: the one the reconciler last applied to
    `branch` (its record in the state directory; read from `repo` when given, the reconciler's
    repository), else the working tree."""
    from engines.factory import reconciler_records
    from hypergov.gitsource import NotInRepositoryError, locate_tree, read_tree_at
    from hypergov.validate import load_valid_tree, validate_files
    from reconciler.applied_record import applied_commit
    from reconciler.audit import source_commit

    applied = applied_commit(reconciler_records(settings), branch) if against == "applied" else None
    try:
        where = locate_tree(settings.config_dir, repo=repo)
    except NotInRepositoryError:
        where = None
    if applied and where is not None:
        report = validate_files(read_tree_at(where.repo, applied, where.subdir))
        if report.ok and report.tree is not None:
            return ComparedTree(with_live_arns(settings, report.tree), applied, f"the tree last applied to {branch}")
        raise click.ClickException(f"the tree last applied to {branch} ({applied[:12]}) no longer validates; "
                                   "compare with the working tree: --against tree")
    commit = source_commit(where.repo, settings.config_dir) if where is not None else None
    return ComparedTree(with_live_arns(settings, load_valid_tree(settings.config_dir)), commit,
                        f"the working tree at {settings.config_dir}")


@click.command("drift", epilog=DRIFT_EXIT)
@_common
@click.option("--project", "projects", multiple=True, help="Only this project's stack (repeatable).")
@click.option("--cluster", "clusters", multiple=True,
              help="Only objects on this cluster: its stack and the projects' objects there (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (README: Drift).")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the report as Markdown (to open as an issue or post on a merge request).")
@click.option("--deep", is_flag=True, help="Also refresh each stack's terraform state (exact, one terraform "
              "process per stack: slow on a large org).")
@click.option("--against", type=click.Choice(["applied", "tree"]), default="applied", show_default=True,
              help="Compare with the tree the reconciler last applied to --branch (falls back to the working "
              "tree when it has applied none), or with the working tree.")
@click.option("--branch", default="main", show_default=True, help="The reconciler's branch (for --against applied).")
@click.option("--remediate", is_flag=True, help="Restore changed, missing and unbounded objects by an audited "
              "apply of their stacks (the plan is shown first).")
@click.option("--prune-unmanaged", is_flag=True, help="Delete the unmanaged objects listed (nothing else), with "
              "an audit record.")
@click.option("--yes", is_flag=True, help="Repair without asking.")
@cli_errors
def drift_cmd(settings_file: Path | None, config_dir: Path | None, stack_names: tuple[str, ...],
              projects: tuple[str, ...], clusters: tuple[str, ...], as_json: bool, markdown_file: Path | None,
              deep: bool, against: str, branch: str, remediate: bool, prune_unmanaged: bool, yes: bool) -> None:
    """Compare live state with the tree, in one scan of list calls per service, account and region:
    IAM (roles, their policies and boundaries), EKS access entries, Organizations policies on the
    governed OU, Budgets, SNS, HyperPod compute quotas and scheduler configs, and the Kubernetes
    objects of clusters with a kubeconfig. Reports `changed` (with expected and live values),
    `missing`, `unmanaged` (inside what hypergov governs, declared nowhere) and `unbounded` (a
    hypergov role without its boundary or granting beyond it) items, with who changed them where the
    API says, and a fix for each.
    """
    from reconciler.drift_report import drift_exit, drift_json, drift_markdown, drift_text, scan_summary

    settings = load_cli_settings(settings_file, config_dir)
    compared = compared_tree(settings, against=against, branch=branch)
    tree = compared.tree
    unknown = [c for c in clusters if c not in tree.clusters]
    if unknown:
        raise click.UsageError(f"no cluster {', '.join(unknown)} in the tree; clusters are: "
                               f"{', '.join(sorted(tree.clusters))}")
    chosen = [*stack_names, *(naming.project_stack(p) for p in projects)]
    names = _stacks(tree, chosen)
    click.echo(f"compared with {compared.described}{f' ({compared.commit[:12]})' if compared.commit else ''}",
               err=True)
    with _state_lock(settings):
        scan = live_scan(settings, tree, only=names if chosen else None, clusters=clusters)
        click.echo(scan_summary(scan), err=True)
        refreshed = cli_engine(settings, tree).refresh_many(names, progress=_refresh_progress) if deep else {}
    if as_json:
        click.echo(json.dumps(drift_json(scan, refreshed, commit=compared.commit), indent=2, default=str))
    else:
        lines, errors = drift_text(scan, refreshed)
        for line in lines:
            click.echo(line)
        for line in errors:
            click.echo(f"ERROR {line}", err=True)
    if markdown_file:
        markdown_file.write_text(drift_markdown(scan, refreshed, commit=compared.commit,
                                                compared_with=compared.described))
        click.echo(f"wrote {markdown_file}", err=True)
    status = drift_exit(scan, refreshed)
    if (remediate or prune_unmanaged) and status == 2:
        status = _repair(settings, compared, scan, remediate=remediate, prune_unmanaged=prune_unmanaged, yes=yes)
        if status != 1:  # what is left is what a scan finds now, not what the repairs meant to do
            with _state_lock(settings):
                after = live_scan(settings, tree, only=names if chosen else None, clusters=clusters)
            click.echo(f"after the repairs: {len(after.items)} item(s) left"
                       + "".join(f"\n  {i.kind} {i.address}: {i.fix}" for i in after.items), err=True)
            status = drift_exit(after, {})
    sys.exit(status)


def live_scan(settings: Settings, tree: GovernanceTree, *, only: Sequence[str] | None = None,
              clusters: Sequence[str] = ()) -> LiveScan:
    """The live scan of `tree` (the caller holds the state directory's lock: the graph cache)."""
    from engines.live.kubernetes import kube_apis_of
    from engines.live.scan import scan_tree
    from reconciler.drift_report import filtered

    return filtered(scan_tree(settings.aws, tree, cache_dir=Path(settings.state_dir) / "graphs", only=only,
                              kube_apis=kube_apis_of(settings.kubeconfigs)), clusters=clusters)


def _refresh_progress(stack: StackName, outcome: Drift | Failure) -> None:
    state = f"{outcome.kind} error" if isinstance(outcome, Failure) else ("DRIFTED" if outcome.drifted else "in sync")
    click.echo(f"refreshed {stack}: {state}", err=True)


def _repair(settings: Settings, compared: ComparedTree, scan: LiveScan, *, remediate: bool, prune_unmanaged: bool,
            yes: bool, audit: AuditLog | None = None, locked: Callable[[], AbstractContextManager[None]] | None = None,
            say: Callable[[str], None] = to_stderr) -> int:
    """Repair what the scan found (only on a complete scan); 1 when a repair failed (what is left
    is then said by a new scan). The reconciler's scheduled scan passes its audit log (on its
    repository), `locked` (it holds the state directory's lock already) and `say` (its event log)."""
    from engines.live.scan import PRUNERS
    from reconciler.audit import AuditLog, AuditRepoError, find_audit_repo
    from reconciler.drift_repair import repair_plan
    from stacks.spec import plan_stacks

    try:
        audit = audit or AuditLog.from_settings(settings, find_audit_repo(settings.config_dir, settings.audit_repo))
    except AuditRepoError as exc:
        raise click.UsageError(str(exc)) from exc
    plan = repair_plan(scan.items, [s.name for s in plan_stacks(compared.tree)], PRUNERS)
    failed = False
    with (locked or (lambda: _state_lock(settings)))():
        report_interrupted(audit, say=say)
        if remediate and plan.stacks:
            failed |= not _remediate(settings, compared, plan.stacks, plan.items, audit, yes=yes, say=say)
        if prune_unmanaged and plan.unmanaged:
            failed |= not _prune(settings, compared, plan.unmanaged, audit, yes=yes)
    for item in plan.unprunable if prune_unmanaged else ():
        say(f"not pruned: {item.address} ({item.type}): hypergov deletes no object of this type; {item.fix}")
    return 1 if failed else 0


def _remediate(settings: Settings, compared: ComparedTree, stacks: tuple[str, ...],
               items: Mapping[str, tuple[str, ...]], audit: AuditLog, *, yes: bool,
               say: Callable[[str], None] = to_stderr) -> bool:
    from reconciler.audit import commit_author
    from reconciler.drift_repair import REPAIR_REASON
    from reconciler.write_ahead import apply_audited

    engine = cli_engine(settings, compared.tree, source_commit=compared.commit)
    plans, failures = split_outcomes(engine.plan_many([StackName(s) for s in stacks]))
    shown = render_text(plans).rstrip("\n")
    if shown:
        say(shown)
    if failures:
        for stack, failure in failures.items():
            say(f"ERROR {stack}: {failure.kind}: {failure.message}")
        say("nothing repaired: every stack to repair must plan first")
        return False
    pending = [p for p in plans if not p.is_empty]
    if not pending:
        say("the plans show nothing to restore")
        return True
    if not yes and not click.confirm(f"repair {len(pending)} stack(s)?", err=True):
        return False
    outcome = apply_audited(engine, pending, audit, reason=REPAIR_REASON, drift=items,
                            source_author=commit_author(audit.store.repo, compared.commit),
                            on_done=lambda result: say(apply_line(result)))
    report_audit(audit, outcome.audit_error, outcome.records, err=True, say=say)
    return outcome.audit_error is None and all(r.ok for r in outcome.results)


def _prune(settings: Settings, compared: ComparedTree, items: Sequence[DriftItem], audit: AuditLog, *,
           yes: bool) -> bool:
    from engines.live.kubernetes import kube_apis_of
    from engines.live.scan import PRUNERS, org_clients
    from reconciler.drift_repair import Pruned, prune, record_prune, record_prune_intent

    click.echo(f"{len(items)} unmanaged object(s) to delete:", err=True)
    for item in items:
        click.echo(f"  - {item.address} ({item.account} {item.region}, stack {item.stack})", err=True)
    if not yes and not click.confirm(f"delete these {len(items)} object(s)?", err=True):
        return False
    _, client_for, _ = org_clients(settings.aws, compared.tree)

    def done(p: Pruned) -> None:
        click.echo(f"{'deleted' if p.error is None else 'FAILED'} {p.item.address}"
                   f"{f': {p.error.message}' if p.error else ''}", err=True)

    intent_id = record_prune_intent(audit, items, source_commit=compared.commit)  # no intent, no delete
    pruned = prune(items, PRUNERS, client_for, kube_apis=kube_apis_of(settings.kubeconfigs), on_done=done)
    try:
        record_prune(audit, pruned, source_commit=compared.commit, intent_id=intent_id)
    except Exception as exc:  # the objects are gone: say the record is not written, loudly
        click.echo(f"ERROR the objects were deleted but the prune's audit record could not be written: {exc}", err=True)
        return False
    report_audit(audit, None, [], err=True)
    return all(p.error is None for p in pruned)
