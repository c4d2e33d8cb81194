"""The real thing: the embedded AWS endpoint in a child process (seeded with the example tree's
clusters) and the real `terraform` binary with the real AWS provider, one state dir per module."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.factory import terraform_engine
from engines.settings import Settings, load_settings
from engines.terraform.engine import TerraformEngine
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from tests.audit_trail import records_at
from tests.integration.applied_once import applied_once, restore, snapshot_dir
from tests.integration.common import (  # noqa: F401  (re-exported: the tests import them from here)
    ACTOR,
    CONFIG,
    CREDENTIALS,
    MANAGEMENT,
    PROD,
    REGION,
    cli_env,
    governance_repo,
)

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


@pytest.fixture(scope="session")
def applied_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole example tree in a Git repository (`gov/`), every stack applied by `hypergov apply`
    (state in `state/`, audit records on the repository's audit branch): a snapshot made once per
    run (or before it, by `python -m tests.integration.applied_once`), for `restore_applied_example`."""
    return applied_once(snapshot_dir(tmp_path_factory), "example")


@pytest.fixture(scope="session")
def reconciled_into_s3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The trimmed tree on a bare remote with the reconciler's clone, its first `hypergov reconcile`
    pass made with terraform's state in a versioned S3 bucket of the endpoint (`S3_STATE_BACKEND`):
    a snapshot made once per run, for `applied_once.restore` into a test's `own_endpoint` and
    `tmp_path` (the layout of `remote_and_clone`)."""
    return applied_once(snapshot_dir(tmp_path_factory), "trimmed-s3")


def restore_applied_example(snapshot: Path, endpoint: EmbeddedAwsProcess, into: Path) -> dict[str, str]:
    """The applied example tree copied to `into` and loaded into `endpoint`; hypergov's settings for it."""
    restore(snapshot, endpoint, into)
    return cli_env(endpoint.endpoint_url, into)


def example_files() -> dict[str, bytes]:
    return read_tree_dir(CONFIG)


def audit_records(repo: str | os.PathLike[str], ref: str = "hypergov/audit") -> list[dict[str, Any]]:
    """The audit records at `ref`, oldest first, read with git itself (not with hypergov's reader)."""
    return records_at(repo, ref)


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
