"""What the integration tests share: the example tree's accounts and region, the credentials the
embedded endpoint takes, and a governance repository of the example tree with hypergov's settings
for it (imported by conftest.py, which re-exports them, and by applied_once.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import git

CONFIG = Path(__file__).resolve().parents[2] / "config"
PROD = "111122223333"
MANAGEMENT = "123456789012"  # the embedded endpoint's default account holds the organization
REGION = "us-west-2"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}
ACTOR = git.Actor("admin", "admin@example.com")


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
