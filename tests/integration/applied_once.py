"""Apply once, copy many: a tree applied by the real terraform against the embedded endpoint is
made once per test run and snapshotted; each test that needs "an applied org" starts from a copy.

A snapshot is a directory: `root/` (whatever the making step left on disk: the governance
repository with its audit branch, terraform's state directory) and `endpoint.snapshot` (the
endpoint's whole state, `EndpointHandle.save_state`). Restoring copies `root/` to the test's own
directory, points every Git remote that named the snapshot's copy at the test's, and loads the
endpoint's state into the test's endpoint. Nothing about the code under test changes: terraform,
git and the endpoint are the real ones, and the restored state is what the first pass left (the
snapshot is made by the same commands the tests used to run).

Where: `$HYPERGOV_TEST_SNAPSHOTS` when set (`make test` makes every snapshot there before pytest
starts, `python -m tests.integration.applied_once DIR`, so no test's time includes a first pass),
else a directory the pytest-xdist workers of one run share, made under an flock by whichever
worker needs it first, so both workers never make the same pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from embedded_aws.handle import EndpointHandle
from engines.file_lock import file_lock
from tests.integration.common import (
    CONFIG,
    CREDENTIALS,
    MANAGEMENT,
    REGION,
    cli_env,
    governance_repo,
    reconciler_env,
    remote_and_clone,
    run_hypergov,
)

ENDPOINT_STATE = "endpoint.snapshot"
ENDPOINT_URL = "endpoint.url"  # the URL of the endpoint the snapshot was made on, rewritten on restore
STATE_BUCKET = "acme-hypergov-state"
S3_STATE_BACKEND = f"s3://{STATE_BUCKET}/prod"
SNAPSHOTS_VARIABLE = "HYPERGOV_TEST_SNAPSHOTS"
MakeApplied = Callable[[EmbeddedAwsProcess, Path], None]


def _apply_the_example_tree(endpoint: EmbeddedAwsProcess, root: Path) -> None:
    """The whole example tree committed in `root/gov`, every stack applied by `hypergov apply`."""
    governance_repo(root / "gov")
    applied = CliRunner().invoke(main, ["apply", "--yes"], env=cli_env(endpoint.endpoint_url, root))
    assert applied.exit_code == 0, applied.output


def state_bucket(endpoint: EndpointHandle, *, versioned: bool) -> None:
    """The state bucket of `S3_STATE_BACKEND` in the management account (versioned or not)."""
    s3 = endpoint.client("s3", account=MANAGEMENT, region=REGION)
    s3.create_bucket(Bucket=STATE_BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
    if versioned:
        s3.put_bucket_versioning(Bucket=STATE_BUCKET, VersioningConfiguration={"Status": "Enabled"})


def _reconcile_the_trimmed_tree_into_s3(endpoint: EmbeddedAwsProcess, root: Path) -> None:
    """The trimmed tree on a bare remote and the reconciler's clone (`remote_and_clone`), its first
    `hypergov reconcile` pass made with terraform's state in the versioned `S3_STATE_BACKEND`."""
    state_bucket(endpoint, versioned=True)
    root.mkdir(parents=True)
    remote_and_clone(root)
    env = {**reconciler_env(endpoint, root), "HYPERGOV_STATE_BACKEND": S3_STATE_BACKEND}
    first = run_hypergov(env, root, "reconcile")
    assert first.returncode == 0, first.stdout + first.stderr


MAKERS: dict[str, MakeApplied] = {"example": _apply_the_example_tree,
                                  "trimmed-s3": _reconcile_the_trimmed_tree_into_s3}


def snapshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this run's snapshots live (see the module's docstring)."""
    if os.environ.get(SNAPSHOTS_VARIABLE):
        return Path(os.environ[SNAPSHOTS_VARIABLE])
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def applied_once(shared: Path, key: str) -> Path:
    """The snapshot `key` in `shared`: made by `MAKERS[key](endpoint, root)` on a fresh endpoint
    seeded with the example tree's clusters, the first time anyone asks; afterwards read as it is."""
    home = shared / f"applied-{key}"
    with file_lock(shared / f"applied-{key}.lock"):
        if (home / ENDPOINT_STATE).exists():
            return home
        # Made where it stays (terraform links each stack's provider into the state dir's plugin
        # cache by absolute path): a snapshot is complete once its endpoint state is written.
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        saved = {k: os.environ.get(k) for k in CREDENTIALS}
        os.environ.update(CREDENTIALS)
        try:
            with EmbeddedAwsProcess(seed_config=CONFIG) as endpoint:
                MAKERS[key](endpoint, home / "root")
                (home / ENDPOINT_URL).write_text(endpoint.endpoint_url)
                endpoint.save_state(home / ENDPOINT_STATE)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return home


