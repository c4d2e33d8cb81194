"""`hypergov plan`, `hypergov apply`, `hypergov drift`: the engine from the command line, and the
helpers every engine command shares (settings, the state lock, the error guard).

Exit codes follow `terraform plan -detailed-exitcode`, so CI can branch on them: 0 nothing to do,
2 changes planned (plan) or drift found (drift), 1 any error or refusal (usage errors included),
75 busy (another apply or reconciler pass holds the state directory). A multi-stack command
reports every stack: a stack that failed is one line saying so (classified temporary or
permanent), the others are shown as usual.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cli.options import config_option
from engines.outcomes import Failure, HypergovError, classify
from engines.plan import Plan, ResourceChange, StackName, failure_lines, split_outcomes
from engines.settings import Settings, SettingsError, load_settings
from engines.terraform.errors import TerraformError
from hypergov.gitsource import NotInRepositoryError, RefNotFoundError, config_tree_id, locate_tree
from hypergov.model.tree import GovernanceTree
from hypergov.validate import InvalidTreeError, ValidationReport
from reconciler.render import render_markdown, render_text, summary_line

if TYPE_CHECKING:  # the engine pulls in Pulumi; `hypergov --help` and `validate` must stay fast
    from engines.hyperpod.cluster_executor import Applied, ClusterExecutor, PlannedCluster
    from engines.protocol import Engine
    from hypergov.tree_files import TreeEntry
    from reconciler.audit import AuditLog

EXIT_CHANGES = 2
EXIT_BUSY = 75
TERRAFORM_MAX_STACKS = 10  # a merge request affecting more: terraform's changes from the live scan
F = TypeVar("F", bound=Callable[..., Any])


def load_cli_settings(settings_file: Path | None, config_dir: Path | None) -> Settings:
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


def cli_engine(settings: Settings, tree: GovernanceTree, *, source_commit: str | None = None) -> Engine:
    from engines.factory import build_engine

    return build_engine(settings, tree, source_commit=source_commit)


@contextmanager
def _state_lock(settings: Settings) -> Iterator[None]:
    """Plans, drift scans and applies write the same per-stack files: one at a time per state dir."""
    from reconciler.reconcile import ReconcilerBusyError, exclusive

    try:
        with exclusive(Path(settings.state_dir).resolve()):
            yield
    except ReconcilerBusyError as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_BUSY)


@contextmanager
def _plan_state(settings: Settings, *, private: bool, quiet: bool) -> Iterator[Settings]:
    """The settings a plan runs with: the shared state directory under its lock, or a private
    copy of it (no lock, nothing written back); says which on stderr."""
    import tempfile

    from engines.terraform.workspace import copy_for_planning

    shared = Path(settings.state_dir).resolve()
    if not private:
        with _state_lock(settings):
            if not quiet:
                click.echo(f"state: {shared} (locked while planning)", err=True)
            yield settings
        return
    with tempfile.TemporaryDirectory(prefix="hypergov-plan-") as tmp:
        copy_for_planning(shared, Path(tmp))
        if not quiet:
            click.echo(f"state: a private copy of {shared} (read-only against live state; nothing written back)",
                       err=True)
        # Without the state lock: a copy's local state has no other user, and a shared S3 state's
        # lock belongs to whoever applies (a plan writes no state).
        yield settings.model_copy(update={"state_dir": Path(tmp), "terraform": settings.terraform.model_copy(
            update={"lock_while_planning": False})})


def _plan_progress(quiet: bool) -> Callable[[StackName, Plan | Failure], None]:
    def progress(stack: StackName, outcome: Plan | Failure) -> None:
        if not quiet:
            text = summary_line(outcome) if isinstance(outcome, Plan) else f"{stack}: {outcome.kind} error"
            click.echo(f"planned {text}", err=True)
    return progress


def valid_tree(settings: Settings) -> GovernanceTree:
    from hypergov.validate import InvalidTreeError, load_valid_tree

    try:
        return load_valid_tree(settings.config_dir)
    except InvalidTreeError as exc:
        raise click.ClickException(f"{exc} {settings.config_dir}") from exc


def planned_clusters(settings: Settings, tree: GovernanceTree, *,
                     quiet: bool = False) -> tuple[list[PlannedCluster], ClusterExecutor | None]:
    """The decisions on the clusters the tree declares (none declared: no AWS call)."""
    from engines.factory import cluster_executor
    from engines.hyperpod.cluster_executor import declared_clusters

    declared = declared_clusters(tree)
    if not declared:
        return [], None
    executor = cluster_executor(settings, tree, progress=None if quiet else to_stderr)
    return executor.plan(declared), executor


def with_live_arns(settings: Settings, tree: GovernanceTree) -> GovernanceTree:
    """`tree` as its stacks are declared: each managed cluster with its live cluster's ARN (what
    apply and the reconciler declare the stacks with, so that drift compares the same thing)."""
    from engines.hyperpod.cluster_executor import live_arns, with_cluster_arns

    clusters, _ = planned_clusters(settings, tree, quiet=True)
    return with_cluster_arns(tree, live_arns(clusters)) if clusters else tree


def plan_all(settings: Settings, stack_names: Sequence[str], *, quiet: bool = False,
             source_commit: str | None = None, tree: GovernanceTree | None = None,
             clusters: Sequence[PlannedCluster] | None = None,
             applied: Sequence[Applied] = ()) -> tuple[list[Plan], dict[StackName, Failure], Engine]:
    """Validate, then plan the stacks (all, in dependency order, by default): every stack's
    plan, and the failure of every stack that could not be planned. The stacks are declared with
    each managed cluster's live ARN (`clusters` as planned, `applied` as a first phase left them);
    the stack of a cluster still to be created is a note: it is planned once the cluster exists."""
    from engines.hyperpod.cluster_executor import awaiting_cluster, live_arns, with_cluster_arns

    tree = tree if tree is not None else valid_tree(settings)
    names = _stacks(tree, stack_names)
    if clusters is None:
        clusters, _ = planned_clusters(settings, tree, quiet=True)
    resolved = with_cluster_arns(tree, live_arns(clusters, applied))
    waiting = awaiting_cluster(resolved)
    engine = cli_engine(settings, resolved, source_commit=source_commit)
    plans, failures = split_outcomes(engine.plan_many([n for n in names if n not in waiting],
                                                      progress=_plan_progress(quiet)))
    by_stack = {p.stack: p for p in plans}
    by_stack.update({n: Plan(stack=n, engine=engine.name, changes=(), source_commit=source_commit,
                             notes=(waiting[n],)) for n in names if n in waiting})
    return [by_stack[n] for n in names if n in by_stack], failures, engine


def _report_failures(failures: dict[StackName, Failure]) -> None:
    for line in failure_lines(failures):
        click.echo(f"ERROR {line}", err=True)


_COMMON = [
    click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
                 help="Settings file (default: ./hypergov.yaml if present)."),
    config_option(from_settings=True),
    click.option("--stack", "stack_names", multiple=True, help="Only this stack (repeatable)."),
]


def _common(fn: F) -> F:
    for option in reversed(_COMMON):
        fn = option(fn)
    return fn


def cli_errors(fn: F) -> F:
    """Failures outside any one stack (no credentials, no provider mirror, an unreadable record, a
    Git error) become one clear line and exit status 1, not a traceback. Real bugs still show one."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (HypergovError, TerraformError, InvalidTreeError, RefNotFoundError, NotInRepositoryError) as exc:
            raise click.ClickException(classify(exc).message) from exc
        except Exception as exc:
            failure = classify(exc)
            if failure.reason == "unexpected":
                raise
            raise click.ClickException(failure.message) from exc
    return wrapper  # type: ignore[return-value]


