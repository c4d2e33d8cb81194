"""The glue of `hypergov reconcile [--watch]`: what each pass, failure and wait says (the event
log, text or JSON), what it counts (the metrics), and the scheduled drift scan in the gaps
between passes. `reconciler.daemon.watch` is the loop; this module only observes it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.outcomes import Failure, classify
from engines.settings import Settings
from hypergov.problems import format_problem
from hypergov.redaction import redact
from reconciler.logs import EventLog
from reconciler.metrics import ReconcilerMetrics, apply_result, drift_counts
from reconciler.render import apply_line

if TYPE_CHECKING:
    from cli.follow import Followed
    from engines.live.items import LiveScan
    from engines.objects import RecordStore
    from engines.plan import ApplyResult
    from reconciler.audit import AuditLog
    from reconciler.daemon import Decision
    from reconciler.notify_send import Delivery, Notifier
    from reconciler.pass_result import PassResult
    from reconciler.repair import ComparedTree
    from reconciler.replicas import Replica


def audit_repo_of(settings: Settings, repo: Path) -> Path:
    """Where the daemon records audit records: settings audit_repo, else the governance repository."""
    return (settings.audit_repo or repo).resolve()


def report_pass(log: EventLog, outcome: PassResult, *, seconds: float) -> None:
    """The end of a pass: one summary event, then one per problem or error."""
    log = log.bind(commit=outcome.head)
    where = f"{log.bound.get('branch')}@{outcome.head[:12]}"
    common: dict[str, Any] = {"status": outcome.status, "base": outcome.base, "duration_s": round(seconds, 3)}
    if outcome.interrupted:
        log.event("audit.interrupted", f"{where}: an earlier pass was killed between its intent and outcome records; "
                  f"recorded as interrupted and planned again: {', '.join(outcome.interrupted)}",
                  level=logging.WARNING, stacks=list(outcome.interrupted))
    report_records(log, where, outcome)
    if outcome.review == "unreviewed":
        log.event("review.unreviewed", f"{where}: unreviewed: no merge request's plan of this config tree was "
                  "recorded (`hypergov plan --base`); the intent record says so", level=logging.WARNING,
                  review="unreviewed")
    if outcome.status == "up to date":
        log.event("pass.end", f"{where}: up to date", to_stdout=True, **common)
        return
    if outcome.status == "invalid":
        log.event("pass.end", f"{where}: REFUSED, the tree fails validation; nothing applied", level=logging.ERROR,
                  failure_kind="permanent", problems=len(outcome.problems), **common)
        for problem in outcome.problems:
            log.event("tree.problem", format_problem(problem), level=logging.ERROR, path=problem.pos.file,
                      rule=problem.rule)
        return
    if outcome.status == "rewritten":
        log.event("pass.end", f"{where}: REFUSED, {outcome.refusal}", level=logging.ERROR, failure_kind="permanent",
                  **common)
        return
    changed = [r for r in outcome.results if r.applied]
    kind = f" ({outcome.failure_kind})" if outcome.failure_kind else ""
    left = sum(1 for r in outcome.results if r.refusal is not None and r.refusal.kind == "stopping")
    if left:
        kind += f" ({left} stack(s) left for the next pass)"
    log.event("pass.end", f"{where}: {outcome.status}{kind}: {len(outcome.plans)} stack(s) planned, {len(changed)} "
              "changed" + (f" (since {outcome.base[:12]})" if outcome.base else " (first pass: every stack)"),
              level=logging.INFO if outcome.ok or outcome.status == "stopped" else logging.ERROR, to_stdout=True,
              planned=len(outcome.plans), changed=len(changed), left=left, failure_kind=outcome.failure_kind,
              **common)
    for error in outcome.errors:
        log.event("pass.error", f"  ERROR {error}", level=logging.ERROR)


def report_records(log: EventLog, where: str, outcome: PassResult) -> None:
    """The audit records the pass wrote and how their push went (a failed push is a warning: the
    records stay local and go with a later pass's push)."""
    if outcome.records:
        first, last = outcome.records[0]["seq"], outcome.records[-1]["seq"]
        log.event("audit.records", f"{where}: audit records {first}{f'-{last}' if last != first else ''} written",
                  first_seq=first, last_seq=last)
    from reconciler.remote import mask_url

    push = outcome.push
    if push is not None and push.error:  # git's words may hold the remote's URL: masked
        error = mask_url(push.error)
        log.event("audit.push_failed", f"{where}: WARNING {outcome.unpushed} audit record(s) not pushed (kept, "
                  f"pushed by a later pass): {error}", level=logging.WARNING, unpushed=outcome.unpushed,
                  remote=mask_url(push.remote) if push.remote else None, error=error)
    elif push is not None and push.pushed:
        log.event("audit.pushed", f"{where}: pushed {push.pushed} audit record(s) to {push.remote}",
                  pushed=push.pushed, remote=push.remote)
    if push is not None and push.checkpoint_error:
        log.event("audit.checkpoint_failed", f"{where}: the audit checkpoint was not published (the next one vouches "
                  f"for the same records): {push.checkpoint_error}", level=logging.ERROR, error=push.checkpoint_error)


def report_apply(log: EventLog, result: ApplyResult) -> None:
    log.bind(stack=result.stack).event(
        "stack.applied", f"  {apply_line(result)}", level=logging.INFO if result.ok else logging.ERROR,
        result=apply_result(result), changes=len(result.applied), failed=len(result.failed), failure=result.failure)


@dataclass(frozen=True)
class DriftOptions:
    every_s: float
    remediate: bool
    report: Path | None


@dataclass
class Daemon:
    """One reconciler's observers: passes are timed, reported and counted; in the gaps between
    them the drift scan runs when due."""

    settings: Settings
    repo: Path
    subdir: str
    branch: str
    stop: threading.Event
    log: EventLog
    metrics: ReconcilerMetrics
    drift: DriftOptions | None = None
    followed: Followed | None = None  # a remote's clone is fetched by head_of (None: `repo` read in place)
    allow_rewrite: bool = False
    notifier: Notifier | None = None  # settings notifications (None: no sink configured)
    clock: Callable[[], float] = time.monotonic
    _started: float | None = None
    _head: str | None = None
    _last_scan: float | None = None
    _last_alive: float | None = None
    _records: RecordStore | None = None
    _replica: Replica | None = None
    _audit: AuditLog | None = None

    @property
    def state_dir(self) -> Path:
        return Path(self.settings.state_dir).resolve()

    def head_of(self) -> str:
        import git

        from hypergov.gitsource import RefNotFoundError

        self._started = self.clock()  # a pass is timed from reading the branch on
        if self.followed is not None:  # for a remote: the fetch (the pass then reads what it fetched)
            self._head = self.followed.fetch_head()
            return self._head
        try:
            self._head = str(git.Repo(self.repo).commit(self.branch).hexsha)
        except (git.BadName, ValueError) as exc:
            raise RefNotFoundError(f"no branch '{self.branch}' in {self.repo}") from exc
        return self._head

    def run_pass(self) -> PassResult:
        from cli.plan import cli_engine
        from engines.factory import cluster_executor
        from reconciler.reconcile import PassOptions, reconcile_once

        head = self._head or self.head_of()  # the loop has just read it; one pass reads it here
        log = self.log.bind(commit=head)  # the pass reads the branch again: the same commit but for a race
        log.event("pass.start", "")
        settings = self.settings
        return reconcile_once(self.repo, self.branch, self.subdir, self.state_dir,
                              lambda tree, head: cli_engine(settings, tree, source_commit=head), audit=self.audit(),
                              on_apply=lambda result: report_apply(log, result), stop=self.stop,
                              options=PassOptions(fetch=None, allow_rewrite=self.allow_rewrite, records=self.records(),
                                                  replica=self.replica(), require_reviewed=settings.require_reviewed,
                                                  clusters=lambda tree: cluster_executor(
                                                      settings, tree, progress=lambda line: log.event(
                                                          "cluster.progress", f"  {line}"))))

    def audit(self) -> AuditLog:
        """The daemon's audit log, opened once (its signing key read, or made, and its witnesses
        found on first use; its push counters last as long as the process)."""
        from reconciler.audit import AuditLog

        if self._audit is None:
            shared = self.records() if self.settings.state_backend else None
            self._audit = AuditLog.from_settings(self.settings, audit_repo_of(self.settings, self.repo), shared=shared,
                                                 alive_interval_s=self.settings.audit_alive_interval_s)
        return self._audit

    def replica(self) -> Replica | None:
        """With an S3 state backend this reconciler is one replica among any others on the same
        bucket (leases, `reconciler.replicas`); its holder id lasts as long as the process."""
        from reconciler.replicas import Replica

        if self.settings.state_backend and self._replica is None:
            self._replica = Replica.start(self.records(), parallelism=self.settings.stacks_at_once())
        return self._replica

    def close(self) -> None:
        """On the way out: give the leader lease up (another replica leads at once) and stop renewing."""
        if self._replica is not None:
            self._replica.step_down()
            self._replica.keeper.stop()

    def records(self) -> RecordStore:
        """The reconciler's records: the state bucket's with an S3 state backend, else the state dir."""
        from engines.factory import reconciler_records

        if self._records is None:
            self._records = reconciler_records(self.settings)
        return self._records

    def _took(self) -> float:
        seconds = self.clock() - self._started if self._started is not None else 0.0
        self._started = self._head = None
        return seconds

    def passed(self, outcome: PassResult) -> None:
        seconds = self._took()
        self.metrics.observe_pass(outcome, seconds=seconds)
        report_pass(self.log, outcome, seconds=seconds)
        self._notify(lambda notifier: notifier.after_pass(outcome, branch=self.branch))

    def failed(self, failure: Failure) -> None:
        self.metrics.observe_failure(failure, seconds=self._took())
        busy = failure.reason == "busy"  # somebody else is applying: expected, retried in the next gap
        self.log.event("pass.failed", f"{self.branch}: pass failed ({failure.kind}): {failure}",
                       level=logging.WARNING if busy else logging.ERROR, kind=failure.kind, reason=failure.reason)
        self._notify(lambda notifier: notifier.after_failure(failure, branch=self.branch))

    def _notify(self, round_of: Callable[[Notifier], list[Delivery]]) -> None:
        """One round of notifications, its deliveries logged; never raises (the daemon goes on)."""
        if self.notifier is None:
            return
        try:
            deliveries = round_of(self.notifier)
        except Exception as exc:  # the notifications' boundary: a bug here must not stop passes
            failure = classify(exc)
            self.log.event("notify.failed", f"{self.branch}: notifications failed ({failure.kind}): {failure}",
                           level=logging.ERROR, kind=failure.kind, reason=failure.reason)
            return
        for sent in deliveries:
            if sent.failure is None:
                self.log.event("notify.sent", f"{self.branch}: told {sent.sink}: {sent.event.title}",
                               sink=sent.sink, notification=sent.event.kind)
            else:
                self.log.event("notify.failed", f"{self.branch}: could not tell {sent.sink} "
                               f"({sent.failure.kind}): {sent.failure}", level=logging.ERROR, sink=sent.sink,
                               notification=sent.event.kind, kind=sent.failure.kind, reason=sent.failure.reason)

    def waiting(self, decision: Decision) -> None:
        text = ""
        if decision.next != "steady":
            what = "retrying" if decision.next == "retry" else "waiting for a new commit; checking"
            text = f"{self.branch}: {what} in {decision.delay_s:.1f} s"
        self.log.event("wait", text, level=logging.INFO if decision.next == "steady" else logging.WARNING,
                       next=decision.next, delay_s=round(decision.delay_s, 3))

    def between(self) -> None:
        """In a gap between passes: the alive checkpoint and the drift scan, when due. Never
        raises (the loop's boundary for scans): a failure is logged, counted for readiness, and
        tried again."""
        from reconciler.drift_schedule import drift_due

        self._alive()
        if self.drift is None or not drift_due(self._last_scan, self.clock(), self.drift.every_s):
            return
        attempt = self.clock()
        try:
            self._scan(self.drift)
        except Exception as exc:  # the scan's boundary: the daemon never dies of a scan
            failure = classify(exc)
            if not failure.temporary:
                self._last_scan = attempt  # a permanent failure waits for the next due time
            self.metrics.observe_scan_failure(failure)
            self._save_failure(failure)
            self.log.event("drift.failed", f"{self.branch}: drift scan failed ({failure.kind}): {failure}",
                           level=logging.ERROR, kind=failure.kind, reason=failure.reason)
        else:
            self._last_scan = attempt

    def _alive(self) -> None:
        """Every `audit_alive_interval_s`: a signed checkpoint of the audit branch as it is, so an
        auditor can tell a quiet reconciler from one whose checkpoints stopped (or were withheld)."""
        every = self.settings.audit_alive_interval_s
        if self._last_alive is not None and self.clock() - self._last_alive < every:
            return
        self._last_alive = self.clock()
        try:
            errors = self.audit().checkpoint("alive")
        except Exception as exc:  # the checkpoint's boundary: the daemon never dies of one
            errors = [str(classify(exc))]
        for error in errors:
            self.log.event("audit.checkpoint_failed", f"{self.branch}: the alive checkpoint was not published: {error}",
                           level=logging.ERROR, error=error)

    def _scan(self, options: DriftOptions) -> None:
        from reconciler.applied_record import applied_commit
        from reconciler.drift_schedule import save_summary, summary_of, write_atomically
        from reconciler.reconcile import exclusive

        commit = applied_commit(self.records(), self.branch)
        if commit is None:
            self.log.event("drift.skipped", f"{self.branch}: drift scan skipped: nothing applied yet")
            return
        log = self.log.bind(commit=commit)
        with exclusive(self.state_dir):  # busy: a temporary failure, tried again in the next gap
            compared, scan = self._scan_applied(log)
            after, repaired = self._repair(log, compared, scan) if options.remediate else (None, None)
        save_summary(self.state_dir, summary_of(scan, commit=commit, after_repair=after, repaired=repaired))
        self.metrics.observe_scan(after or scan)
        self._notify(lambda notifier: notifier.after_scan(after or scan, branch=self.branch, commit=commit))
        if options.report is not None:
            write_atomically(options.report, redact(_report_markdown(compared, scan, after, repaired)))
            log.event("drift.report", f"{self.branch}: wrote {options.report}", path=str(options.report))

    def _scan_applied(self, log: EventLog) -> tuple[ComparedTree, LiveScan]:
        from reconciler.drift_report import scan_summary
        from reconciler.repair import compared_tree, live_scan

        compared = compared_tree(self.settings, against="applied", branch=self.branch, repo=self.repo)
        scan = live_scan(self.settings, compared.tree)
        log.event("drift.scan", f"{self.branch}: {scan_summary(scan)}",
                  level=logging.INFO if scan.complete and not scan.items else logging.WARNING,
                  counts=drift_counts(scan), complete=scan.complete, api_calls=scan.api_calls,
                  seconds=round(scan.seconds, 3))
        for item in scan.items:
            log.bind(stack=item.stack).event("drift.item", f"  {item.kind:<9} {item.address} ({item.account} "
                                             f"{item.region}): {item.fix}", level=logging.WARNING, kind=item.kind,
                                             address=item.address, type=item.type, changed_by=item.changed_by)
        for failure in scan.failures:
            log.bind(stack=failure.stack).event(
                "drift.unread", f"  ERROR {failure.stack}: {failure.failure.kind}: {failure.failure.message} "
                f"(scanning {failure.what}; the scan is incomplete)", level=logging.ERROR, what=failure.what,
                kind=failure.failure.kind, reason=failure.failure.reason)
        return compared, scan

    def _repair(self, log: EventLog, compared: ComparedTree, scan: LiveScan) -> tuple[LiveScan | None, bool | None]:
        """`reconciler.repair` (audited, never asking) of a complete scan's repairable items, then
        a new scan: what is left is what is live now. The caller holds the state directory."""
        from cli.plan import report_interrupted
        from reconciler.drift_repair import REPAIRED_BY_APPLY
        from reconciler.repair import live_scan, repair

        if not scan.complete or not any(i.kind in REPAIRED_BY_APPLY for i in scan.items):
            return None, None
        say: Callable[[str], None] = lambda line: log.event("drift.repair", line)  # noqa: E731
        report_interrupted(self.audit(), say=say)
        ok = repair(self.settings, compared, scan, remediate=True, prune_unmanaged=False, audit=self.audit(),
                    confirm=lambda _: True, say=say)
        after = live_scan(self.settings, compared.tree)
        log.event("drift.repaired", f"{self.branch}: after the repairs: {len(after.items)} item(s) left",
                  level=logging.INFO if ok and not after.items else logging.WARNING, ok=ok,
                  left=drift_counts(after))
        return after, ok

    def _save_failure(self, failure: Failure) -> None:
        from datetime import UTC, datetime

        from reconciler.applied_record import applied_commit
        from reconciler.drift_schedule import DriftSummary, save_summary

        try:
            save_summary(self.state_dir, DriftSummary(
                at=datetime.now(UTC).isoformat(timespec="seconds"), commit=applied_commit(self.records(), self.branch)
                or "", complete=False, counts={}, api_calls=0, seconds=0.0, error=failure.message))
        except Exception as exc:  # the state directory itself is unwritable: say so, do not die
            self.log.event("drift.failed", f"{self.branch}: could not record the drift scan: {exc}",
                           level=logging.ERROR)


def _report_markdown(compared: ComparedTree, scan: LiveScan, after: LiveScan | None, repaired: bool | None) -> str:
    """The scan's Markdown report (drift's own), with what the repair did when there was one."""
    from reconciler.drift_report import drift_markdown

    text = drift_markdown(scan, {}, commit=compared.commit, compared_with=compared.described)
    if after is None:
        return text
    verdict = "Repaired by an audited apply" if repaired else "A repair was tried and FAILED (see the daemon's log)"
    left = ", ".join(f"{n} {kind}" for kind, n in drift_counts(after).items() if n) or "nothing"
    return text + f"\n### Repair\n\n{verdict}; a new scan at {after.scanned_at} found {left} left.\n"
