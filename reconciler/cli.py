"""`hypergov plan`, `hypergov apply`, `hypergov drift`: the engine from the command line.

Exit codes follow `terraform plan -detailed-exitcode`, so CI can branch on them: 0 nothing to do,
2 changes planned (plan) or drift found (drift), 1 an error or a refusal.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hypergov.gitsource import RefNotFoundError
from hypergov.model.tree import GovernanceTree
from hypergov.problems import format_problem
from hypergov.validate import InvalidTreeError
from reconciler.plan import ApplyResult, Drift, Plan, StackName, split_outcomes
from reconciler.pulumi_engine import EngineUnavailableError
from reconciler.render import apply_line, render_markdown, render_text, summary_line
from reconciler.settings import Settings, SettingsError, load_settings
from reconciler.terraform.runner import TerraformError
from reconciler.terraform.workspace import MirrorNotFoundError

if TYPE_CHECKING:  # the engine pulls in Pulumi; `hypergov --help` and `validate` must stay fast
    from reconciler.reconcile import PassResult
    from reconciler.terraform.engine import TerraformEngine

EXIT_CHANGES = 2
F = TypeVar("F", bound=Callable[..., Any])


def _settings(settings_file: Path | None, config_dir: Path | None) -> Settings:
    try:
        overrides = {"config_dir": str(config_dir)} if config_dir else {}
        return load_settings(settings_file, overrides=overrides)
    except SettingsError as exc:
        raise click.UsageError(str(exc)) from exc


def _stacks(tree: GovernanceTree, names: Sequence[str]) -> list[StackName]:
    from stacks.spec import UnknownStackError, find_stack, plan_stacks

    try:
        return [find_stack(tree, n).name for n in names] if names else [s.name for s in plan_stacks(tree)]
    except UnknownStackError as exc:
        raise click.UsageError(str(exc)) from exc


def plan_all(settings: Settings, stack_names: Sequence[str], *, quiet: bool = False,
             source_commit: str | None = None) -> tuple[list[Plan], TerraformEngine]:
    """Validate, then plan the stacks (all, in dependency order, by default)."""
    from hypergov.validate import InvalidTreeError, load_valid_tree
    from reconciler.factory import terraform_engine

    try:
        tree = load_valid_tree(settings.config_dir)
    except InvalidTreeError as exc:
        raise click.ClickException(f"{exc} {settings.config_dir}") from exc
    names = _stacks(tree, stack_names)
    engine = terraform_engine(settings, tree, source_commit=source_commit)

    def progress(stack: StackName, outcome: Plan | Exception) -> None:
        if not quiet:
            text = summary_line(outcome) if isinstance(outcome, Plan) else f"{stack}: error: {outcome}"
            click.echo(f"planned {text}", err=True)

    plans, errors = split_outcomes(engine.plan_many(names, progress=progress))
    if errors:
        raise click.ClickException("; ".join(sorted(errors)))
    return plans, engine


_COMMON = [
    click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
                 help="Settings file (default: ./hypergov.yaml if present)."),
    click.option("--config", "config_dir", type=click.Path(file_okay=False, path_type=Path),
                 help="Config tree (default: settings config_dir, ./config)."),
    click.option("--stack", "stack_names", multiple=True, help="Only this stack (repeatable)."),
]


def _common(fn: F) -> F:
    for option in reversed(_COMMON):
        fn = option(fn)
    return fn


def _guard(fn: F) -> F:
    """Engine failures become one clear line and exit status 1, not a traceback."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (TerraformError, MirrorNotFoundError, EngineUnavailableError, InvalidTreeError) as exc:
            raise click.ClickException(str(exc)) from exc
    return wrapper  # type: ignore[return-value]


@click.command("plan")
@_common
@click.option("--json", "as_json", is_flag=True, help="Print the plans as JSON.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the plan as Markdown (for a merge-request comment).")
@click.option("--base", "base_ref", help="Git ref the change is compared with (a merge request's target): plan "
              "only the stacks it affects, destroys for removed ones, and the capacity impact when quotas change.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Job trace for the capacity impact (default: the bundled sample trace).")
