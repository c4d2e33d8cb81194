"""Shared by the tests of deploy/prometheus and deploy/grafana: promtool (Prometheus' own checker),
found or skipped (failed in CI), and what the daemon exports, to check that every PromQL expression
reads metrics, labels and label values reconciler/metrics.py really writes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from engines.live.items import LiveScan
from engines.plan import ApplyResult, StackName
from reconciler.metrics import DRIFT_KINDS, ReconcilerMetrics, pass_results
from reconciler.pass_result import PassResult

# `apply_result`'s words (tests/reconciler/test_metrics.py pins them).
APPLY_RESULTS = ("applied", "failed", "refused", "stopped")
# What Prometheus adds to every series of a target (`job`, `instance`; `pod`, `namespace` and the
# like from Kubernetes service discovery), and the buckets' `le`.
TARGET_LABELS = frozenset({"job", "instance", "pod", "namespace", "service", "container", "endpoint"})


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def promtool() -> str:
    """promtool's path: $PROMTOOL, else on PATH. Missing, the test is skipped on a developer's
    machine and fails in CI (CI=true), where .ci/run installs it: the rules must never go untested."""
    found = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if found:
        return found
    hint = "install it with .ci/install-promtool (README: The tests)"
    if in_ci():
        pytest.fail(f"promtool is not installed, and CI must run the Prometheus rule tests: {hint}")
    pytest.skip(f"promtool is not installed: {hint}")


def run_promtool(*args: str | Path, cwd: Path | None = None) -> str:
    """Run promtool; a failure fails the test with promtool's own output."""
    proc = subprocess.run([promtool(), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        pytest.fail(f"promtool {' '.join(map(str, args))} exited {proc.returncode}:\n{output}", pytrace=False)
    return output


def exported_labels() -> dict[str, frozenset[str]]:
    """Every sample name the daemon's /metrics carries, with its label names: a registry after one
    pass with one apply and one complete scan (labelled series exist only once written)."""
    metrics = ReconcilerMetrics()
    metrics.observe_pass(PassResult(head="0" * 40, base=None, status="applied",
                                    results=[ApplyResult(stack=StackName("org"))]), seconds=1.0)
    metrics.observe_scan(LiveScan(items=(), failures=(), api_calls=0, seconds=0.0, scanned_at="", stacks=()))
    found: dict[str, set[str]] = {"up": set()}  # Prometheus' own, per target
    for family in metrics.registry.collect():
        for sample in family.samples:
            found.setdefault(sample.name, set()).update(sample.labels)
    return {name: frozenset(labels) for name, labels in found.items()}


def label_values(metric: str, label: str) -> tuple[str, ...] | None:
    """The values the daemon writes for a label, where they are a closed set."""
    if label == "result" and metric.startswith("hypergov_reconcile_passes"):
        return pass_results()
    if label == "result" and metric.startswith("hypergov_applies"):
        return APPLY_RESULTS
    if label == "kind" and metric.startswith("hypergov_drift_items"):
        return DRIFT_KINDS
    return None


SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*\"([^\"]*)\"")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
NAME = re.compile(r"\bhypergov_[a-zA-Z0-9_]+")


def problems(expr: str) -> list[str]:
    """What in an expression the daemon does not export: an unknown hypergov metric, a label a
    selector or an aggregation names that no series has, a label value outside a closed set."""
    exported = exported_labels()
    known = frozenset().union(*exported.values()) | TARGET_LABELS
    found = [f"{name}: not a metric the daemon exports" for name in NAME.findall(expr) if name not in exported]
    for metric, matchers in SELECTOR.findall(expr):
        for label, op, value in MATCHER.findall(matchers):
            if label not in exported.get(metric, frozenset()) | TARGET_LABELS:
                found.append(f"{metric}: no label {label!r}")
            closed = label_values(metric, label)
            words = value.split("|") if op in ("=~", "!~") else [value]
            if closed is not None and not set(words) <= set(closed):
                found.append(f"{metric}{{{label}{op}{value!r}}}: {sorted(set(words) - set(closed))} never written "
                             f"(the values: {', '.join(closed)})")
    for grouping in GROUPING.findall(expr):
        found += [f"by/without ({label}): no series has that label"
                  for label in (s.strip() for s in grouping.split(",")) if label and label not in known]
    return found