def restore(home: Path, endpoint: EndpointHandle, into: Path) -> Path:
    """A copy of snapshot `home` at `into` (returned), and its endpoint state in `endpoint`.

    The copy is what the making step would have left had it run at `into` against `endpoint`: the
    snapshot's directory and endpoint URL are rewritten where files name them (terraform's
    configuration, its CLI configuration), Git remotes are pointed at the copy, and a stack whose
    state lives in S3 is initialised again (terraform keeps a hash of the backend's configuration,
    which names the endpoint, in `.terraform/`)."""
    shutil.copytree(home / "root", into, symlinks=True, dirs_exist_ok=True)
    endpoint.restore_state(home / ENDPOINT_STATE)
    _rewrite(into, {str(home / "root"): str(into), (home / ENDPOINT_URL).read_text(): endpoint.endpoint_url})
    _repoint_remotes(into, old=home / "root")
    for stack in sorted((into / "state" / "stacks").glob("*/main.tf.json")):
        if '"s3"' in stack.read_text() and (stack.parent / ".terraform").exists():
            shutil.rmtree(stack.parent / ".terraform")
            cli_config = str(into / "state" / "terraform.tfrc")
            subprocess.run(["terraform", "init", "-input=false", "-no-color", "-reconfigure"], cwd=stack.parent,
                           env={**os.environ, **CREDENTIALS, "TF_CLI_CONFIG_FILE": cli_config},
                           capture_output=True, text=True, check=True)
    return into


def _rewrite(root: Path, replacements: dict[str, str]) -> None:
    """Each of `replacements` replaced in every small text file below `root` (Git's objects aside)."""
    for path in root.rglob("*"):
        in_git = any(part.endswith(".git") for part in path.parts)
        if in_git or path.is_symlink() or not path.is_file() or path.stat().st_size > 4 << 20:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        changed = text
        for old, new in replacements.items():
            changed = changed.replace(old, new)
        if changed != text:
            path.write_text(changed)


def _repoint_remotes(root: Path, *, old: Path) -> None:
    for dot_git in [*root.rglob(".git"), *root.glob("*.git")]:
        repo = git.Repo(dot_git.parent if dot_git.name == ".git" else dot_git)
        for remote in repo.remotes:
            for url in list(remote.urls):
                if url.startswith(str(old)):
                    remote.set_url(str(root) + url[len(str(old)):], url)


def build_snapshots(argv: list[str]) -> int:
    """`python -m tests.integration.applied_once DIR`: make every snapshot in DIR (what `make test`
    does before pytest, with DIR as $HYPERGOV_TEST_SNAPSHOTS)."""
    if len(argv) != 1:
        print("usage: python -m tests.integration.applied_once DIR", file=sys.stderr)
        return 1
    shared = Path(argv[0]).resolve()
    shared.mkdir(parents=True, exist_ok=True)
    # Each in its own process, at once: the trimmed tree's pass applies one stack at a time, so
    # the two together keep both cores busy (and each sets the credentials in its own environment).
    with ProcessPoolExecutor(max_workers=len(MAKERS)) as pool:
        for key, took in zip(MAKERS, pool.map(_timed_snapshot, [shared] * len(MAKERS), MAKERS), strict=True):
            print(f"test snapshot '{key}' (an applied tree for the integration tests) ready in "
                  f"{took:.0f} s: {shared / f'applied-{key}'}", flush=True)
    return 0


def _timed_snapshot(shared: Path, key: str) -> float:
    started = time.monotonic()
    applied_once(shared, key)
    return time.monotonic() - started


if __name__ == "__main__":
    sys.exit(build_snapshots(sys.argv[1:]))