PLAN_EXIT = "Exit status: 0 no changes, 2 changes planned, 1 any error (usage included), 75 state directory busy."


@click.command("plan", epilog=PLAN_EXIT)
@_common
@click.option("--json", "as_json", is_flag=True, help="Print the plans as JSON (failed stacks as error entries).")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the plan as Markdown (for a merge-request comment).")
@click.option("--base", "base_ref", help="Git ref the change is compared with (a merge request's target): plan "
              "only the stacks it affects, destroys for removed ones, and the capacity impact when quotas change.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Job trace for the capacity impact (default: the bundled sample trace).")
@click.option("--private-state", is_flag=True, help="Plan on a private copy of the state directory (read-only "
              "against live state), so a merge request's plan neither waits for nor touches a running apply.")
@click.option("--terraform-max-stacks", type=click.IntRange(min=0), default=TERRAFORM_MAX_STACKS, show_default=True,
              help="With --base: when more stacks are affected, terraform's changes come from one live scan of "
              "the org instead of a terraform plan per stack (the comment says so; the reconciler compares its "
              "terraform plan with them before applying).")
@cli_errors
def plan_cmd(settings_file: Path | None, config_dir: Path | None, stack_names: tuple[str, ...], as_json: bool,
             markdown_file: Path | None, base_ref: str | None, trace_path: Path | None, private_state: bool,
             terraform_max_stacks: int) -> None:
    """Validate the tree and plan every stack (or --stack ones) against live state.

    Every stack is reported: a stack that could not be planned is an ERROR line saying whether
    the failure is temporary (retry: throttling, 5xx, a held lock) or permanent (access denied,
    no credentials), and the command exits 1. The plan takes the state directory's lock, so it
    never overwrites the saved plan of an apply or reconciler pass running beside it.
    """
    settings = load_cli_settings(settings_file, config_dir)
    shared_state = Path(settings.state_dir).resolve()
    leading: list[str] = []
    extra: list[str] = []
    with _plan_state(settings, private=private_state, quiet=as_json) as settings:
        if base_ref:
            plans, failures, leading, extra = _merge_request_plan(
                settings, base_ref, trace_path, quiet=as_json, markdown_file=markdown_file,
                terraform_max_stacks=terraform_max_stacks, reviewed_in=shared_state)
        else:
            plans, failures = _plan_with_clusters(settings, stack_names, quiet=as_json)
    if as_json:
        entries: list[dict[str, Any]] = [p.as_dict() for p in plans]
        entries += [{"stack": n, "error": f.as_dict()} for n, f in failures.items()]
        click.echo(json.dumps(entries, indent=2, default=str))
    else:
        click.echo(render_text(plans), nl=False)
        _report_failures(failures)
    if markdown_file:
        markdown_file.write_text(render_markdown(plans, leading_sections=leading, extra_sections=extra))
    sys.exit(1 if failures else EXIT_CHANGES if any(not p.is_empty for p in plans) else 0)


