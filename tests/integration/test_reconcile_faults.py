"""Faults that outlive every retry: the embedded endpoint throttles every SageMaker call for as
long as the test wants (`times=None`), longer than the SDK's retries last. A plan of all stacks
gives every stack a classified outcome (the cluster stack a temporary error, the others their
plans) and exits 1; `reconcile --watch`, a real process, keeps running through throttled
passes (and a held state directory), backs off, applies once the fault stops, and on SIGTERM
lets the stacks being applied finish, records them in the audit commit and exits 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from reconciler.reconcile import exclusive
from tests.integration.conftest import CREDENTIALS, PROD, REGION, audit_records, wait_for
from tests.integration.test_reconcile import _governance_repo

pytestmark = pytest.mark.integration
STACKS = {"org", "cluster-gpu-west", "cluster-trn-east", "project-speech"}  # the trimmed tree's stacks


def _env(endpoint: EmbeddedAwsProcess, root: Path) -> dict[str, str]:
    # Few SDK retries (the provider's first STS call to the endpoint is now and then retried once):
    # the injected throttling, which never ends by itself, outlives them quickly.
    return {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(root / "state"),
            "HYPERGOV_SETTINGS": str(root / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "2",
            "HYPERGOV_CONFIG_DIR": str(root / "gov" / "config")}


def test_a_plan_of_all_stacks_gives_each_a_classified_outcome(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    _governance_repo(tmp_path / "gov")
    endpoint.inject_fault("sagemaker", "*", kind="throttle", times=None)
    try:
        result = CliRunner().invoke(main, ["plan", "--json"], env=_env(endpoint, tmp_path))
    finally:
        endpoint.clear_faults()
    assert result.exit_code == 1, result.output  # an incomplete plan is an error, never "no changes"
    entries = {e["stack"]: e for e in json.loads(result.stdout)}
    assert set(entries) == STACKS  # every stack reported, none lost to the one that failed
    error = entries["cluster-gpu-west"]["error"]
    assert (error["kind"], error["reason"]) == ("temporary", "throttled"), error
    assert "ThrottlingException" in error["message"] and error["retry_after_s"] > 0
    for stack in STACKS - {"cluster-gpu-west"}:
        assert "changes" in entries[stack], entries[stack]  # planned normally beside the failure



def test_watch_survives_throttling_applies_when_it_stops_and_sigterm_records(endpoint: EmbeddedAwsProcess,
                                                                            tmp_path: Path) -> None:
    repo = _governance_repo(tmp_path / "gov")
    tree_commit = repo.head.commit.hexsha
    log = tmp_path / "daemon.log"
    # One stack at a time, so that a SIGTERM during the cluster's apply leaves the project unstarted.
    env = {**os.environ, **CREDENTIALS, **_env(endpoint, tmp_path), "PYTHONUNBUFFERED": "1",
           "HYPERGOV_TERRAFORM_PARALLELISM": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this checkout, not the venv's install
    endpoint.inject_fault("sagemaker", "*", kind="throttle", times=None)
    busy = ExitStack()
    busy.enter_context(exclusive(tmp_path / "state"))  # first, someone else holds the state directory
    with open(log, "w") as out:
        daemon = subprocess.Popen([sys.executable, "-m", "cli.main", "reconcile", "--watch", "1",
                                   "--max-backoff", "2"], stdout=out, stderr=subprocess.STDOUT, env=env,
                                  cwd=tmp_path)
    try:
        wait_for(log, "pass failed (temporary): another reconciler or hypergov apply is running")
        wait_for(log, "main: retrying in")
        busy.close()
        first = wait_for(log, "plan failed (temporary)")
        wait_for(log, "cluster-gpu-west: temporary: AWS ListClusterSchedulerConfigs: ThrottlingException",
                  after=max(0, first - 400))
        wait_for(log, "main: retrying in", after=first)
        second = wait_for(log, "plan failed (temporary)", after=first + 1)  # a second pass: still alive
        assert daemon.poll() is None
        endpoint.clear_faults()
        endpoint.inject_fault("sagemaker", "CreateComputeQuota", kind="latency", delay_s=6.0, times=1)
        applied = wait_for(log, "applied org:", after=second)
        daemon.send_signal(signal.SIGTERM)  # mid-pass: the cluster stack is being applied, the project is not
        assert daemon.wait(timeout=240) == 0, log.read_text()
    finally:
        busy.close()
        endpoint.clear_faults()
        if daemon.poll() is None:
            daemon.kill()
    output = log.read_text()
    assert "reconciler stopped (SIGTERM)" in output and "Traceback" not in output
    assert "stack(s) left for the next pass" in output[applied:]
    assert repo.head.commit.hexsha == tree_commit  # the governed branch untouched
    intent, *recorded = audit_records(repo.working_dir)
    assert intent["type"] == "intent" and {r["type"] for r in recorded} == {"outcome"}
    outcomes = {r["stack"]: r for r in recorded}  # the stacks that ran are recorded
    assert outcomes["org"]["outcome"] == "applied"
    assert outcomes["cluster-gpu-west"]["outcome"] == "applied"  # the stack being applied finished
    assert outcomes["project-speech"]["outcome"] == "refused"  # the one not started was left, and said so
    assert "stopping (SIGTERM)" in outcomes["project-speech"]["refusal"]
    quotas = endpoint.client("sagemaker", account=PROD, region=REGION).list_compute_quotas()["ComputeQuotaSummaries"]
    assert "speech-on-gpu-west" in {q["Name"] for q in quotas}  # applied once the throttling stopped

    after = CliRunner().invoke(main, ["reconcile"], env=_env(endpoint, tmp_path))  # the next pass: what was left
    assert after.exit_code == 0, after.output
    roles = endpoint.client("iam", account=PROD, region=REGION).list_roles(PathPrefix="/hypergov/")["Roles"]
    assert "acme-speech-lead" in {r["RoleName"] for r in roles}
    assert audit_records(repo.working_dir)[len(recorded) + 1]["type"] == "intent"  # the next pass's records follow
