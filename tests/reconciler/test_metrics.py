"""The daemon's metrics, scraped over real HTTP from the in-process server on loopback and parsed
with Prometheus' own text parser (`prometheus_client.parser`), plus /healthz and /readyz.

The passes here are `PassResult` values built by hand (what a pass returns), so the expected
numbers are the ones written below; the same server is scraped from a real `hypergov reconcile
--watch` process in tests/integration/test_observe_daemon.py. The metric names are issue 13's."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from engines.live.items import DriftItem, LiveScan, ScanFailure
from engines.outcomes import Refusal, permanent, temporary
from engines.plan import ApplyResult, StackName
from engines.schedule import STOPPING
from reconciler.metrics import ReconcilerMetrics, apply_result, drift_counts, pass_result, pass_results
from reconciler.observe_http import ObserveServer, serve
from reconciler.pass_result import PassResult

HEAD = "c0ffee" + "0" * 34


def _scan(*kinds: str, failures: tuple[ScanFailure, ...] = ()) -> LiveScan:
    items = tuple(DriftItem(kind=k, stack="cluster-gpu-west", address=f"hyperpod:ComputeQuota:q{n}",  # type: ignore[arg-type]
                            type="sagemaker:ComputeQuota", account="111122223333", region="us-west-2", fix="apply")
                  for n, k in enumerate(kinds))
    return LiveScan(items=items, failures=failures, api_calls=7, seconds=0.5, scanned_at="2026-01-01T00:00:00+00:00",
                    stacks=("cluster-gpu-west",))


@pytest.fixture
def observed() -> Iterator[tuple[ReconcilerMetrics, ObserveServer, list[int]]]:
    unpushed = [0]
    metrics = ReconcilerMetrics(unpushed=lambda: unpushed[0], clock=lambda: 1_700_000_000.0)
    server = serve(metrics, host="127.0.0.1", port=0)
    try:
        yield metrics, server, unpushed
    finally:
        server.close()


def _get(server: ObserveServer, path: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def scrape(server: ObserveServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics by (sample name, sorted labels), as Prometheus parses them."""
    status, content_type, body = _get(server, "/metrics")
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
    samples: list[Sample] = [s for family in text_string_to_metric_families(body) for s in family.samples]
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for s in samples}


def test_pass_and_apply_labels_are_the_documented_words() -> None:
    assert pass_result(PassResult(head=HEAD, base=None, status="up to date")) == "up_to_date"
    assert pass_result(PassResult(head=HEAD, base=None, status="apply failed")) == "apply_failed"
    assert apply_result(ApplyResult(stack=StackName("org"))) == "applied"
    assert apply_result(ApplyResult(stack=StackName("org"), refusal=STOPPING)) == "stopped"
    assert apply_result(ApplyResult(stack=StackName("org"),
                                     refusal=Refusal("plan changed", "the plan changed since review"))) == "refused"
    assert apply_result(ApplyResult(stack=StackName("org"), error=temporary("throttled", "throttled"))) == "failed"
    assert drift_counts(_scan("changed", "changed", "unmanaged")) == {
        "changed": 2, "missing": 0, "unmanaged": 1, "unbounded": 0}


def test_scraped_metrics_count_what_the_passes_did(observed: tuple[ReconcilerMetrics, ObserveServer,
                                                                    list[int]]) -> None:
    metrics, server, unpushed = observed
    before = scrape(server)
    assert before[("hypergov_reconcile_pass_duration_seconds_count", ())] == 0
    assert before[("hypergov_audit_records_unpushed", ())] == 0
    assert before[("hypergov_reconcile_last_success_timestamp_seconds", ())] == 0  # never succeeded yet

    applied = PassResult(head=HEAD, base=None, status="applied", results=[
        ApplyResult(stack=StackName("org")), ApplyResult(stack=StackName("cluster-gpu-west")),
        ApplyResult(stack=StackName("project-speech"), refusal=STOPPING)])
    metrics.observe_pass(applied, seconds=42.0)
    metrics.observe_pass(PassResult(head=HEAD, base=HEAD, status="up to date"), seconds=0.2)
    metrics.observe_failure(temporary("another reconciler is running", "busy"), seconds=0.01)
    metrics.observe_failure(temporary("cannot fetch the remote", "git"), seconds=0.0)
    metrics.observe_scan(_scan("changed", "missing", "missing"))
    unpushed[0] = 3  # read at scrape time from the audit trail's seam

    after = scrape(server)
    assert after[("hypergov_reconcile_passes_total", (("result", "applied"),))] == 1
    assert after[("hypergov_reconcile_passes_total", (("result", "up_to_date"),))] == 1
    assert after[("hypergov_reconcile_passes_total", (("result", "busy"),))] == 1  # the lock held: not an error
    assert after[("hypergov_reconcile_passes_total", (("result", "error"),))] == 1
    assert after[("hypergov_applies_total", (("result", "applied"), ("stack", "org")))] == 1
    assert after[("hypergov_applies_total", (("result", "applied"), ("stack", "cluster-gpu-west")))] == 1
    assert after[("hypergov_applies_total", (("result", "stopped"), ("stack", "project-speech")))] == 1
    assert after[("hypergov_reconcile_pass_duration_seconds_count", ())] == 4
    assert after[("hypergov_reconcile_pass_duration_seconds_sum", ())] == pytest.approx(42.21)
    # 42 s falls in the 60 s bucket, not the 30 s one; 0.2 s, 0.01 s and 0 s in the first (0.5 s).
    assert after[("hypergov_reconcile_pass_duration_seconds_bucket", (("le", "0.5"),))] == 3
    assert after[("hypergov_reconcile_pass_duration_seconds_bucket", (("le", "30.0"),))] == 3
    assert after[("hypergov_reconcile_pass_duration_seconds_bucket", (("le", "60.0"),))] == 4
    assert after[("hypergov_reconcile_last_success_timestamp_seconds", ())] == 1_700_000_000.0
    drift = {labels[0][1]: v for (name, labels), v in after.items() if name == "hypergov_drift_items"}
    assert drift == {"changed": 1, "missing": 2, "unmanaged": 0, "unbounded": 0}
    assert after[("hypergov_audit_records_unpushed", ())] == 3