def _plan_with_clusters(settings: Settings, stack_names: Sequence[str], *,
                        quiet: bool) -> tuple[list[Plan], dict[StackName, Failure]]:
    """The declared clusters' plan (without --stack) ahead of the stacks' plans."""
    from engines.hyperpod.cluster_executor import cluster_plan

    tree = valid_tree(settings)
    clusters, _ = planned_clusters(settings, tree, quiet=quiet)
    plans, failures, _ = plan_all(settings, stack_names, quiet=quiet, tree=tree, clusters=clusters)
    return ([cluster_plan(clusters)] if clusters and not stack_names else []) + plans, failures


def _validated_base_and_head(settings: Settings, base_ref: str, markdown_file: Path | None
                             ) -> tuple[dict[str, TreeEntry], dict[str, TreeEntry], ValidationReport, ValidationReport]:
    """The base's and the head's files and reports, both valid (and the head removes no managed
    cluster), else the error: an invalid head still gets its comment (the problems, file:line)."""
    from hypergov.gitsource import read_tree_at
    from hypergov.loader import LoadedFiles
    from hypergov.rules.clusters import removed_managed_clusters
    from hypergov.tree_files import read_tree_dir
    from hypergov.validate import held_until_exit, shown_root, validate_files
    from hypergov.validation_markdown import invalid_tree_markdown

    # Base and head share all but the changed files: each file is parsed and checked once, and
    # the base's problems (never shown) name files as the head's do, so that they are shared.
    loaded, shown = LoadedFiles(), shown_root(settings.config_dir)
    with held_until_exit():
        head_files = read_tree_dir(settings.config_dir)
        head_report = validate_files(head_files, display_root=shown, reuse=loaded)
        if not head_report.ok:  # the merge request still gets its comment: the problems, file:line
            if markdown_file:
                markdown_file.write_text(invalid_tree_markdown(head_report.problems))
            raise InvalidTreeError(head_report)
        try:
            where = locate_tree(settings.config_dir)
            base_files = read_tree_at(where.repo, base_ref, where.subdir)
        except (RefNotFoundError, NotInRepositoryError) as exc:
            raise click.UsageError(str(exc)) from exc
        base_report = validate_files(base_files, display_root=shown, reuse=loaded)
    if not base_report.ok:
        raise click.ClickException(f"the tree at {base_ref} is invalid; cannot compare with it")
    removals = list(removed_managed_clusters(base_report.tree, head_report.tree))  # CLU003: base against head
    if removals:
        if markdown_file:
            markdown_file.write_text(invalid_tree_markdown(removals))
        raise InvalidTreeError(ValidationReport(tree=head_report.tree, problems=[*head_report.problems, *removals]))
    return base_files, head_files, base_report, head_report


