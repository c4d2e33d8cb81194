"""`hypergov apply`, `plan` and `drift` from the command line against the embedded endpoint,
with the exit codes CI branches on (0 nothing to do, 2 changes or drift, 1 error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hypergov.cli import main
from hypergov.embedded_aws import EmbeddedAwsProcess
from tests.integration.conftest import CONFIG, PROD, REGION

pytestmark = pytest.mark.integration
STACKS = ["--stack", "org", "--stack", "cluster-gpu-west", "--stack", "project-speech"]


def test_apply_then_plan_and_drift_report_nothing_left(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    env = {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3"}
    runner = CliRunner()
    applied = runner.invoke(main, ["apply", "--yes", "--config", str(CONFIG), *STACKS], env=env)
    assert applied.exit_code == 0, applied.output
    assert "applied project-speech" in applied.output
    replan = runner.invoke(main, ["plan", "--config", str(CONFIG), "--stack", "project-speech"], env=env)
    assert replan.exit_code == 0, replan.output
    assert "project-speech: no changes" in replan.output
    in_sync = runner.invoke(main, ["drift", "--config", str(CONFIG), "--stack", "project-speech"], env=env)
    assert in_sync.exit_code == 0 and "in sync" in in_sync.output
    endpoint.client("iam", account=PROD, region=REGION).update_role(RoleName="acme-speech-viewer",
                                                                    MaxSessionDuration=7200)
    drifted = runner.invoke(main, ["drift", "--config", str(CONFIG), "--stack", "project-speech"], env=env)
    assert drifted.exit_code == 2, drifted.output
    assert "max_session_duration 3600 -> 7200" in drifted.output


def test_invalid_tree_is_refused_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "org.yaml").write_text("name: [\n")
    result = CliRunner().invoke(main, ["plan", "--config", str(tmp_path / "config")],
                                env={"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml")})
    assert result.exit_code == 1
    assert "SYN001" in result.output and "Traceback" not in result.output


def test_unknown_stack_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["plan", "--config", str(CONFIG), "--stack", "project-nope"],
                                env={"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml")})
    assert result.exit_code == 2
    assert "no stack 'project-nope'" in result.output and "project-vision" in result.output
