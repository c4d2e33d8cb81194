"""`hypergov drift`: the live scan of the whole org (every governed object read with list calls and
compared with the tree at the last applied commit), optionally each stack's terraform refresh
(`--deep`), and the repairs (`--remediate`, `--prune-unmanaged`), each audited.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.output import echo, write_report
from cli.plan import (
    _common,
    _stacks,
    _state_lock,
    cli_engine,
    cli_errors,
    load_cli_settings,
    report_interrupted,
    to_stderr,
)
from engines.plan import Drift, Failure, StackName
from engines.settings import Settings
from hypergov import naming

if TYPE_CHECKING:
    from engines.live.items import LiveScan
    from reconciler.repair import ComparedTree

DRIFT_EXIT = ("Exit status: 0 no drift, 2 drift found (or left after a repair), 1 any error (a part of the org that "
              "could not be read included: an incomplete scan never reads as no drift; usage included), 75 state "
              "directory busy.")


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
    from reconciler.repair import compared_tree, live_scan

    settings = load_cli_settings(settings_file, config_dir)
    compared = compared_tree(settings, against=against, branch=branch)
    tree = compared.tree
    unknown = [c for c in clusters if c not in tree.clusters]
    if unknown:
        raise click.UsageError(f"no cluster {', '.join(unknown)} in the tree; clusters are: "
                               f"{', '.join(sorted(tree.clusters))}")
    chosen = [*stack_names, *(naming.project_stack(p) for p in projects)]
    names = _stacks(tree, chosen)
    echo(f"compared with {compared.described}{f' ({compared.commit[:12]})' if compared.commit else ''}",
         err=True)
    with _state_lock(settings):
        scan = live_scan(settings, tree, only=names if chosen else None, clusters=clusters)
        echo(scan_summary(scan), err=True)
        refreshed = cli_engine(settings, tree).refresh_many(names, progress=_refresh_progress) if deep else {}
    if as_json:
        echo(json.dumps(drift_json(scan, refreshed, commit=compared.commit), indent=2, default=str))
    else:
        lines, errors = drift_text(scan, refreshed)
        for line in lines:
            echo(line)
        for line in errors:
            echo(f"ERROR {line}", err=True)
    if markdown_file:
        write_report(markdown_file, drift_markdown(scan, refreshed, commit=compared.commit,
                                                   compared_with=compared.described))
        echo(f"wrote {markdown_file}", err=True)
    status = drift_exit(scan, refreshed)
    if (remediate or prune_unmanaged) and status == 2:
        status = _repair(settings, compared, scan, remediate=remediate, prune_unmanaged=prune_unmanaged, yes=yes)
        if status != 1:  # what is left is what a scan finds now, not what the repairs meant to do
            with _state_lock(settings):
                after = live_scan(settings, tree, only=names if chosen else None, clusters=clusters)
            echo(f"after the repairs: {len(after.items)} item(s) left"
                 + "".join(f"\n  {i.kind} {i.address}: {i.fix}" for i in after.items), err=True)
            status = drift_exit(after, {})
    sys.exit(status)


def _refresh_progress(stack: StackName, outcome: Drift | Failure) -> None:
    state = f"{outcome.kind} error" if isinstance(outcome, Failure) else ("DRIFTED" if outcome.drifted else "in sync")
    echo(f"refreshed {stack}: {state}", err=True)


def _repair(settings: Settings, compared: ComparedTree, scan: LiveScan, *, remediate: bool, prune_unmanaged: bool,
            yes: bool) -> int:
    """`reconciler.repair` on the audit repository, asking unless --yes; 1 when a repair failed."""
    from reconciler.audit import AuditLog, AuditRepoError, find_audit_repo
    from reconciler.repair import repair

    try:
        audit = AuditLog.from_settings(settings, find_audit_repo(settings.config_dir, settings.audit_repo))
    except AuditRepoError as exc:
        raise click.UsageError(str(exc)) from exc
    with _state_lock(settings):
        report_interrupted(audit)
        ok = repair(settings, compared, scan, remediate=remediate, prune_unmanaged=prune_unmanaged, audit=audit,
                    confirm=(lambda _: True) if yes else (lambda question: click.confirm(question, err=True)),
                    say=to_stderr)
    return 0 if ok else 1
