"""Audit commits in a real Git repository: one record per stack that changed or failed, only
those files committed, no attribute values in the records, and a clear refusal when there is no
repository to record in."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest

from engines.outcomes import permanent
from engines.plan import Action, ApplyResult, AttributeChange, Plan, ResourceChange, StackName
from reconciler.audit import (
    AuditCommitError,
    AuditEntry,
    AuditRepoError,
    commit_audit,
    find_audit_repo,
    source_commit,
)

WHEN = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
SECRET = "s3cr3t-value-never-recorded"


def _repo(root: Path) -> git.Repo:
    repo = git.Repo.init(root, initial_branch="main")
    (root / "config").mkdir()
    (root / "config" / "org.yaml").write_text("name: acme\n")
    repo.index.add(["config/org.yaml"])
    actor = git.Actor("admin", "admin@example.com")
    repo.index.commit("tree", author=actor, committer=actor)
    return repo


def _change(address: str, action: Action = Action.UPDATE) -> ResourceChange:
    return ResourceChange(address, address.split(".")[0], address.split(".")[1], action, "terraform",
                          (AttributeChange("description", "old", SECRET),))


def _entry(stack: str, *, applied: bool = True, error: str | None = None) -> AuditEntry:
    change = _change(f"aws_iam_role.{stack.replace('-', '_')}")
    plan = Plan(stack=StackName(stack), engine="terraform", changes=(change,), source_commit="a" * 40,
                artifact_sha256="b" * 64)
    result = ApplyResult(stack=StackName(stack), applied=(change,) if applied and not error else (),
                         error=permanent(error, "rejected") if error else None)
    return AuditEntry(plan, result)


def test_records_each_changed_or_failed_stack_and_commits_only_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (tmp_path / "config" / "org.yaml").write_text("name: acme-edit\n")
    repo.index.add(["config/org.yaml"])  # a person's staged, unrelated edit
    quiet = AuditEntry(Plan(stack=StackName("org"), engine="terraform", changes=()), ApplyResult(StackName("org")))
    sha = commit_audit(tmp_path, [quiet, _entry("project-vision"), _entry("project-nlp", error="boom")], when=WHEN)

    assert sha == repo.head.commit.hexsha
    commit = repo.head.commit
    assert sorted(commit.stats.files) == ["audit/2026-12/20261201T093000Z-project-nlp.json",
                                         "audit/2026-12/20261201T093000Z-project-vision.json"]
    assert commit.message.startswith("hypergov apply aaaaaaaaaaaa: 2 stack(s) changed, 1 failed")
    assert commit.author.name == "hypergov" and commit.committer.email == "hypergov@localhost"
    assert [d.a_path for d in repo.index.diff("HEAD")] == ["config/org.yaml"]  # still staged, not committed
    record = json.loads((tmp_path / "audit/2026-12/20261201T093000Z-project-nlp.json").read_text())
    assert record["outcome"] == "failed" and record["error"] == "boom" and record["error_kind"] == "permanent"
    assert record["source_commit"] == "a" * 40 and record["plan_artifact_sha256"] == "b" * 64
    vision = (tmp_path / "audit/2026-12/20261201T093000Z-project-vision.json").read_text()
    assert json.loads(vision)["applied"] == ["update aws_iam_role.project_vision"]
    assert SECRET not in vision and "description" not in vision  # addresses and actions, never values


def test_nothing_happened_leaves_no_commit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = repo.head.commit.hexsha
    empty = AuditEntry(Plan(stack=StackName("org"), engine="terraform", changes=()), ApplyResult(StackName("org")))
    assert commit_audit(tmp_path, [empty], when=WHEN) is None
    assert repo.head.commit.hexsha == head and not (tmp_path / "audit").exists()


def test_commit_hooks_cannot_keep_an_apply_out_of_the_record(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    hook = Path(repo.git_dir) / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'lint failed' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    sha = commit_audit(tmp_path, [_entry("project-vision")], when=WHEN)
    assert sha is not None and repo.head.commit.hexsha == sha


def test_a_refused_commit_says_where_the_records_are(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with repo.config_writer() as config:  # signing required, but the signing program fails
        config.set_value("commit", "gpgsign", "true")
        config.set_value("gpg", "program", "false")
    head = repo.head.commit.hexsha
    written = r"audit/2026-12/20261201T093000Z-project-vision\.json.*commit them by hand"
    with pytest.raises(AuditCommitError, match=written):
        commit_audit(tmp_path, [_entry("project-vision")], when=WHEN)
    assert repo.head.commit.hexsha == head
    assert (tmp_path / "audit/2026-12/20261201T093000Z-project-vision.json").exists()  # nothing lost


def test_audit_repo_is_the_one_holding_the_tree_or_the_configured_one(tmp_path: Path) -> None:
    _repo(tmp_path / "gov")
    assert find_audit_repo(tmp_path / "gov" / "config") == tmp_path / "gov"
    _repo(tmp_path / "audit-only")
    assert find_audit_repo(tmp_path / "gov" / "config", tmp_path / "audit-only") == tmp_path / "audit-only"
    (tmp_path / "loose").mkdir()
    with pytest.raises(AuditRepoError, match=r"not in a Git repository.*audit_repo.*--no-audit"):
        find_audit_repo(tmp_path / "loose")


def test_source_commit_says_when_the_tree_has_uncommitted_changes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = repo.head.commit.hexsha
    assert source_commit(tmp_path, tmp_path / "config") == head
    (tmp_path / "notes.txt").write_text("outside the tree\n")
    assert source_commit(tmp_path, tmp_path / "config") == head
    (tmp_path / "config" / "projects.yaml").write_text("new: file\n")
    assert source_commit(tmp_path, tmp_path / "config") == f"{head}-dirty"