@_guard
def plan_cmd(settings_file: Path | None, config_dir: Path | None, stack_names: tuple[str, ...], as_json: bool,
             markdown_file: Path | None, base_ref: str | None, trace_path: Path | None) -> None:
    """Validate the tree and plan every stack (or --stack ones) against live state.

    Exit status: 0 no changes, 2 changes planned, 1 error.
    """
    settings = _settings(settings_file, config_dir)
    extra: list[str] = []
    if base_ref:
        plans, extra = _merge_request_plan(settings, base_ref, trace_path, quiet=as_json)
    else:
        plans, _ = plan_all(settings, stack_names, quiet=as_json)
    if as_json:
        click.echo(json.dumps([p.as_dict() for p in plans], indent=2, default=str))
    else:
        click.echo(render_text(plans), nl=False)
    if markdown_file:
        markdown_file.write_text(render_markdown(plans, extra_sections=extra))
    sys.exit(EXIT_CHANGES if any(not p.is_empty for p in plans) else 0)


def _merge_request_plan(settings: Settings, base_ref: str, trace: Path | None, *,
                        quiet: bool) -> tuple[list[Plan], list[str]]:
    from hypergov.capacity.render import render_markdown as capacity_markdown
    from hypergov.change_control import approvals_markdown, required_approvals
    from hypergov.gitsource import read_tree_at
    from hypergov.loader import read_tree_dir
    from hypergov.validate import load_valid_tree, validate_files
    from reconciler.factory import terraform_engine
    from reconciler.merge_request import SAMPLE_TRACE, capacity_impact, scope

    head = load_valid_tree(settings.config_dir)
    try:
        base_files = read_tree_at(".", base_ref, str(settings.config_dir))
    except RefNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    base_report = validate_files(base_files)
    if not base_report.ok:
        raise click.ClickException(f"the tree at {base_ref} is invalid; cannot compare with it")
    approvals = required_approvals(base_files, read_tree_dir(settings.config_dir), base_report.tree)
    mr = scope(base_report.tree, head)
    engine = terraform_engine(settings, head)
    if not quiet:
        click.echo(f"{len(mr.affected.to_plan)} stack(s) affected, {len(mr.affected.removed)} removed, "
                   f"{mr.affected.unchanged} unchanged", err=True)
    plans, errors = split_outcomes(engine.plan_many(list(mr.affected.to_plan)))
    if errors:
        raise click.ClickException("; ".join(errors))
    plans += [engine.plan_destroy(s) for s in mr.affected.removed]
    extra = [approvals_markdown(approvals)]
    if not quiet:
        click.echo(f"{len(approvals)} changed file(s) need approval (see the Markdown plan)", err=True)
    if mr.capacity_changed:
        diff = capacity_impact(base_report.tree, head, trace=trace or SAMPLE_TRACE, base_ref=base_ref,
                               head_ref="working tree")
        extra.append(capacity_markdown(diff))
        if not quiet:
            click.echo(f"capacity impact simulated on {diff.jobs} jobs: "
                       f"{len(diff.regressions)} team regression(s)", err=True)
    return plans, extra


@click.command("apply")
@_common
@click.option("--yes", is_flag=True, help="Apply without asking (CI, the reconciler).")
@click.option("--no-audit", is_flag=True, help="Do not commit audit records (a local experiment, never CI).")
@_guard
def apply_cmd(settings_file: Path | None, config_dir: Path | None, stack_names: tuple[str, ...], yes: bool,
              no_audit: bool) -> None:
    """Plan, show the plan, and apply exactly that plan, in dependency order: the org stack, then
    the cluster stacks side by side, then the project stacks (terraform.parallelism at a time); a
    stack whose dependency failed is not applied.

    Every stack that changed or failed gets an audit record (stack, source commit, plan hash,
    what was applied or failed; never attribute values) committed to the governance repository:
    the Git repository holding the config tree, or `audit_repo` in the settings. Apply refuses to
    start when there is no such repository, unless --no-audit.

    Exit status: 0 applied (or nothing to apply), 1 failed or refused, 75 a reconciler pass or
    another apply is running on the same state directory.
    """
    from reconciler.audit import AuditRepoError, find_audit_repo
    from reconciler.reconcile import ReconcilerBusyError, exclusive

    settings = _settings(settings_file, config_dir)
    audit_repo = None
    if not no_audit:
        try:
            audit_repo = find_audit_repo(settings.config_dir, settings.audit_repo)
        except AuditRepoError as exc:
            raise click.UsageError(str(exc)) from exc
    try:
        with exclusive(Path(settings.state_dir).resolve()):  # never beside a reconciler pass or another apply
            _apply(settings, stack_names, yes=yes, audit_repo=audit_repo)
    except ReconcilerBusyError as exc:
        click.echo(str(exc), err=True)
        sys.exit(75)


