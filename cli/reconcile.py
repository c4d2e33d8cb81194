"""`hypergov reconcile [--watch]`: a reconciler pass, or the loop of passes, from the command line.

One pass exits 0 applied or up to date, 1 refused (an invalid tree, a rewritten history) or failed,
75 busy. With `--watch` nothing a pass does ends the loop (`reconciler.daemon`); SIGTERM stops it
after the running stacks finish (exit 0), Ctrl-C at once (130). `--repo` is a local repository
(read in place) or a URL the reconciler follows through its own clone (`reconciler.remote`);
`--webhook-port` wakes the loop on a push (`reconciler.webhook`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.follow import Followed, followed_source
from cli.plan import EXIT_BUSY, cli_engine, cli_errors, load_cli_settings
from engines.schedule import STOPPING
from engines.settings import Settings
from hypergov.gitsource import RefNotFoundError
from hypergov.problems import format_problem

if TYPE_CHECKING:
    from reconciler.daemon import Decision
    from reconciler.reconcile import PassResult
    from reconciler.webhook import Verdict

EPILOG = ("Exit status (one pass): 0 applied or up to date, 1 refused or failed (an invalid tree, a rewritten "
          "history, a remote that cannot be fetched, usage errors), 75 another reconciler pass or hypergov apply "
          "holds the state directory. With --watch: 0 after SIGTERM, 130 after Ctrl-C; a failed pass (a remote "
          "down included) never ends the loop.")


@click.command("reconcile", epilog=EPILOG)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@click.option("--repo", "repo_arg", metavar="PATH|URL",
              help="Governance repository: a local path (read in place; default: settings audit_repo, else the one "
              "holding config_dir), or a URL (https://, ssh://, git://, file://, user@host:path) followed through "
              "the reconciler's own clone in <state_dir>/repo, fetched before every pass. Credentials the way git "
              "takes them (credential helper, GIT_SSH_COMMAND, GIT_ASKPASS); with a URL, config_dir is the tree's "
              "path inside the repository.")
@click.option("--branch", default="main", show_default=True, help="Branch whose head is applied.")
@click.option("--allow-rewrite", is_flag=True, help="Apply a head that does not contain the commit applied last "
              "(after a force-push or reset); without it such a pass is refused (exit 1).")
@click.option("--watch", "interval", type=click.FloatRange(min=0.1), metavar="SECONDS",
              help="Keep going: a pass every SECONDS until SIGTERM or Ctrl-C (default: one pass). Temporary "
              "failures (a remote or AWS that cannot be reached, a held lock) are retried with jittered "
              "exponential backoff (capped by --max-backoff); after a permanent one the loop waits for a new "
              "commit on the branch.")
@click.option("--max-backoff", "max_backoff", type=click.FloatRange(min=0.1), default=300.0, show_default=True,
              metavar="SECONDS", help="Longest wait between retries of a temporary failure.")
@click.option("--webhook-port", type=click.IntRange(min=0, max=65535), metavar="PORT",
              help="With --watch: accept GitHub (X-Hub-Signature-256) and GitLab (X-Gitlab-Token) push events on "
              "this port; a push to --branch starts a pass at once (the periodic pass stays). The shared secret "
              "comes from HYPERGOV_WEBHOOK_SECRET or --webhook-secret-file, never from the command line.")
@click.option("--webhook-host", default="127.0.0.1", show_default=True, help="Address the webhook listens on.")
@click.option("--webhook-secret-file", type=click.Path(dir_okay=False, path_type=Path),
              help="File holding the webhook's shared secret (default: HYPERGOV_WEBHOOK_SECRET).")
@cli_errors
def reconcile_cmd(settings_file: Path | None, repo_arg: str | None, branch: str, allow_rewrite: bool,
                  interval: float | None, max_backoff: float, webhook_port: int | None, webhook_host: str,
                  webhook_secret_file: Path | None) -> None:
    """Apply the head of the governance branch: what a merge does.

    Reads the tree from the branch's head commit (not the working copy), refuses a tree that
    fails validation and a head that does not contain the commit applied last (unless
    --allow-rewrite), plans only the stacks changed since the last commit applied in full (all
    of them on the first pass; destroys for stacks whose source left the tree), applies them in
    dependency order between an intent and outcome records on the audit branch (settings
    audit_branch, default hypergov/audit; pushed to the repository's remote). A pass that fails is
    retried from the same base next time. One reconciler at a time per state directory.
    SIGTERM lets the stacks being applied finish, records them, and exits 0.
    """
    if webhook_port is not None and interval is None:
        raise click.UsageError("--webhook-port needs --watch SECONDS (a single pass has nothing to wake)")
    secret = _webhook_secret(webhook_secret_file) if webhook_port is not None else None
    settings = load_cli_settings(settings_file, None)
    followed = followed_source(settings, repo_arg, branch)
    stop, wake = threading.Event(), threading.Event()

    def terminate(*_: object) -> None:
        stop.set()
        wake.set()  # a wait ends at once

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        if interval is None:
            sys.exit(_one_pass(settings, followed, stop, allow_rewrite=allow_rewrite))
        with ExitStack() as running:
            if webhook_port is not None and secret is not None:
                _serve_webhook(running, webhook_host, webhook_port, secret=secret, branch=branch, wake=wake)
            _watch(settings, followed, stop, wake, interval=interval, max_backoff=max_backoff,
                   allow_rewrite=allow_rewrite)
    except KeyboardInterrupt:
        click.echo("reconciler stopped (interrupted)", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo("reconciler stopped (SIGTERM)", err=True)


def _webhook_secret(secret_file: Path | None) -> bytes:
    from reconciler.webhook import WebhookSecretError, load_secret

    try:
        return load_secret(os.environ, secret_file)
    except WebhookSecretError as exc:
        raise click.UsageError(str(exc)) from exc


def _serve_webhook(running: ExitStack, host: str, port: int, *, secret: bytes, branch: str,
                   wake: threading.Event) -> None:
    from reconciler.webhook import serving

    def heard(client: str, verdict: Verdict) -> None:
        level = "REFUSED " if verdict.status in (401, 408, 411, 413) else ""
        click.echo(f"webhook: {level}{verdict.status} from {client}: {verdict.message}", err=True)

    try:
        server = running.enter_context(serving(host, port, secret=secret, branch=branch, wake=wake, on_verdict=heard))
    except OSError as exc:
        raise click.UsageError(f"--webhook-port {port}: cannot listen on {host}:{port} ({exc.strerror})") from exc
    click.echo(f"webhook: listening on http://{host}:{server.server_address[1]}/", err=True)


def _run_pass(settings: Settings, followed: Followed, stop: threading.Event, *, allow_rewrite: bool,
              fetch: bool) -> PassResult:
    from reconciler.audit import AuditLog
    from reconciler.reconcile import PassOptions, reconcile_once
    from reconciler.render import apply_line

    # With a URL the records go on the audit branch of the reconciler's clone, pushed to the remote.
    audit = AuditLog.from_settings(settings, (settings.audit_repo or followed.repo).resolve())
    options = PassOptions(fetch=followed.clone.fetch if fetch and followed.clone else None,
                          allow_rewrite=allow_rewrite)
    return reconcile_once(followed.repo, followed.branch, followed.subdir, followed.state_dir,
                          lambda tree, head: cli_engine(settings, tree, source_commit=head), audit=audit,
                          on_apply=lambda result: click.echo(f"  {apply_line(result)}", err=True), stop=stop,
                          options=options)


def _one_pass(settings: Settings, followed: Followed, stop: threading.Event, *, allow_rewrite: bool) -> int:
    from reconciler.reconcile import ReconcilerBusyError

    try:
        outcome = _run_pass(settings, followed, stop, allow_rewrite=allow_rewrite, fetch=True)
    except ReconcilerBusyError as exc:
        click.echo(str(exc), err=True)
        return EXIT_BUSY
    except RefNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    _report_pass(followed.branch, outcome)
    return 0 if outcome.ok or outcome.status == "stopped" else 1


def _watch(settings: Settings, followed: Followed, stop: threading.Event, wake: threading.Event, *, interval: float,
           max_backoff: float, allow_rewrite: bool) -> None:
    from engines.outcomes import Backoff
    from reconciler.daemon import watch

    branch = followed.branch

    def waiting(decision: Decision) -> None:
        if decision.next != "steady":
            what = "retrying" if decision.next == "retry" else "waiting for a new commit; checking"
            click.echo(f"{branch}: {what} in {decision.delay_s:.1f} s", err=True)

    # `head_of` runs first in every round and fetches a remote; the pass that follows reads what it fetched.
    watch(run_pass=lambda: _run_pass(settings, followed, stop, allow_rewrite=allow_rewrite, fetch=False),
          head_of=followed.fetch_head, interval_s=interval,
          backoff=Backoff(base_s=min(2.0, max_backoff), cap_s=max_backoff), stop=stop,
          on_pass=lambda outcome: _report_pass(branch, outcome),
          on_failure=lambda failure: click.echo(f"{branch}: pass failed ({failure.kind}): {failure}", err=True),
          on_wait=waiting, wake=wake)


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
    elif outcome.status == "rewritten":
        click.echo(f"{where}: REFUSED, {outcome.refusal}", err=True)
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
    from reconciler.remote import mask_url

    if outcome.records:
        first, last = outcome.records[0]["seq"], outcome.records[-1]["seq"]
        click.echo(f"{where}: audit records {first}{f'-{last}' if last != first else ''} written", err=True)
    push = outcome.push
    if push is not None and push.error:  # git's words may hold the remote's URL: masked
        click.echo(f"{where}: WARNING {outcome.unpushed} audit record(s) not pushed (kept, pushed by a later pass): "
                   f"{mask_url(push.error)}", err=True)
    elif push is not None and push.pushed:
        click.echo(f"{where}: pushed {push.pushed} audit record(s) to {push.remote}", err=True)
