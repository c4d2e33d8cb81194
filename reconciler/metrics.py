"""What the reconciler daemon tells Prometheus, and whether it is ready.

The metric names are the ones issue 13 fixes (dashboards and alerts depend on them):
- `hypergov_reconcile_last_success_timestamp_seconds`: when a pass last ended applied or up to date;
- `hypergov_reconcile_passes_total{result}`: passes by how they ended (`pass_result`);
- `hypergov_reconcile_pass_duration_seconds`: a histogram of pass wall times;
- `hypergov_applies_total{stack,result}`: each stack a pass applied, by outcome (`apply_result`);
- `hypergov_drift_items{kind}`: the items of the last complete live scan, per kind (zeros included);
- `hypergov_audit_records_unpushed`: audit records not yet on the remote (the audit store's count,
  passed in as a function and read at every scrape; NaN when Git cannot read it);
- `hypergov_ready`: 1 while `/readyz` answers 200, 0 while it answers 503 (issue 31: the alert on a
  stuck reconciler needs readiness as a sample; the pod stays scraped when it is not ready).

Every `result` a pass can end with is exported from the start, at 0: Prometheus' `increase()` counts
nothing for a series whose first sample is already 1, so a label that appeared only with the first
failed pass would hide that failure from the alert on failing passes (deploy/prometheus/alerts.yaml).

Deciding is pure (the label a pass or stack gets, the counts of a scan, the readiness reason);
`ReconcilerMetrics` only writes those into its own `CollectorRegistry` (never the process-global
one, so two daemons in one test process, or a library user, never share counters).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import get_args

from prometheus_client import CollectorRegistry, Gauge, Histogram
from prometheus_client import Counter as PromCounter

from engines.live.items import DriftKind, LiveScan
from engines.outcomes import Failure
from engines.plan import ApplyResult
from reconciler.pass_result import PassResult, PassStatus

DRIFT_KINDS: tuple[DriftKind, ...] = ("changed", "missing", "unmanaged", "unbounded")
# Passes last from a second (up to date) to many minutes (every stack of a large org).
PASS_BUCKETS_S = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
FAILED_BEFORE_PASS = "error"  # the pass ended before any stack was touched (Git, no engine)
BUSY = "busy"  # the state directory's lock was held (a CLI apply, another reconciler): not a failure


def status_label(status: PassStatus) -> str:
    """A pass status in Prometheus' label spelling."""
    return status.replace(" ", "_")


def pass_results() -> tuple[str, ...]:
    """Every `result` label a pass can get: its statuses, then the two of a pass that ended early."""
    return (*(status_label(status) for status in get_args(PassStatus)), FAILED_BEFORE_PASS, BUSY)


def failure_result(failure: Failure) -> str:
    """The `result` label of a pass that ended before touching any stack."""
    return BUSY if failure.reason == BUSY else FAILED_BEFORE_PASS


def pass_result(outcome: PassResult) -> str:
    """The `result` label of a pass: its status, in Prometheus' label spelling."""
    return status_label(outcome.status)


def apply_result(result: ApplyResult) -> str:
    """The `result` label of one stack's apply: applied, failed, refused (by a rule, e.g. the plan
    differs from the reviewed one, or a dependency failed) or stopped (left for the next pass)."""
    if result.ok:
        return "applied"
    if result.refusal is not None and result.refusal.kind == "stopping":
        return "stopped"
    return "refused" if result.refusal else "failed"


def drift_counts(scan: LiveScan) -> dict[str, int]:
    """Items per kind, every kind present (a kind that went away must read 0, not stay stale)."""
    found = Counter(i.kind for i in scan.items)
    return {kind: found[kind] for kind in DRIFT_KINDS}


def pass_unready_reason(outcome: PassResult) -> str | None:
    """Why the daemon is not ready after this pass: only a permanent failure (it needs a new commit
    or a person); a temporary one is retried by itself."""
    if outcome.failure_kind != "permanent":
        return None
    first = outcome.errors[0] if outcome.errors else "the tree fails validation" if outcome.status == "invalid" else ""
    return f"the last pass ({outcome.head[:12]}) failed permanently: {outcome.status}" + (f": {first}" if first else "")


