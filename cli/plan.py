"""`hypergov plan`, `hypergov apply`, `hypergov drift`: the engine from the command line, and the
helpers every engine command shares (settings, the state lock, the error guard).

Exit codes follow `terraform plan -detailed-exitcode`, so CI can branch on them: 0 nothing to do,
2 changes planned (plan) or drift found (drift), 1 any error or refusal (usage errors included),
75 busy (another apply or reconciler pass holds the state directory); `plan --base --post` also exits
1 when the plan could not be posted to its merge request (`cli.plan_post`). A multi-stack command
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
from cli.output import echo, write_report
from cli.plan_post import PlanPoster, failure_reason, plan_poster, post_options
from engines.outcomes import Failure, HypergovError, classify
from engines.plan import Plan, StackName, failure_lines, split_outcomes
from engines.settings import Settings, SettingsError, load_settings
from engines.terraform.errors import TerraformError
from hypergov.gitsource import NotInRepositoryError, RefNotFoundError
from hypergov.model.tree import GovernanceTree
from hypergov.validate import InvalidTreeError
from reconciler.merge_request import TERRAFORM_MAX_STACKS
from reconciler.render import render_markdown, render_text, summary_line

if TYPE_CHECKING:  # the engine pulls in Pulumi; `hypergov --help` and `validate` must stay fast
    from engines.hyperpod.cluster_executor import Applied, ClusterExecutor, PlannedCluster
    from engines.protocol import Engine
    from reconciler.audit import AuditLog
    from reconciler.audit_store import PushOutcome
    from reconciler.merge_request_plan import MergeRequestPlan

EXIT_CHANGES = 2
EXIT_BUSY = 75
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
        echo(str(exc), err=True)
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
                echo(f"state: {shared} (locked while planning)", err=True)
            yield settings
        return
    with tempfile.TemporaryDirectory(prefix="hypergov-plan-") as tmp:
        copy_for_planning(shared, Path(tmp))
        if not quiet:
            echo(f"state: a private copy of {shared} (read-only against live state; nothing written back)",
                 err=True)
        # Without the state lock: a copy's local state has no other user, and a shared S3 state's
        # lock belongs to whoever applies (a plan writes no state).
        yield settings.model_copy(update={"state_dir": Path(tmp), "terraform": settings.terraform.model_copy(
            update={"lock_while_planning": False})})


def _plan_progress(quiet: bool) -> Callable[[StackName, Plan | Failure], None]:
    def progress(stack: StackName, outcome: Plan | Failure) -> None:
        if not quiet:
            text = summary_line(outcome) if isinstance(outcome, Plan) else f"{stack}: {outcome.kind} error"
            echo(f"planned {text}", err=True)
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
        echo(f"ERROR {line}", err=True)


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


PLAN_EXIT = ("Exit status: 0 no changes, 2 changes planned, 1 any error (usage included; with --post, also a plan "
             "that could not be posted: the message says what the plan itself gave), 75 state directory busy.")


NOT_REFRESHED = ("Planned with --no-refresh: against each stack's state as last applied, without reading the "
                 "objects again, so drift is not shown here (`hypergov drift` reports it; the reconciler refreshes "
                 "before it applies).")


@click.command("plan", epilog=PLAN_EXIT)
@_common
@click.option("--json", "as_json", is_flag=True, help="Print the plans as JSON (failed stacks as error entries).")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the plan as Markdown (for a merge-request comment).")
@click.option("--base", "base_ref", help="Git ref the change is compared with (a merge request's target): plan "
              "only the stacks it affects, destroys for removed ones, and the capacity impact when quotas change.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Job trace for the capacity impact (default: the jobs `hypergov usage collect` saw in the last "
              "30 days when it saw any, else the bundled sample trace).")
@click.option("--private-state", is_flag=True, help="Plan on a private copy of the state directory (read-only "
              "against live state), so a merge request's plan neither waits for nor touches a running apply.")
@click.option("--refresh/--no-refresh", default=True, show_default=True, help="--no-refresh: plan against the "
              "state as last applied, without reading every object again (terraform's -refresh=false): faster (the "
              "AWS provider waits 5 s before each budget read), but drift is not shown (the drift scan reports it; "
              "the reconciler's plan before it applies always refreshes).")
@click.option("--terraform-max-stacks", type=click.IntRange(min=0), default=TERRAFORM_MAX_STACKS, show_default=True,
              help="With --base: when more stacks are affected, terraform's changes come from one live scan of "
              "the org instead of a terraform plan per stack (the comment says so; the reconciler compares its "
              "terraform plan with them before applying).")
@post_options
@cli_errors
def plan_cmd(settings_file: Path | None, config_dir: Path | None, stack_names: tuple[str, ...], as_json: bool,
             markdown_file: Path | None, base_ref: str | None, trace_path: Path | None, private_state: bool,
             refresh: bool, terraform_max_stacks: int, post: bool = False, git_host: str | None = None,
             api_url: str | None = None, host_project: str | None = None, merge_request: int | None = None,
             head_sha: str | None = None,
             token_file: Path | None = None) -> None:
    """Validate the tree and plan every stack (or --stack ones) against live state.

    Every stack is reported: a stack that could not be planned is an ERROR line saying whether
    the failure is temporary (retry: throttling, 5xx, a held lock) or permanent (access denied,
    no credentials), and the command exits 1. The plan takes the state directory's lock, so it
    never overwrites the saved plan of an apply or reconciler pass running beside it.
    """
    poster = plan_poster(base_ref=base_ref, markdown_file=markdown_file, git_host=git_host, api_url=api_url,
                         project=host_project, merge_request=merge_request, head_sha=head_sha,
                         token_file=token_file) if post else None
    settings = load_cli_settings(settings_file, config_dir)
    if not refresh:
        settings = settings.model_copy(update={"terraform": settings.terraform.model_copy(
            update={"refresh_while_planning": False})})
    leading: list[str] = []
    extra: list[str] = []
    with _plan_state(settings, private=private_state, quiet=as_json) as planning:
        if base_ref:
            if poster is not None:
                poster.planning()
            planned = _merge_request_plan(planning, base_ref, trace_path, quiet=as_json, markdown_file=markdown_file,
                                          terraform_max_stacks=terraform_max_stacks, shared=settings, poster=poster)
            plans, failures, leading, extra = planned.plans, planned.failures, planned.leading, planned.extra
        else:
            plans, failures = _plan_with_clusters(planning, stack_names, quiet=as_json)
    if not refresh:  # the reader must know that drift would not show here
        leading = [NOT_REFRESHED, *leading]
        if not as_json:
            echo(NOT_REFRESHED, err=True)
    if as_json:
        entries: list[dict[str, Any]] = [p.as_dict() for p in plans]
        entries += [{"stack": n, "error": f.as_dict()} for n, f in failures.items()]
        echo(json.dumps(entries, indent=2, default=str))
    else:
        echo(render_text(plans), nl=False)
        _report_failures(failures)
    if failures:  # the comment says which stacks could not be planned, as the command's ERROR lines do
        extra = [*extra, "### Stacks that could not be planned\n\n" + "\n".join(
            f"- {line}" for line in failure_lines(failures))]
    markdown = render_markdown(plans, leading_sections=leading, extra_sections=extra)
    if markdown_file:
        write_report(markdown_file, markdown)
    status = 1 if failures else EXIT_CHANGES if any(not p.is_empty for p in plans) else 0
    if poster is not None:
        poster.planned(plans, failures, markdown)
        status = poster.report(status)
    sys.exit(status)


def _merge_request_plan(settings: Settings, base_ref: str, trace: Path | None, *, quiet: bool,
                        markdown_file: Path | None, terraform_max_stacks: int, shared: Settings,
                        poster: PlanPoster | None = None) -> MergeRequestPlan:
    """The merge request's plan (`reconciler.merge_request_plan`), its reviewed plan recorded in
    the shared record store of `shared` (the settings before any private copy of the state). An
    invalid head still gets its comment (the problems, file:line) before the error is raised, and
    with --post the merge request gets it too (any other error: a comment saying so)."""
    from cli.usage import collected_trace_file
    from engines.factory import reconciler_records
    from reconciler.merge_request_plan import InvalidMergeRequestError, plan_merge_request

    try:
        def collected() -> Path | None:  # read only when the capacity changed (numpy loads with it)
            return collected_trace_file(shared, say=None if quiet else to_stderr)

        return plan_merge_request(settings, base_ref, trace=trace or collected,
                                  terraform_max_stacks=terraform_max_stacks,
                                  records=reconciler_records(shared), say=None if quiet else to_stderr,
                                  progress=_plan_progress(quiet))
    except InvalidMergeRequestError as exc:
        if markdown_file:
            write_report(markdown_file, exc.comment)
        if poster is not None:
            errors = sum(1 for p in exc.report.problems if p.severity.value == "error")
            poster.failed(f"the changed tree is invalid ({errors} problem(s))", comment=exc.comment)
            poster.report(1)
        raise
    except Exception as exc:
        if poster is not None:
            poster.failed(failure_reason(exc))
            poster.report(1)
        raise


def _plan_with_clusters(settings: Settings, stack_names: Sequence[str], *,
                        quiet: bool) -> tuple[list[Plan], dict[StackName, Failure]]:
    """The declared clusters' plan (without --stack) ahead of the stacks' plans."""
    from engines.hyperpod.cluster_executor import cluster_plan

    tree = valid_tree(settings)
    clusters, _ = planned_clusters(settings, tree, quiet=quiet)
    plans, failures, _ = plan_all(settings, stack_names, quiet=quiet, tree=tree, clusters=clusters)
    return ([cluster_plan(clusters)] if clusters and not stack_names else []) + plans, failures


def report_interrupted(audit: AuditLog, *, say: Callable[[str], None] | None = None) -> None:
    """Record what a killed apply of this state directory left between intent and outcome (said
    on stderr, or to `say`: the reconciler daemon's event log)."""
    from reconciler.write_ahead import resolve_interrupted

    stacks = resolve_interrupted(audit)
    if stacks:
        (say or to_stderr)(f"an earlier apply was interrupted before its outcome was recorded; recorded as "
                            f"interrupted: {', '.join(stacks)} (planned again now)")


def report_audit(audit: AuditLog | None, error: str | None, records: Sequence[dict[str, Any]],
                 push: PushOutcome | None, *, err: bool = False) -> None:
    """Say where the records went and how their push went (`reconciler.rollout.publish` pushed
    them). Errors and warnings go to stderr, the rest to stdout unless `err`."""
    from reconciler.render import audit_lines

    for line, warning in audit_lines(audit, error, records, push):
        echo(line, err=warning or err)


def to_stderr(line: str) -> None:
    echo(line, err=True)
