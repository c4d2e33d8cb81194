"""`hypergov reconcile [--watch]`: a reconciler pass, or the loop of passes, from the command line.

One pass exits 0 applied or up to date, 1 refused or failed, 75 busy. With `--watch` nothing a
pass does ends the loop (`reconciler.daemon`); SIGTERM stops it after the running stacks finish
(exit 0), Ctrl-C at once (130).
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.plan import EXIT_BUSY, cli_engine, cli_errors, load_cli_settings
from engines.schedule import STOPPING
from engines.settings import Settings
from hypergov.gitsource import NotInRepositoryError, RefNotFoundError, locate_tree
from hypergov.problems import format_problem
from reconciler.render import apply_line

if TYPE_CHECKING:
    from reconciler.daemon import Decision
    from reconciler.reconcile import PassResult


@click.command("reconcile", epilog="Exit status (one pass): 0 applied or up to date, 1 refused or failed (usage "
               "included), 75 another reconciler pass or hypergov apply holds the state directory. With --watch: "
               "0 after SIGTERM, 130 after Ctrl-C; a failed pass never ends the loop.")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@click.option("--repo", "repo_path", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Governance repository (default: settings audit_repo, else the one holding config_dir).")
@click.option("--branch", default="main", show_default=True, help="Branch whose head is applied.")
@click.option("--watch", "interval", type=click.FloatRange(min=0.1), metavar="SECONDS",
              help="Keep going: a pass every SECONDS until SIGTERM or Ctrl-C (default: one pass). Temporary "
              "failures are retried sooner or later with jittered exponential backoff (capped by --max-backoff); "
              "after a permanent one the loop waits for a new commit on the branch.")
@click.option("--max-backoff", "max_backoff", type=click.FloatRange(min=0.1), default=300.0, show_default=True,
              metavar="SECONDS", help="Longest wait between retries of a temporary failure.")
@cli_errors
def reconcile_cmd(settings_file: Path | None, repo_path: Path | None, branch: str, interval: float | None,
                  max_backoff: float) -> None:
    """Apply the head of the governance branch: what a merge does.

    Reads the tree from the branch's head commit (not the working copy), refuses a tree that
    fails validation, plans only the stacks changed since the last commit applied in full (all
    of them on the first pass; destroys for stacks whose source left the tree), applies them in
    dependency order between an intent and outcome records on the audit branch (settings
    audit_branch, default hypergov/audit; pushed to the repository's remote). A pass that fails is
    retried from the same base next time. One reconciler at a time per state directory.
    SIGTERM lets the stacks being applied finish, records them, and exits 0.
    """
    from reconciler.audit import AuditRepoError, find_audit_repo

    settings = load_cli_settings(settings_file, None)
    try:
        repo = (repo_path or find_audit_repo(settings.config_dir, settings.audit_repo)).resolve()
        where = locate_tree(settings.config_dir, repo=repo)
    except (AuditRepoError, NotInRepositoryError) as exc:
        raise click.UsageError(str(exc)) from exc
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        if interval is None:
            sys.exit(_one_pass(settings, where.repo, where.subdir, branch, stop))
        _watch(settings, where.repo, where.subdir, branch, stop, interval=interval, max_backoff=max_backoff)
    except KeyboardInterrupt:
        click.echo("reconciler stopped (interrupted)", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo("reconciler stopped (SIGTERM)", err=True)


def _run_pass(settings: Settings, repo: Path, subdir: str, branch: str, stop: threading.Event) -> PassResult:
    from reconciler.audit import AuditLog
    from reconciler.reconcile import reconcile_once

    audit = AuditLog.from_settings(settings, (settings.audit_repo or repo).resolve())
    return reconcile_once(repo, branch, subdir, Path(settings.state_dir).resolve(),
                          lambda tree, head: cli_engine(settings, tree, source_commit=head), audit=audit,
                          on_apply=lambda result: click.echo(f"  {apply_line(result)}", err=True), stop=stop)


def _one_pass(settings: Settings, repo: Path, subdir: str, branch: str, stop: threading.Event) -> int:
    from reconciler.reconcile import ReconcilerBusyError

    try:
        outcome = _run_pass(settings, repo, subdir, branch, stop)
    except ReconcilerBusyError as exc:
        click.echo(str(exc), err=True)
        return EXIT_BUSY
    except RefNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    _report_pass(branch, outcome)
    return 0 if outcome.ok or outcome.status == "stopped" else 1


def _watch(settings: Settings, repo: Path, subdir: str, branch: str, stop: threading.Event, *, interval: float,
           max_backoff: float) -> None:
    import git

    from engines.outcomes import Backoff
    from reconciler.daemon import watch

    def head_of() -> str:
        try:
            return str(git.Repo(repo).commit(branch).hexsha)
        except (git.BadName, ValueError) as exc:
            raise RefNotFoundError(f"no branch '{branch}' in {repo}") from exc

    def waiting(decision: Decision) -> None:
        if decision.next != "steady":
            what = "retrying" if decision.next == "retry" else "waiting for a new commit; checking"
            click.echo(f"{branch}: {what} in {decision.delay_s:.1f} s", err=True)

    watch(run_pass=lambda: _run_pass(settings, repo, subdir, branch, stop), head_of=head_of, interval_s=interval,
          backoff=Backoff(base_s=min(2.0, max_backoff), cap_s=max_backoff), stop=stop,
          on_pass=lambda outcome: _report_pass(branch, outcome),
          on_failure=lambda failure: click.echo(f"{branch}: pass failed ({failure.kind}): {failure}", err=True),
          on_wait=waiting)


def _report_pass(branch: str, outcome: PassResult) -> None:
    where = f"{branch}@{outcome.head[:12]}"
    if outcome.interrupted:
        click.echo(f"{where}: an earlier pass was killed between its intent and outcome records; recorded as "
                   f"interrupted and planned again: {', '.join(outcome.interrupted)}", err=True)
    _report_records(where, outcome)
    if outcome.status == "up to date":
        click.echo(f"{where}: up to date")
    elif outcome.status == "invalid":
        click.echo(f"{where}: REFUSED, the tree fails validation; nothing applied", err=True)
        for problem in outcome.problems:
            click.echo(format_problem(problem), err=True)
    else:
        changed = [r for r in outcome.results if r.applied]
        kind = f" ({outcome.failure_kind})" if outcome.failure_kind else ""
        left = sum(1 for r in outcome.results if r.refusal == STOPPING)
        if left:
            kind += f" ({left} stack(s) left for the next pass)"
        click.echo(f"{where}: {outcome.status}{kind}: {len(outcome.plans)} stack(s) planned, {len(changed)} changed"
                   + (f" (since {outcome.base[:12]})" if outcome.base else " (first pass: every stack)"))
        for error in outcome.errors:
            click.echo(f"  ERROR {error}", err=True)


def _report_records(where: str, outcome: PassResult) -> None:
    if outcome.records:
        first, last = outcome.records[0]["seq"], outcome.records[-1]["seq"]
        click.echo(f"{where}: audit records {first}{f'-{last}' if last != first else ''} written", err=True)
    push = outcome.push
    if push is not None and push.error:
        click.echo(f"{where}: WARNING {outcome.unpushed} audit record(s) not pushed (kept, pushed by a later pass): "
                   f"{push.error}", err=True)
    elif push is not None and push.pushed:
        click.echo(f"{where}: pushed {push.pushed} audit record(s) to {push.remote}", err=True)
