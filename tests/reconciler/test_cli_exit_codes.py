"""Exit codes CI can trust, for every command, before any engine work: usage errors exit 1 (never
2, which means "changes" to CI, as in `terraform plan -detailed-exitcode`), a busy state
directory exits 75, and every command's --help says its codes. The 0/2 outcomes of real plans and
drift scans run against the real terraform in tests/integration/test_cli_engine.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from reconciler.reconcile import exclusive
from tests.integration.common import governance_repo


@pytest.fixture
def gov(tmp_path: Path) -> Path:
    """A governance repository holding the example tree, with one commit."""
    governance_repo(tmp_path / "gov")
    return tmp_path / "gov"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"), **extra}


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["plan", "--stack", "project-nope"], "no stack 'project-nope'", id="plan-unknown-stack"),
    pytest.param(["plan", "--base", "no-such-ref"], "'no-such-ref' is not a commit", id="plan-unknown-base"),
    pytest.param(["drift", "--stack", "cluster-nope"], "no stack 'cluster-nope'", id="drift-unknown-stack"),
    pytest.param(["apply", "--yes", "--stack", "project-nope"], "no stack 'project-nope'", id="apply-unknown-stack"),
    pytest.param(["plan", "--no-such-option"], "No such option", id="plan-unknown-option"),
    pytest.param(["reconcile", "--branch", "release"], "no branch 'release'", id="reconcile-unknown-branch"),
    pytest.param(["validate", "--config", "no-such-dir"], "is not a directory", id="validate-missing-path"),
    pytest.param(["no-such-command"], "No such command", id="unknown-command"),
    pytest.param(["import", "--cluster", "gpu-west", "--out", "imported"], "give --keep-from DIR or --org FILE",
                 id="import-without-an-org"),
    pytest.param(["import", "--cluster", "arn:aws:iam::111122223333:role/x", "--org", "config/org.yaml", "--out",
                  "imported"], "is not a HyperPod cluster ARN", id="import-not-a-cluster-arn"),
    pytest.param(["import", "--cluster", "gpu-west", "--org", "config/org.yaml", "--out", "config"],
                 "is not empty", id="import-into-a-tree"),
])
def test_usage_errors_exit_1_never_2(gov: Path, tmp_path: Path, args: list[str], message: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(gov)
    env = _env(tmp_path, HYPERGOV_CONFIG_DIR=str(gov / "config"))
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "state" / "stacks").exists()  # refused before any engine work


@pytest.mark.parametrize("command", ["plan", "drift", "apply"])
def test_a_bad_setting_is_a_usage_error(gov: Path, tmp_path: Path, command: str) -> None:
    env = _env(tmp_path, HYPERGOV_TERRAFORM_PARALLELISM="0")
    result = CliRunner().invoke(main, [command, "--config", str(gov / "config")], env=env)
    assert result.exit_code == 1, result.output
    assert "parallelism" in result.output


@pytest.mark.parametrize("command", ["plan", "drift", "apply"])
def test_a_busy_state_directory_exits_75(gov: Path, tmp_path: Path, command: str) -> None:
    """plan and drift write the per-stack files an apply or a reconciler pass uses: they wait for no one."""
    with exclusive(tmp_path / "state"):
        result = CliRunner().invoke(main, [command, "--config", str(gov / "config")], env=_env(tmp_path))
    assert result.exit_code == 75, result.output
    assert "another reconciler or hypergov apply is running" in result.output
    assert not (tmp_path / "state" / "stacks").exists()


@pytest.mark.parametrize(("command", "codes"), [
    pytest.param("plan", ["0 no changes", "2 changes planned", "1 any error", "75"], id="plan"),
    pytest.param("drift", ["0 no drift", "2 drift found", "1 any error", "75"], id="drift"),
    pytest.param("apply", ["0 applied", "1 any error", "75"], id="apply"),
    pytest.param("reconcile", ["0 applied or up to date", "1 refused or failed", "rewritten history", "75",
                               "SIGTERM", "/readyz"], id="reconcile"),
    pytest.param("status", ["0 status shown", "1 any error"], id="status"),
    pytest.param("validate", ["0 valid", "1 problems found"], id="validate"),
    pytest.param("import", ["0 imported with nothing in the report", "2 imported with report items", "1 any error"],
                 id="import"),
])
def test_every_command_documents_its_exit_codes(command: str, codes: list[str]) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for code in codes:
        assert code in text, (command, code)


NO_AWS_CREDENTIALS = {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "AWS_SESSION_TOKEN": None,
                      "AWS_PROFILE": None, "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
                      "AWS_CONFIG_FILE": "/nonexistent/config", "AWS_EC2_METADATA_DISABLED": "true",
                      "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": None, "AWS_CONTAINER_CREDENTIALS_FULL_URI": None,
                      "AWS_WEB_IDENTITY_TOKEN_FILE": None}


@pytest.mark.parametrize("command", ["plan", "drift"])
def test_missing_credentials_are_one_line_saying_how_to_provide_them(gov: Path, tmp_path: Path,
                                                                     command: str) -> None:
    """Found before any stack is planned: no terraform runs, nothing is repeated per stack or alias."""
    env: dict[str, str | None] = {**_env(tmp_path), **NO_AWS_CREDENTIALS, "HYPERGOV_ENGINE": "terraform"}
    result = CliRunner().invoke(main, [command, "--config", str(gov / "config")], env=env)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines()
             if line.strip() and not line.startswith(("state: ", "compared with "))]  # progress notes
    assert len(lines) == 1, result.output  # the one line besides the progress note of which state is used
    assert "no AWS credentials were found" in lines[0] and "AWS_PROFILE" in lines[0]
    assert "AWS_ACCESS_KEY_ID" in lines[0] and "Traceback" not in result.output
    assert not list((tmp_path / "state").glob("stacks/*/main.tf.json"))  # no stack was prepared


@pytest.mark.skipif(shutil.which("pulumi") is not None, reason="the Pulumi CLI is installed here")
def test_the_engine_setting_is_what_the_commands_run(gov: Path, tmp_path: Path) -> None:
    """engine: pulumi without its CLI: every stack says so (permanent), nothing falls back silently."""
    env = _env(tmp_path, HYPERGOV_ENGINE="pulumi")
    result = CliRunner().invoke(main, ["plan", "--config", str(gov / "config"), "--stack", "org",
                                       "--stack", "project-vision"], env=env)
    assert result.exit_code == 1, result.output
    assert "2 stacks (org, project-vision): permanent: the pulumi engine needs the Pulumi CLI" in result.output
    assert "engine: terraform" in result.output
    assert not (tmp_path / "state" / "stacks").exists()  # the terraform engine never ran
