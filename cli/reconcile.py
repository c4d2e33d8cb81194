"""`hypergov reconcile [--watch]`: a reconciler pass, or the loop of passes, from the command line.

One pass exits 0 applied or up to date, 1 refused (an invalid tree, a rewritten history) or failed,
75 busy. With `--watch` nothing a pass does ends the loop (`reconciler.daemon`); SIGTERM stops it
after the running stacks finish (exit 0), Ctrl-C at once (130). `--repo` is a local repository
(read in place) or a URL the reconciler follows through its own clone (`reconciler.remote`);
`--webhook-port` wakes the loop on a push (`reconciler.webhook`). The daemon's options (metrics
port, JSON logs, scheduled drift) are checked here; what each pass says and counts is `cli.watch`.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cli.follow import followed_source
from cli.plan import EXIT_BUSY, cli_errors, load_cli_settings
from cli.watch import Daemon, DriftOptions, audit_repo_of
from engines.settings import Settings
from hypergov.gitsource import RefNotFoundError
from reconciler.drift_schedule import DURATION_HELP, parse_duration
from reconciler.logs import EventLog, LogFormat, configure
from reconciler.metrics import ReconcilerMetrics

if TYPE_CHECKING:
    from reconciler.notify_send import Notifier
    from reconciler.observe_http import ObserveServer
    from reconciler.webhook import Verdict


class Duration(click.ParamType[float, Any]):
    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@dataclass(frozen=True)
class DaemonOptions:
    metrics_port: int | None
    metrics_host: str
    drift: DriftOptions | None

    @classmethod
    def checked(cls, *, interval: float | None, metrics_port: int | None, metrics_host: str,
                drift_every: float | None, remediate: bool, report: Path | None) -> DaemonOptions:
        """The daemon-only options make sense only with --watch (and the drift ones with --drift-every)."""
        daemon_only = [name for name, given in (("--metrics-port", metrics_port is not None),
                                                ("--drift-every", drift_every is not None)) if given]
        if daemon_only and interval is None:
            raise click.UsageError(f"{' and '.join(daemon_only)} need --watch SECONDS (they belong to the daemon)")
        needs_drift = [name for name, given in (("--remediate-drift", remediate), ("--drift-report", report))
                       if given]
        if needs_drift and drift_every is None:
            raise click.UsageError(f"{' and '.join(needs_drift)} need --drift-every DURATION")
        drift = DriftOptions(drift_every, remediate, report) if drift_every is not None else None
        return cls(metrics_port, metrics_host, drift)


EPILOG = ("Exit status (one pass): 0 applied or up to date, 1 refused or failed (an invalid tree, a rewritten "
          "history, a remote that cannot be fetched, usage errors), 75 another reconciler pass or hypergov apply "
          "holds the state directory. With --watch: 0 after SIGTERM, 130 after Ctrl-C; a failed pass (a remote "
          "down included) or drift scan never ends the loop. With --metrics-port: GET /metrics "
          "(Prometheus), /healthz (200 while the process runs), /readyz (503 with the reason after a permanent "
          "failure of the last pass or drift scan).")


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
@click.option("--metrics-port", type=click.IntRange(0, 65535), metavar="PORT",
              help="With --watch: serve /metrics, /healthz and /readyz on this port (0: any free port, logged).")
@click.option("--metrics-host", default="127.0.0.1", show_default=True,
              help="Address the metrics port listens on (0.0.0.0 in a container).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: lines for people; json: one JSON object per event on stderr (ts, level, event, branch, "
              "commit, stack and the event's fields).")
@click.option("--drift-every", type=Duration(), metavar="DURATION",
              help=f"With --watch: run the live drift scan against the last applied tree in the gaps between "
              f"passes, at most this often ({DURATION_HELP}).")
@click.option("--remediate-drift", is_flag=True, help="Repair what a scheduled scan finds changed, missing or "
              "unbounded by an audited apply, as drift --remediate does.")
@click.option("--drift-report", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Rewrite this Markdown report (atomically) after each scheduled scan.")
@cli_errors
def reconcile_cmd(settings_file: Path | None, repo_arg: str | None, branch: str, allow_rewrite: bool,
                  interval: float | None, max_backoff: float, webhook_port: int | None, webhook_host: str,
                  webhook_secret_file: Path | None, metrics_port: int | None, metrics_host: str,
                  log_format: LogFormat, drift_every: float | None, remediate_drift: bool,
                  drift_report: Path | None) -> None:
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
    options = DaemonOptions.checked(interval=interval, metrics_port=metrics_port, metrics_host=metrics_host,
                                    drift_every=drift_every, remediate=remediate_drift, report=drift_report)
    secret = _webhook_secret(webhook_secret_file) if webhook_port is not None else None
    settings = load_cli_settings(settings_file, None)
    followed = followed_source(settings, repo_arg, branch)
    log = EventLog(configure(log_format), branch=branch)
    stop, wake = threading.Event(), threading.Event()
    daemon = Daemon(settings=settings, repo=followed.repo, subdir=followed.subdir, branch=branch, stop=stop, log=log,
                    metrics=_metrics(settings, followed.repo), drift=options.drift, followed=followed,
                    allow_rewrite=allow_rewrite, notifier=_notifier(settings))

    def terminate(*_: object) -> None:
        stop.set()
        wake.set()  # a wait ends at once

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        if interval is None:
            sys.exit(_one_pass(daemon))
        with ExitStack() as running:
            if webhook_port is not None and secret is not None:
                _serve_webhook(running, daemon, webhook_host, webhook_port, secret=secret, wake=wake)
            if options.metrics_port is not None:
                running.callback(_serve(daemon, options.metrics_host, options.metrics_port).close)
            _watch(daemon, wake, interval=interval, max_backoff=max_backoff)
    except KeyboardInterrupt:
        log.event("reconciler.stopped", "reconciler stopped (interrupted)", reason="interrupted")
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
        daemon.close()
    log.event("reconciler.stopped", "reconciler stopped (SIGTERM)", reason="SIGTERM")


def _webhook_secret(secret_file: Path | None) -> bytes:
    from reconciler.webhook import WebhookSecretError, load_secret

    try:
        return load_secret(os.environ, secret_file)
    except WebhookSecretError as exc:
        raise click.UsageError(str(exc)) from exc


def _serve_webhook(running: ExitStack, daemon: Daemon, host: str, port: int, *, secret: bytes,
                   wake: threading.Event) -> None:
    import logging

    from reconciler.webhook import serving

    branch = daemon.branch

    def heard(client: str, verdict: Verdict) -> None:
        refused = verdict.status in (401, 408, 411, 413)
        daemon.log.event("webhook.delivery", f"webhook: {'REFUSED ' if refused else ''}{verdict.status} from {client}: "
                         f"{verdict.message}", level=logging.WARNING if refused else logging.INFO,
                         status=verdict.status, client=client)

    try:
        server = running.enter_context(serving(host, port, secret=secret, branch=branch, wake=wake, on_verdict=heard))
    except OSError as exc:
        raise click.UsageError(f"--webhook-port {port}: cannot listen on {host}:{port} ({exc.strerror})") from exc
    daemon.log.event("webhook.listening", f"webhook: listening on http://{host}:{server.server_address[1]}/",
                     host=host, port=server.server_address[1])


def _metrics(settings: Settings, repo: Path) -> ReconcilerMetrics:
    from reconciler.audit_store import AuditWriteError
    from reconciler.status import unpushed_records

    audit_repo = audit_repo_of(settings, repo)

    def unpushed() -> float:
        try:
            return unpushed_records(audit_repo, settings.audit_branch)
        except AuditWriteError:  # Git cannot read the branch now: the gauge says unknown, the scrape still answers
            return math.nan

    return ReconcilerMetrics(unpushed=unpushed)


def _notifier(settings: Settings) -> Notifier | None:
    """The daemon's notifier when settings name a sink; SNS topics through the settings' AWS
    clients, in the topic's own account and region."""
    from engines.aws_clients import AwsClients
    from reconciler.notify_send import Notifier

    if not settings.notifications.sinks:
        return None
    topics = [s.topic_arn for s in settings.notifications.sinks if s.topic_arn]
    clients = AwsClients(settings=settings.aws, partition=topics[0].split(":")[1] if topics else "aws")

    def sns_for(topic_arn: str) -> Any:
        region, account = topic_arn.split(":")[3:5]
        return clients.client("sns", region=region, account=account)

    return Notifier.for_state_dir(settings.notifications, Path(settings.state_dir).resolve(), sns_for=sns_for)