def _apply(settings: Settings, stack_names: Sequence[str], *, yes: bool, audit_repo: Path | None) -> None:
    from reconciler.audit import source_commit
    from reconciler.reconcile import apply_audited

    commit = source_commit(audit_repo, settings.config_dir) if audit_repo else None
    plans, engine = plan_all(settings, stack_names, source_commit=commit)
    click.echo(render_text(plans), nl=False)
    pending = [p for p in plans if not p.is_empty]
    if not pending:
        click.echo("nothing to apply")
        return
    if not yes and not click.confirm(f"apply {len(pending)} stack(s)?"):
        sys.exit(1)
    outcome = apply_audited(engine, pending, audit_repo,
                            on_done=lambda result: click.echo(apply_line(result), err=not result.ok))
    if outcome.audit_error:
        click.echo(f"ERROR {outcome.audit_error}", err=True)
    elif outcome.audit_commit:
        click.echo(f"audit commit {outcome.audit_commit[:12]} in {audit_repo}")
    sys.exit(0 if outcome.audit_error is None and all(r.ok for r in outcome.results) else 1)


@click.command("drift")
@_common
@click.option("--json", "as_json", is_flag=True, help="Print the drift as JSON.")
@_guard
def drift_cmd(settings_file: Path | None, config_dir: Path | None, stack_names: tuple[str, ...], as_json: bool) -> None:
    """Compare live AWS state with each stack's last applied state (refresh-only plans,
    terraform.parallelism stacks at a time). A stack never applied has nothing to drift.

    Exit status: 0 no drift, 2 drift found, 1 error.
    """
    from hypergov.validate import load_valid_tree
    from reconciler.factory import terraform_engine

    settings = _settings(settings_file, config_dir)
    tree = load_valid_tree(settings.config_dir)
    engine = terraform_engine(settings, tree)

    def progress(stack: StackName, outcome: Drift | Exception) -> None:
        state = f"error: {outcome}" if isinstance(outcome, Exception) else (
            "DRIFTED" if outcome.drifted else "in sync")
        click.echo(f"refreshed {stack}: {state}", err=True)

    outcomes = engine.refresh_many(_stacks(tree, stack_names), progress=progress)
    drifts = [o for o in outcomes.values() if isinstance(o, Drift)]
    errors = {n: str(o) for n, o in outcomes.items() if isinstance(o, Exception)}
    if as_json:
        payload = [{"stack": d.stack, "drifted": d.drifted, "changes": [
            {"address": c.address, "action": c.action.value,
             "attributes": [{"path": a.path, "before": a.before, "after": a.after} for a in c.attributes]}
            for c in d.changes]} for d in drifts]
        payload += [{"stack": n, "error": e} for n, e in sorted(errors.items())]
        click.echo(json.dumps(payload, indent=2, default=str))
    else:
        for d in drifts:
            click.echo(f"{d.stack}: {'DRIFTED' if d.drifted else 'in sync'}")
            for c in d.changes:
                diffs = ", ".join(f"{a.path} {a.before!r} -> {a.after!r}" for a in c.attributes)
                click.echo(f"  ~ {c.address}: {diffs}")
        for name, error in sorted(errors.items()):
            click.echo(f"{name}: ERROR {error}", err=True)
    # an incomplete scan must not read as "no drift"
    sys.exit(1 if errors else EXIT_CHANGES if any(d.drifted for d in drifts) else 0)