def _merge_request_plan(
        settings: Settings, base_ref: str, trace: Path | None, *, quiet: bool, markdown_file: Path | None,
        terraform_max_stacks: int = TERRAFORM_MAX_STACKS,
        reviewed_in: Path | None = None) -> tuple[list[Plan], dict[StackName, Failure], list[str], list[str]]:
    """Plans, failures, the comment's sections above the resource tables and those below. An
    invalid head still gets its comment (the problems, file:line) before the error is raised."""
    from capacity.render import render_markdown as capacity_markdown
    from engines.hyperpod.cluster_executor import awaiting_cluster, cluster_plan, live_arns, with_cluster_arns
    from hypergov.change_control import approvals_markdown, required_approvals
    from reconciler.clusters import clusters_markdown
    from reconciler.merge_request import SAMPLE_TRACE, capacity_impact, leading_sections, scope

    base_files, head_files, base_report, head_report = _validated_base_and_head(settings, base_ref, markdown_file)
    head = head_report.tree
    approvals = required_approvals(base_files, head_files, base_report.tree)
    mr = scope(base_report.tree, head)
    clusters, _ = planned_clusters(settings, head, quiet=True)
    arns = live_arns(clusters)  # the stacks bind to each managed cluster's live ARN
    waiting = awaiting_cluster(with_cluster_arns(head, arns))
    engine = cli_engine(settings, with_cluster_arns(head, arns))
    if not quiet:
        click.echo(f"{len(mr.affected.to_plan)} stack(s) affected, {len(mr.affected.removed)} removed, "
                   f"{mr.affected.unchanged} unchanged", err=True)
    from engines.terraform.engine import TerraformEngine

    to_plan = [s for s in mr.affected.to_plan if s not in waiting]
    scanned, scan_note = _scanned_changes(settings, engine, with_cluster_arns(base_report.tree, arns),
                                          with_cluster_arns(head, arns), to_plan, limit=terraform_max_stacks,
                                          quiet=quiet)
    outcomes = (engine.plan_many(to_plan, destroy=mr.affected.removed, progress=_plan_progress(quiet), scanned=scanned)
                if scanned is not None and isinstance(engine, TerraformEngine) else
                engine.plan_many(to_plan, destroy=mr.affected.removed, progress=_plan_progress(quiet)))
    plans, failures = split_outcomes(outcomes)
    plans = [*([cluster_plan(clusters)] if clusters else []), *plans,
             *(Plan(stack=s, engine=engine.name, changes=(), notes=(waiting[s],)) for s in mr.affected.to_plan
               if s in waiting)]
    if reviewed_in is not None and not failures:
        _keep_reviewed(reviewed_in, settings, plans, scanned or {}, base_ref=base_ref, quiet=quiet)
    leading = [*leading_sections(base_report.tree, head_report), *([scan_note] if scan_note else [])]
    extra = [approvals_markdown(approvals)]
    if clusters:  # what the declared clusters' instance groups become, and the GPUs
        extra.append(clusters_markdown(clusters))
    if not quiet:
        click.echo(f"{len(approvals)} changed file(s) need approval (see the Markdown plan)", err=True)
    if mr.capacity_changed:
        diff = capacity_impact(base_report.tree, head, trace=trace or SAMPLE_TRACE, base_ref=base_ref,
                               head_ref="working tree")
        extra.append(capacity_markdown(diff))
        if not quiet:
            click.echo(f"capacity impact simulated on {diff.jobs} jobs: "
                       f"{len(diff.regressions)} team regression(s)", err=True)
    return plans, failures, leading, extra


