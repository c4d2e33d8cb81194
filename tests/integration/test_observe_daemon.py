"""The observable daemon, for real: `hypergov reconcile --watch --metrics-port 0 --log-format json
--drift-every 2s --remediate-drift --drift-report FILE` runs as a process against the embedded
endpoint with the real terraform, on a Git repository holding the trimmed example tree (org, two
clusters, project speech). The test reads its JSON log lines, scrapes /metrics over HTTP and
parses it with Prometheus' text parser, checks /healthz and /readyz, changes speech's compute
quota by hand with boto3 (as a person in the console would) and waits for the scheduled scan to
find it and the audited repair to restore it (checked with boto3), then reads `hypergov status
--json`. The repository has a bare remote: the audit records of the passes and the repair are
pushed there, and the unpushed gauge counts against it. Expected values come from the tree
(config/projects/speech.yaml) and what the test did."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner

from cli.demo_daemon import DaemonLog, http_status, scrape
from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.integration.conftest import CREDENTIALS, PROD, REGION
from tests.integration.test_reconcile import _governance_repo

pytestmark = pytest.mark.integration
GPU_WEST = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"  # config/clusters/gpu-west.yaml
SPEECH_QUOTA = "speech-on-gpu-west"
SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"  # AWS's documented example secret key, without its slashes


def speech_quota(endpoint: EmbeddedAwsProcess) -> dict[str, Any]:
    client = endpoint.client("sagemaker", account=PROD, region=REGION)
    (summary,) = [q for q in client.list_compute_quotas(ClusterArn=GPU_WEST)["ComputeQuotaSummaries"]
                  if q["Name"] == SPEECH_QUOTA]
    return dict(summary)


@pytest.fixture
def daemon(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], DaemonLog]]:
    remote = tmp_path / "remote.git"  # the audit branch is pushed here after each write
    git.Repo.init(remote, bare=True, initial_branch="main")
    _governance_repo(tmp_path / "gov").create_remote("origin", str(remote))
    env = {**os.environ, **CREDENTIALS, "AWS_SECRET_ACCESS_KEY": SECRET, "PYTHONUNBUFFERED": "1",
           "HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3",
           "HYPERGOV_CONFIG_DIR": str(tmp_path / "gov" / "config")}
    with open(tmp_path / "daemon.log", "w") as err, open(tmp_path / "daemon.out", "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "reconcile", "--watch", "1", "--metrics-port", "0", "--log-format",
             "json", "--drift-every", "2s", "--remediate-drift", "--drift-report", str(tmp_path / "drift.md")],
            stdout=out, stderr=err, env=env, cwd=Path(__file__).resolve().parents[2])
    try:
        yield process, DaemonLog(tmp_path / "daemon.log")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def test_metrics_logs_scheduled_drift_and_status(endpoint: EmbeddedAwsProcess, tmp_path: Path,
                                                 daemon: tuple[subprocess.Popen[bytes], DaemonLog]) -> None:
    process, log = daemon
    started = time.time()
    _, listening = log.wait_for(lambda e: e["event"] == "metrics.listening", timeout_s=60)
    port = int(listening["port"])
    assert http_status(port, "/healthz") == 200

    _, first = log.wait_for(lambda e: e["event"] == "pass.end")
    assert (first["status"], first["planned"], first["changed"]) == ("applied", 4, 3), first
    metrics = scrape(port)
    assert metrics[("hypergov_reconcile_passes_total", (("result", "applied"),))] == 1
    for stack in ("org", "cluster-gpu-west", "project-speech"):  # cluster-trn-east: nothing to apply
        assert metrics[("hypergov_applies_total", (("result", "applied"), ("stack", stack)))] == 1
    assert ("hypergov_applies_total", (("result", "applied"), ("stack", "cluster-trn-east"))) not in metrics
    assert metrics[("hypergov_reconcile_last_success_timestamp_seconds", ())] >= started - 1
    assert metrics[("hypergov_reconcile_pass_duration_seconds_count", ())] >= 1
    assert http_status(port, "/readyz") == 200

    clean, scanned = log.wait_for(lambda e: e["event"] == "drift.scan")
    assert scanned["counts"] == {"changed": 0, "missing": 0, "unmanaged": 0, "unbounded": 0}
    quota = speech_quota(endpoint)  # config/projects/speech.yaml: 8 ml.g5.12xlarge, DontLend, weight 20
    endpoint.client("sagemaker", account=PROD, region=REGION).update_compute_quota(
        ComputeQuotaId=quota["ComputeQuotaId"], TargetVersion=quota["ComputeQuotaVersion"],
        ComputeQuotaConfig={**quota["ComputeQuotaConfig"],
                            "ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 2}]},
        ComputeQuotaTarget={"TeamName": "speech", "FairShareWeight": 20})

    found, scanned = log.wait_for(lambda e: e["event"] == "drift.scan" and e["counts"]["changed"] > 0,
                                  after=clean + 1)
    assert scanned["counts"] == {"changed": 1, "missing": 0, "unmanaged": 0, "unbounded": 0}
    _, item = log.wait_for(lambda e: e["event"] == "drift.item", after=found)
    assert (item["kind"], item["address"], item["stack"]) == (
        "changed", f"hyperpod:ComputeQuota:{SPEECH_QUOTA}", "cluster-gpu-west")
    _, repaired = log.wait_for(lambda e: e["event"] == "drift.repaired", after=found)
    assert repaired["ok"] is True and sum(repaired["left"].values()) == 0, repaired
    restored = speech_quota(endpoint)["ComputeQuotaConfig"]["ComputeQuotaResources"]
    assert restored == [{"InstanceType": "ml.g5.12xlarge", "Count": 8}]
    log.wait_for(lambda e: e["event"] == "drift.report", after=found)
    report = (tmp_path / "drift.md").read_text()
    assert "## hypergov drift: drift found" in report and SPEECH_QUOTA in report and "Repaired by an audited" in report
    summary = json.loads((tmp_path / "state" / "drift-last.json").read_text())
    assert summary["counts"]["changed"] == 1 and summary["repaired"] is True and sum(summary["left"].values()) == 0
    metrics = scrape(port)
    assert metrics[("hypergov_drift_items", (("kind", "changed"),))] == 0  # what is live now: repaired
    assert metrics[("hypergov_audit_records_unpushed", ())] == 0  # every record written so far is on the remote
    local, pushed = (git.Repo(tmp_path / where).commit("hypergov/audit").hexsha for where in ("gov", "remote.git"))
    assert local == pushed

    status = CliRunner().invoke(main, ["status", "--json"], env={
        "HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
        "HYPERGOV_CONFIG_DIR": str(tmp_path / "gov" / "config")})
    assert status.exit_code == 0, status.output
    shown = json.loads(status.stdout)
    (branch,) = shown["branches"]
    assert branch["branch"] == "main" and branch["applied_commit"] and branch["commits_waiting"] in (0, 1)
    assert shown["last_drift_scan"]["counts"]["changed"] >= 0 and shown["last_drift_scan"]["complete"] is True
    assert shown["audit_records_unpushed"] == 0

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=240) == 0
    events = log.events()
    assert events[-1]["event"] == "reconciler.stopped"
    text = log.path.read_text()
    assert SECRET not in text and "Traceback" not in text
    for event in events:  # every line an event with the envelope, bound to the branch
        assert {"ts", "level", "event", "branch", "commit", "stack", "message"} <= set(event)
        assert event["branch"] == "main"
    applied = [e for e in events if e["event"] == "stack.applied"]
    assert {e["stack"] for e in applied} >= {"org", "cluster-gpu-west", "project-speech"}
    assert all(e["commit"] for e in applied)
    first_pass = events[:events.index(first)]  # its intent and outcome records, then their push to origin
    recorded = [e for e in first_pass if e["event"] == "audit.records"]
    assert len(recorded) == 1 and recorded[0]["first_seq"] == 1 and recorded[0]["last_seq"] > 1
    assert any(e["event"] == "audit.pushed" and e["remote"] == "origin" for e in first_pass)
    repair_lines = [e["message"] for e in events if e["event"] == "drift.repair"]
    assert any(line.startswith("audit records ") for line in repair_lines), repair_lines  # the repair, audited
    assert (tmp_path / "daemon.out").read_text() == ""  # JSON mode: nothing on stdout