def _serve(daemon: Daemon, host: str, port: int) -> ObserveServer:
    from reconciler.observe_http import serve

    try:
        server = serve(daemon.metrics, host=host, port=port)
    except OSError as exc:  # taken, or not an address of this machine
        raise click.UsageError(f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}; choose another "
                               "--metrics-port (0 picks a free one) or --metrics-host") from exc
    daemon.log.event("metrics.listening", f"metrics on http://{host}:{server.port}/metrics (/healthz, /readyz)",
                     host=host, port=server.port)
    return server


def _one_pass(daemon: Daemon) -> int:
    from reconciler.reconcile import ReconcilerBusyError

    try:
        outcome = daemon.run_pass()
    except ReconcilerBusyError as exc:
        daemon.log.event("pass.failed", str(exc), kind="temporary", reason="busy")
        return EXIT_BUSY
    except RefNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    daemon.passed(outcome)
    return 0 if outcome.ok or outcome.status == "stopped" else 1


def _watch(daemon: Daemon, wake: threading.Event, *, interval: float, max_backoff: float) -> None:
    from engines.outcomes import Backoff
    from reconciler.daemon import watch

    daemon.log.event("reconciler.started", "", repo=str(daemon.repo), interval_s=interval,
                     drift_every_s=daemon.drift.every_s if daemon.drift else None)
    watch(run_pass=daemon.run_pass, head_of=daemon.head_of, interval_s=interval,
          backoff=Backoff(base_s=min(2.0, max_backoff), cap_s=max_backoff), stop=daemon.stop,
          on_pass=daemon.passed, on_failure=daemon.failed, on_wait=daemon.waiting, between=daemon.between,
          wake=wake)