def failure_unready_reason(what: str, failure: Failure) -> str | None:
    return None if failure.temporary else f"the last {what} failed permanently: {failure.message}"


def scan_unready_reason(scan: LiveScan) -> str | None:
    """An incomplete scan whose failures are all temporary is retried at the next gap between passes."""
    permanent = [f for f in scan.failures if not f.failure.temporary]
    if not permanent:
        return None
    first = permanent[0]
    return f"the last drift scan could not read {first.what}: {first.failure.message}"


@dataclass(frozen=True)
class Readiness:
    ready: bool
    reason: str  # "ready", or what failed permanently


class ReconcilerMetrics:
    """The daemon's metrics and readiness. Observers are called from the watch loop's thread; the
    HTTP server reads from its own threads (prometheus_client's metrics are thread-safe, and the
    readiness reasons are replaced whole)."""

    def __init__(self, *, unpushed: Callable[[], float] = lambda: 0, clock: Callable[[], float] = time.time) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._clock = clock
        self._pass_reason: str | None = None
        self._scan_reason: str | None = None
        self.last_success = Gauge("hypergov_reconcile_last_success_timestamp_seconds",
                                  "Unix time at which a reconciler pass last ended applied or up to date.",
                                  registry=self.registry)
        self.passes = PromCounter("hypergov_reconcile_passes", "Reconciler passes, by how they ended.", ["result"],
                                  registry=self.registry)
        self.duration = Histogram("hypergov_reconcile_pass_duration_seconds", "Wall time of a reconciler pass.",
                                  buckets=PASS_BUCKETS_S, registry=self.registry)
        self.applies = PromCounter("hypergov_applies", "Stacks applied by reconciler passes, by outcome.",
                                   ["stack", "result"], registry=self.registry)
        self.drift = Gauge("hypergov_drift_items", "Items the last complete live drift scan found, per kind.",
                           ["kind"], registry=self.registry)
        unpushed_gauge = Gauge("hypergov_audit_records_unpushed", "Audit records not yet pushed to the remote.",
                               registry=self.registry)
        unpushed_gauge.set_function(lambda: float(unpushed()))
        ready_gauge = Gauge("hypergov_ready", "1 while the reconciler is ready (/readyz answers 200), else 0.",
                            registry=self.registry)
        ready_gauge.set_function(lambda: 1.0 if self.readiness.ready else 0.0)
        for result in pass_results():
            self.passes.labels(result=result)

    def observe_pass(self, outcome: PassResult, *, seconds: float) -> None:
        self.passes.labels(result=pass_result(outcome)).inc()
        self.duration.observe(seconds)
        for result in outcome.results:
            self.applies.labels(stack=result.stack, result=apply_result(result)).inc()
        if outcome.ok:
            self.last_success.set(self._clock())
        if outcome.status != "stopped":  # a pass cut short by SIGTERM says nothing about readiness
            self._pass_reason = pass_unready_reason(outcome)

    def observe_failure(self, failure: Failure, *, seconds: float) -> None:
        """A pass that ended before touching any stack (busy, the branch unreadable, no engine)."""
        self.passes.labels(result=failure_result(failure)).inc()
        self.duration.observe(seconds)
        self._pass_reason = failure_unready_reason("pass", failure)

    def observe_scan(self, scan: LiveScan) -> None:
        if scan.complete:  # an incomplete scan's counts are a lower bound: keep the last complete ones
            for kind, count in drift_counts(scan).items():
                self.drift.labels(kind=kind).set(count)
        self._scan_reason = scan_unready_reason(scan)

    def observe_scan_failure(self, failure: Failure) -> None:
        self._scan_reason = failure_unready_reason("drift scan", failure)

    @property
    def readiness(self) -> Readiness:
        reasons = [r for r in (self._pass_reason, self._scan_reason) if r]
        return Readiness(ready=not reasons, reason="; ".join(reasons) or "ready")
