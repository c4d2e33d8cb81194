"""What the integration tests share: the example tree's accounts and region, the credentials the
embedded endpoint takes, and a governance repository of the example tree with hypergov's settings
for it (imported by conftest.py, which re-exports them, and by applied_once.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import git

from embedded_aws.handle import EndpointHandle

CONFIG = Path(__file__).resolve().parents[2] / "config"
PROD = "111122223333"
MANAGEMENT = "123456789012"  # the embedded endpoint's default account holds the organization
REGION = "us-west-2"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}
ACTOR = git.Actor("admin", "admin@example.com")
PLATFORM_ADMIN = git.Actor("platform-admin", "admin@example.com")
TRIMMED = ("speech",)  # the trimmed tree's one project: org, both clusters and project-speech
SOURCE = Path(__file__).resolve().parents[2]  # this checkout, not whichever one the venv installed


def governance_repo(root: Path, *, projects: tuple[str, ...] | None = None, actor: git.Actor = ACTOR) -> git.Repo:
    """The example tree committed at `root/config` (only `projects`, when given) in a new repository."""
    shutil.copytree(CONFIG, root / "config")
    if projects is not None:
        for project in (root / "config" / "projects").glob("*.yaml"):
            if project.stem not in projects:
                project.unlink()
                shutil.rmtree(root / "config" / "workloads" / project.stem, ignore_errors=True)
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add([str(p.relative_to(root)) for p in (root / "config").rglob("*") if p.is_file()])
    repo.index.commit("governance tree", author=actor, committer=actor)
    return repo


def cli_env(endpoint_url: str, root: Path, *, max_retries: int = 2) -> dict[str, str]:
    """hypergov's settings for a tree at `root/gov/config` with its state at `root/state`."""
    return {"HYPERGOV_AWS_ENDPOINT_URL": endpoint_url, "HYPERGOV_STATE_DIR": str(root / "state"),
            "HYPERGOV_SETTINGS": str(root / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": str(max_retries),
            "HYPERGOV_CONFIG_DIR": str(root / "gov" / "config")}


def remote_and_clone(root: Path) -> tuple[Path, Path, str]:
    """The trimmed tree pushed to a bare remote (`root/remote.git`) and the reconciler's clone of it
    (`root/gov`); returns both and the tree's commit."""
    seed = governance_repo(root / "seed", projects=TRIMMED, actor=PLATFORM_ADMIN)
    remote = root / "remote.git"
    git.Repo.init(remote, bare=True, initial_branch="main")
    seed.git.push(str(remote), "main")
    git.Repo.clone_from(str(remote), str(root / "gov"))
    return remote, root / "gov", str(seed.head.commit.hexsha)


def reconciler_env(endpoint: EndpointHandle, root: Path, failpoint: str | None = None) -> dict[str, str]:
    """The environment of a `hypergov` process over `remote_and_clone(root)`, one stack at a time."""
    env = {**os.environ, **CREDENTIALS, **cli_env(endpoint.endpoint_url, root, max_retries=3),
           "HYPERGOV_TERRAFORM_PARALLELISM": "1", "PYTHONPATH": str(SOURCE)}
    env.pop("HYPERGOV_FAILPOINTS", None)
    return {**env, "HYPERGOV_FAILPOINTS": failpoint} if failpoint else env


def run_hypergov(env: dict[str, str], root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`hypergov ARGS` as its own process (python -m cli.main) in `root`."""
    return subprocess.run([sys.executable, "-m", "cli.main", *args], env=env, cwd=root, capture_output=True,
                          text=True, timeout=900, check=False)
