"""Apply once, copy many: a tree applied by the real terraform against the embedded endpoint is
made once per test run and snapshotted; each test that needs "an applied org" starts from a copy.

A snapshot is a directory: `root/` (whatever the making step left on disk: the governance
repository with its audit branch, a bare remote, terraform's state directory) and
`endpoint.snapshot` (the endpoint's whole state, `EndpointHandle.save_state`). Restoring copies
`root/` to the test's own directory, points every Git remote that named the snapshot's copy at
the test's, and loads the endpoint's state into the test's endpoint. Nothing about the code under
test changes: terraform, git and the endpoint are the real ones, and the restored state is what
the first pass left (the snapshot is made by the same commands the tests used to run).

The snapshot is shared by the pytest-xdist workers of one run (a directory beside theirs, made
under an flock by whichever worker needs it first), so both workers never make the same pass.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from embedded_aws import EmbeddedAwsProcess
from embedded_aws.handle import EndpointHandle
from engines.file_lock import file_lock

SNAPSHOT = "endpoint.snapshot"
MakeApplied = Callable[[EmbeddedAwsProcess, Path], None]


def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory all xdist workers of this run share (each worker's base temp has one parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def applied_once(shared: Path, key: str, make: MakeApplied, *, seed_config: Path,
                 credentials: dict[str, str]) -> Path:
    """The snapshot `key`: made by `make(endpoint, root)` on a fresh endpoint seeded with
    `seed_config`'s clusters (with `credentials` in the environment while it runs), the first time
    any worker asks; afterwards read as it is."""
    home = shared / f"applied-{key}"
    with file_lock(shared / f"applied-{key}.lock"):
        if (home / SNAPSHOT).exists():
            return home
        # Made where it stays (terraform links each stack's provider into the state dir's plugin
        # cache by absolute path): a snapshot is complete once its endpoint state is written.
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        saved = {k: os.environ.get(k) for k in credentials}
        os.environ.update(credentials)
        try:
            with EmbeddedAwsProcess(seed_config=seed_config) as endpoint:
                make(endpoint, home / "root")
                endpoint.save_state(home / SNAPSHOT)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return home


def restore(home: Path, endpoint: EndpointHandle, into: Path) -> Path:
    """A copy of snapshot `home` at `into` (returned), and its endpoint state in `endpoint`."""
    shutil.copytree(home / "root", into, symlinks=True, dirs_exist_ok=True)
    _repoint_remotes(into, old=home / "root")
    endpoint.restore_state(home / SNAPSHOT)
    return into


def _repoint_remotes(root: Path, *, old: Path) -> None:
    for dot_git in [*root.rglob(".git"), *root.glob("*.git")]:
        repo = git.Repo(dot_git.parent if dot_git.name == ".git" else dot_git)
        for remote in repo.remotes:
            for url in list(remote.urls):
                if url.startswith(str(old)):
                    remote.set_url(str(root) + url[len(str(old)):], url)
