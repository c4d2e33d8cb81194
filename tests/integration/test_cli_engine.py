"""`hypergov apply`, `plan` and `drift` from the command line against the embedded endpoint,
with the exit codes CI branches on (0 nothing to do, 2 changes or drift, 1 error), and the audit
records every apply leaves on the governance repository's audit branch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from reconciler.reconcile import exclusive
from tests.integration.conftest import CONFIG, PROD, REGION, audit_records

pytestmark = pytest.mark.integration
STACKS = ["--stack", "org", "--stack", "cluster-gpu-west", "--stack", "project-speech"]


def _governance_repo(root: Path) -> git.Repo:
    shutil.copytree(CONFIG, root / "config")
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add([str(p.relative_to(root)) for p in (root / "config").rglob("*") if p.is_file()])
    actor = git.Actor("admin", "admin@example.com")
    repo.index.commit("governance tree", author=actor, committer=actor)
    return repo


def test_apply_then_plan_and_drift_report_nothing_left(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    repo = _governance_repo(tmp_path / "gov")
    tree_commit = repo.head.commit.hexsha
    config = tmp_path / "gov" / "config"
    env = {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3"}
    runner = CliRunner()
    applied = runner.invoke(main, ["apply", "--yes", "--config", str(config), *STACKS], env=env)
    assert applied.exit_code == 0, applied.output
    assert "applied project-speech" in applied.output
    assert repo.head.commit.hexsha == tree_commit  # the governed branch never receives an audit commit
    assert "audit records 1-" in applied.output and "on hypergov/audit" in applied.output
    records = audit_records(repo.working_dir)
    assert records[0]["type"] == "intent" and records[0]["source_commit"] == tree_commit
    outcomes = {r["stack"]: r for r in records if r["type"] == "outcome"}
    assert set(outcomes) == {"org", "cluster-gpu-west", "project-speech"}
    speech = outcomes["project-speech"]
    assert speech["source_commit"] == tree_commit and speech["outcome"] == "applied"
    assert any(a.startswith("create aws_ssoadmin_permission_set.permission-set-viewer") for a in speech["applied"]), \
        speech["applied"]
    replan = runner.invoke(main, ["plan", "--config", str(config), "--stack", "project-speech"], env=env)
    assert replan.exit_code == 0, replan.output
    assert "project-speech: no changes" in replan.output
    speech_dir = tmp_path / "state" / "stacks" / "project-speech"
    saved = {p.name: p.read_bytes() for p in speech_dir.iterdir() if p.is_file()}
    with exclusive(tmp_path / "state"):  # a reconciler pass is applying: a merge request still gets its plan
        private = runner.invoke(main, ["plan", "--private-state", "--config", str(config), "--stack",
                                       "project-speech"], env=env)
        shared = runner.invoke(main, ["plan", "--config", str(config), "--stack", "project-speech"], env=env)
    assert private.exit_code == 0 and "project-speech: no changes" in private.output, private.output
    assert "a private copy of" in private.output
    assert shared.exit_code == 75, shared.output  # the shared state is never planned beside an apply
    assert {p.name: p.read_bytes() for p in speech_dir.iterdir() if p.is_file()} == saved  # untouched
    again = runner.invoke(main, ["apply", "--yes", "--config", str(config), "--stack", "project-speech"], env=env)
    assert again.exit_code == 0 and "nothing to apply" in again.output
    assert audit_records(repo.working_dir) == records  # steady state leaves no audit noise
    in_sync = runner.invoke(main, ["drift", "--config", str(config), "--stack", "project-speech"], env=env)
    assert in_sync.exit_code == 0 and "in sync" in in_sync.output
    endpoint.client("iam", account=PROD, region=REGION).update_role(RoleName="acme-speech-lead",
                                                                    MaxSessionDuration=7200)
    drifted = runner.invoke(main, ["drift", "--deep", "--config", str(config), "--stack", "project-speech"], env=env)
    assert drifted.exit_code == 2, drifted.output
    assert "max_session_duration 3600 -> 7200" in drifted.output
    scan = runner.invoke(main, ["drift", "--deep", "--json", "--config", str(config), "--stack", "org",
                                "--stack", "project-speech", "--stack", "project-vision"], env=env)
    assert scan.exit_code == 2, scan.output
    report = {entry["stack"]: entry for entry in json.loads(scan.stdout)["refreshed"]}
    assert not report["org"]["drifted"], json.dumps(report["org"])
    assert not report["project-vision"]["drifted"]  # vision: never applied
    (role,) = report["project-speech"]["changes"]
    assert role["address"].startswith("aws_iam_role.role-lead") and role["action"] == "update"
    assert role["attributes"] == [{"path": "max_session_duration", "before": 3600, "after": 7200}]


def test_apply_refuses_to_start_without_a_repository_to_audit_in(tmp_path: Path) -> None:
    shutil.copytree(CONFIG, tmp_path / "config")
    env = {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state")}
    result = CliRunner().invoke(main, ["apply", "--yes", "--config", str(tmp_path / "config")], env=env)
    assert result.exit_code == 1, result.output
    assert "not in a Git repository" in result.output and "--no-audit" in result.output
    assert not (tmp_path / "state").exists()  # refused before planning anything


def test_apply_waits_for_no_one_beside_a_reconciler_pass(tmp_path: Path) -> None:
    from reconciler.reconcile import exclusive

    _governance_repo(tmp_path / "gov")
    env = {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state")}
    with exclusive(tmp_path / "state"):
        busy = CliRunner().invoke(main, ["apply", "--yes", "--config", str(tmp_path / "gov" / "config")], env=env)
    assert busy.exit_code == 75, busy.output
    assert "another reconciler or hypergov apply is running" in busy.output
    assert not (tmp_path / "state" / "stacks").exists()  # nothing was planned


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
    assert result.exit_code == 1  # a usage error, never 2 ("changes")
    assert "no stack 'project-nope'" in result.output and "project-vision" in result.output