@click.command("reconcile")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@click.option("--repo", "repo_path", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Governance repository (default: settings audit_repo, else the one holding config_dir).")
@click.option("--branch", default="main", show_default=True, help="Branch whose head is applied.")
@click.option("--watch", "interval", type=click.FloatRange(min=1), metavar="SECONDS",
              help="Keep going: a pass every SECONDS until interrupted (default: one pass).")
@_guard
def reconcile_cmd(settings_file: Path | None, repo_path: Path | None, branch: str, interval: float | None) -> None:
    """Apply the head of the governance branch: what a merge does.

    Reads the tree from the branch's head commit (not the working copy), refuses a tree that
    fails validation, plans only the stacks changed since the last commit applied in full (all
    of them on the first pass; destroys for stacks whose source left the tree), applies them in
    dependency order and commits the audit records to the repository. A pass that fails is
    retried from the same base next time. One reconciler at a time per state directory.

    Exit status (one pass): 0 applied or up to date, 1 refused or failed, 75 another reconciler
    pass or hypergov apply holds the state directory.
    """
    import time

    from reconciler.audit import AuditRepoError, find_audit_repo
    from reconciler.factory import terraform_engine
    from reconciler.reconcile import ReconcilerBusyError, ReconcilerStateError, reconcile_once

    settings = _settings(settings_file, None)
    try:
        repo = (repo_path or find_audit_repo(settings.config_dir, settings.audit_repo)).resolve()
    except AuditRepoError as exc:
        raise click.UsageError(str(exc)) from exc
    config = settings.config_dir.resolve() if settings.config_dir.is_absolute() else repo / settings.config_dir
    subdir = str(config.relative_to(repo)) if config.is_relative_to(repo) else str(settings.config_dir)

    def applied(result: ApplyResult) -> None:
        click.echo(f"  {apply_line(result)}", err=True)

    def one_pass() -> int:
        try:
            outcome = reconcile_once(repo, branch, subdir, Path(settings.state_dir).resolve(),
                                     lambda tree, head: terraform_engine(settings, tree, source_commit=head),
                                     on_apply=applied)
        except ReconcilerBusyError as exc:
            click.echo(str(exc), err=True)
            return 75
        except RefNotFoundError as exc:
            raise click.UsageError(str(exc)) from exc
        except ReconcilerStateError as exc:
            raise click.ClickException(str(exc)) from exc
        except TerraformError as exc:
            if interval is None:
                raise
            click.echo(f"{branch}: pass failed, retrying in {interval:g} s: {exc}", err=True)
            return 1
        _report_pass(branch, outcome)
        return 0 if outcome.ok else 1

    if interval is None:
        sys.exit(one_pass())
    try:
        while True:
            one_pass()
            time.sleep(interval)
    except KeyboardInterrupt:
        click.echo("reconciler stopped", err=True)
        sys.exit(130)


def _report_pass(branch: str, outcome: PassResult) -> None:
    where = f"{branch}@{outcome.head[:12]}"
    if outcome.status == "up to date":
        click.echo(f"{where}: up to date")
    elif outcome.status == "invalid":
        click.echo(f"{where}: REFUSED, the tree fails validation; nothing applied", err=True)
        for problem in outcome.problems:
            click.echo(format_problem(problem), err=True)
    else:
        changed = [r for r in outcome.results if r.applied]
        click.echo(f"{where}: {outcome.status}: {len(outcome.plans)} stack(s) planned, {len(changed)} changed"
                   + (f" (since {outcome.base[:12]})" if outcome.base else " (first pass: every stack)")
                   + (f"; audit commit {outcome.audit_commit[:12]}" if outcome.audit_commit else ""))
        for error in outcome.errors:
            click.echo(f"  ERROR {error}", err=True)


COMMANDS = (plan_cmd, apply_cmd, drift_cmd, reconcile_cmd)
