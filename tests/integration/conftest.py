"""The real thing: the embedded AWS endpoint in a child process (seeded with the example tree's
clusters) and the real `terraform` binary with the real AWS provider, one state dir per module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from engines.factory import terraform_engine
from engines.settings import Settings, load_settings
from engines.terraform.engine import TerraformEngine
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from tests.integration.applied_once import applied_once, restore, shared_dir

CONFIG = Path(__file__).resolve().parents[2] / "config"
PROD = "111122223333"
MANAGEMENT = "123456789012"  # the embedded endpoint's default account holds the organization
REGION = "us-west-2"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}

ACTOR = git.Actor("admin", "admin@example.com")

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def endpoint() -> Iterator[EmbeddedAwsProcess]:
    saved = {k: os.environ.get(k) for k in CREDENTIALS}
    os.environ.update(CREDENTIALS)
    process = EmbeddedAwsProcess(seed_config=CONFIG).start()
    try:
        yield process
    finally:
        process.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def settings(endpoint: EmbeddedAwsProcess, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return load_settings(environ={"HYPERGOV_SETTINGS": "/nonexistent"}, overrides={
        "aws.endpoint_url": endpoint.endpoint_url, "aws.max_retries": 3,
        "state_dir": str(tmp_path_factory.mktemp("state"))})


EngineFactory = Callable[[dict[str, bytes]], TerraformEngine]


@pytest.fixture(scope="module")
def engine_for(settings: Settings) -> EngineFactory:
    """An engine over a (possibly edited) tree, sharing the module's state dir."""

    def make(files: dict[str, bytes]) -> TerraformEngine:
        report = validate_files(files)
        assert report.ok, report.problems
        return terraform_engine(settings, report.tree, environ={**os.environ, **CREDENTIALS})

    return make


def governance_repo(root: Path, *, projects: tuple[str, ...] | None = None) -> git.Repo:
    """The example tree committed at `root/config` (only `projects`, when given) in a new repository."""
    shutil.copytree(CONFIG, root / "config")
    if projects is not None:
        for project in (root / "config" / "projects").glob("*.yaml"):
            if project.stem not in projects:
                project.unlink()
                shutil.rmtree(root / "config" / "workloads" / project.stem, ignore_errors=True)
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add([str(p.relative_to(root)) for p in (root / "config").rglob("*") if p.is_file()])
    repo.index.commit("governance tree", author=ACTOR, committer=ACTOR)
    return repo


def cli_env(endpoint_url: str, root: Path, *, max_retries: int = 2) -> dict[str, str]:
    """hypergov's settings for a tree at `root/gov/config` with its state at `root/state`."""
    return {"HYPERGOV_AWS_ENDPOINT_URL": endpoint_url, "HYPERGOV_STATE_DIR": str(root / "state"),
            "HYPERGOV_SETTINGS": str(root / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": str(max_retries),
            "HYPERGOV_CONFIG_DIR": str(root / "gov" / "config")}


def _apply_the_example_tree(endpoint: EmbeddedAwsProcess, root: Path) -> None:
    governance_repo(root / "gov")
    applied = CliRunner().invoke(main, ["apply", "--yes"], env=cli_env(endpoint.endpoint_url, root))
    assert applied.exit_code == 0, applied.output


@pytest.fixture(scope="session")
def applied_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole example tree in a Git repository (`gov/`), every stack applied by `hypergov apply`
    (state in `state/`, audit records on the repository's audit branch): a snapshot made once per
    run, for `restore_applied_example`."""
    return applied_once(shared_dir(tmp_path_factory), "example", _apply_the_example_tree,
                        seed_config=CONFIG, credentials=CREDENTIALS)


def restore_applied_example(snapshot: Path, endpoint: EmbeddedAwsProcess, into: Path) -> dict[str, str]:
    """The applied example tree copied to `into` and loaded into `endpoint`; hypergov's settings for it."""
    restore(snapshot, endpoint, into)
    return cli_env(endpoint.endpoint_url, into)


def example_files() -> dict[str, bytes]:
    return read_tree_dir(CONFIG)


def audit_records(repo: str | os.PathLike[str], ref: str = "hypergov/audit") -> list[dict[str, Any]]:
    """The audit records at `ref`, oldest first, read with git itself (not with hypergov's reader)."""
    listed = subprocess.run(["git", "-C", str(repo), "ls-tree", "--name-only", f"{ref}:records"],
                            capture_output=True, text=True, check=False)
    return [json.loads(subprocess.run(["git", "-C", str(repo), "show", f"{ref}:records/{name}"], capture_output=True,
                                      check=True).stdout) for name in sorted(listed.stdout.split())]


@pytest.fixture
def own_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddedAwsProcess]:
    """An endpoint of the test's own, from nothing applied (the module's holds what its other
    tests applied), with the credentials it takes also when the test runs alone."""
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    process = EmbeddedAwsProcess(seed_config=CONFIG).start()
    try:
        yield process
    finally:
        process.stop()


def wait_for(log: Path, text: str, *, after: int = 0, timeout_s: float = 300.0) -> int:
    """Index in a daemon's log where `text` appears (after offset `after`); fails with the log."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = log.read_text().find(text, after)
        if found >= 0:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{text!r} did not appear in time; the daemon said:\n{log.read_text()}")