def _scanned_changes(settings: Settings, engine: Engine, base: GovernanceTree, head: GovernanceTree,
                     stacks: list[StackName], *, limit: int,
                     quiet: bool) -> tuple[dict[str, tuple[ResourceChange, ...]] | None, str | None]:
    """Terraform's changes from the live scan when more than `limit` stacks are affected (the
    terraform engine only), and the comment's note saying so; (None, None) otherwise."""
    from engines.live.scan import scanned_terraform_changes
    from engines.terraform.engine import TerraformEngine

    if len(stacks) <= limit or not isinstance(engine, TerraformEngine):
        return None, None
    changes, scan = scanned_terraform_changes(settings.aws, base, head, stacks,
                                              cache_dir=Path(settings.state_dir) / "graphs")
    if not scan.complete:
        failure = scan.failures[0]
        raise click.ClickException(f"the live scan for the plan is incomplete ({failure.what}: {failure.failure.kind}: "
                                   f"{failure.failure.message}); plan again, or with --terraform-max-stacks "
                                   f"{len(stacks)} to run terraform for every stack")
    if not quiet:
        click.echo(f"{len(stacks)} stacks affected (more than --terraform-max-stacks {limit}): terraform's changes "
                   f"from one live scan, {scan.api_calls} API calls in {scan.seconds:.1f} s", err=True)
    note = (f"> **Resource changes from the live scan.** {len(stacks)} stacks are affected, more than "
            f"`--terraform-max-stacks` ({limit}): terraform's changes were decided from one scan of the live objects "
            f"the base applied ({scan.api_calls} API calls in {scan.seconds:.1f} s), diffed with this tree, not by "
            "`terraform plan` per stack. Before applying, the reconciler plans each stack with terraform and refuses "
            "any whose plan differs from what is shown here.")
    return changes, note


def _keep_reviewed(state_dir: Path, settings: Settings, plans: Sequence[Plan],
                   scanned: dict[str, tuple[ResourceChange, ...]], *, base_ref: str, quiet: bool) -> None:
    """Record what this merge request shows, by its config tree's Git id (a clean tree only)."""
    from reconciler.reviewed import record_reviewed

    try:
        where = locate_tree(settings.config_dir)
        tree_id = config_tree_id(where)
    except NotInRepositoryError:
        return
    if tree_id is None:
        if not quiet:
            click.echo("reviewed plan not recorded: the tree has uncommitted changes", err=True)
        return
    record_reviewed(state_dir, tree_id, plans, base_ref=base_ref,
                    method={p.stack: "live scan" if p.stack in scanned else "terraform" for p in plans})


def report_interrupted(audit: AuditLog, *, say: Callable[[str], None] | None = None) -> None:
    """Record what a killed apply of this state directory left between intent and outcome (said
    on stderr, or to `say`: the reconciler daemon's event log)."""
    from reconciler.write_ahead import resolve_interrupted

    stacks = resolve_interrupted(audit)
    if stacks:
        (say or to_stderr)(f"an earlier apply was interrupted before its outcome was recorded; recorded as "
                            f"interrupted: {', '.join(stacks)} (planned again now)")


def report_audit(audit: AuditLog | None, error: str | None, records: Sequence[dict[str, Any]], *,
                 err: bool = False, say: Callable[[str], None] | None = None) -> None:
    """Say where the records went and push them (a failed push is a warning: they stay local).
    Errors and warnings go to stderr, the rest to stdout unless `err`; everything to `say` when
    given (the reconciler daemon's event log)."""
    if audit is None:
        return

    def echo(line: str, *, to_err: bool) -> None:
        if say is not None:
            say(line)
        else:
            click.echo(line, err=to_err)

    if error:
        echo(f"ERROR {error}", to_err=True)
    if records:
        seqs = f"{records[0]['seq']}-{records[-1]['seq']}" if len(records) > 1 else str(records[0]["seq"])
        echo(f"audit records {seqs} on {audit.store.branch} in {audit.store.repo}", to_err=err)
    pushed = audit.push()
    if pushed.error:
        echo(f"WARNING audit records not pushed ({audit.unpushed()} waiting; pushed with the next write): "
             f"{pushed.error}", to_err=True)
    elif pushed.remote and pushed.pushed:
        echo(f"pushed {pushed.pushed} audit record(s) to {pushed.remote}", to_err=err)


def to_stderr(line: str) -> None:
    click.echo(line, err=True)