def test_an_incomplete_scan_keeps_the_last_complete_counts(observed: tuple[ReconcilerMetrics, ObserveServer,
                                                                           list[int]]) -> None:
    metrics, server, _ = observed
    metrics.observe_scan(_scan("changed"))
    unread = ScanFailure(stack="org", what="iam in 111122223333", failure=temporary("throttled", "throttled"))
    metrics.observe_scan(_scan(failures=(unread,)))
    assert scrape(server)[("hypergov_drift_items", (("kind", "changed"),))] == 1
    assert _get(server, "/readyz")[0] == 200  # temporary: retried at the next gap


def test_healthz_is_up_and_readyz_says_why_not(observed: tuple[ReconcilerMetrics, ObserveServer,
                                                                list[int]]) -> None:
    metrics, server, _ = observed
    assert _get(server, "/healthz")[::2] == (200, "ok\n")
    assert _get(server, "/readyz")[::2] == (200, "ready\n")
    assert _get(server, "/nope")[0] == 404

    metrics.observe_pass(PassResult(head=HEAD, base=None, status="plan failed",
                                    failures={StackName("org"): temporary("throttled", "throttled")}), seconds=1)
    assert _get(server, "/readyz")[0] == 200  # a temporary failure is retried by the loop itself

    metrics.observe_pass(PassResult(head=HEAD, base=None, status="invalid"), seconds=1)
    status, _, body = _get(server, "/readyz")
    assert status == 503 and "c0ffee000000" in body and "invalid" in body
    assert _get(server, "/healthz")[0] == 200  # alive all the same: only readiness drops

    denied = ScanFailure(stack="org", what="iam in 111122223333",
                         failure=permanent("AWS GetAccountAuthorizationDetails: AccessDenied", "access-denied"))
    metrics.observe_scan(_scan(failures=(denied,)))
    metrics.observe_pass(PassResult(head=HEAD, base=None, status="applied"), seconds=1)
    status, _, body = _get(server, "/readyz")
    assert status == 503 and "AccessDenied" in body and "invalid" not in body  # the pass recovered, the scan not

    metrics.observe_scan(_scan())
    assert _get(server, "/readyz")[::2] == (200, "ready\n")


def test_every_pass_result_is_exported_at_zero_before_any_pass(observed: tuple[ReconcilerMetrics, ObserveServer,
                                                                               list[int]]) -> None:
    """The alert on failing passes takes `increase()` of these: a series born at 1 would hide its first failure."""
    _, server, _ = observed
    passes = {labels: v for (name, labels), v in scrape(server).items() if name == "hypergov_reconcile_passes_total"}
    words = ("up_to_date", "applied", "invalid", "rewritten", "plan_failed", "apply_failed", "stopped", "error", "busy")
    assert set(pass_results()) == set(words)
    assert passes == {(("result", word),): 0 for word in words}


def test_ready_is_one_exactly_while_readyz_answers_200(observed: tuple[ReconcilerMetrics, ObserveServer,
                                                                       list[int]]) -> None:
    metrics, server, _ = observed

    def ready() -> tuple[float, int]:
        return scrape(server)[("hypergov_ready", ())], _get(server, "/readyz")[0]

    assert ready() == (1, 200)
    metrics.observe_pass(PassResult(head=HEAD, base=None, status="plan failed",
                                    failures={StackName("org"): temporary("throttled", "throttled")}), seconds=1)
    assert ready() == (1, 200)  # temporary: the loop retries by itself
    metrics.observe_pass(PassResult(head=HEAD, base=None, status="invalid"), seconds=1)
    assert ready() == (0, 503)
    metrics.observe_pass(PassResult(head=HEAD, base=None, status="applied"), seconds=1)
    assert ready() == (1, 200)
    metrics.observe_failure(permanent("no engine: terraform is not installed", "config"), seconds=0)
    assert ready() == (0, 503)
