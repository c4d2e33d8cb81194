"""A pass refuses a head that does not contain the commit applied last (a force-push, a reset):
real Git repositories, and an engine factory that must not be called, because the refusal comes
before any stack is planned. With `allow_rewrite` the pass goes on to plan (the engine factory is
reached). The same through terraform and a remote: tests/integration/test_reconcile_remote.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest

from engines.protocol import Engine
from hypergov.model.tree import GovernanceTree
from reconciler.applied_record import STATE_FILE
from reconciler.reconcile import PassOptions, ReconcilerBusyError, exclusive, reconcile_once
from tests.example_tree import CONFIG

ACTOR = git.Actor("dev", "dev@example.com")


class EngineReached(Exception):
    """The pass got past every refusal and asked for an engine."""


def _no_engine(tree: GovernanceTree, head: str) -> Engine:
    raise EngineReached(head)


def _commit(repo: git.Repo, message: str) -> str:
    readme = Path(repo.working_dir) / "README"
    readme.write_text(message)
    repo.index.add(["README"])
    return str(repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha)


def _add_tree(repo: git.Repo) -> str:
    root = Path(repo.working_dir)
    shutil.copytree(CONFIG, root / "config", dirs_exist_ok=True)
    repo.index.add([str(p.relative_to(root)) for p in (root / "config").rglob("*") if p.is_file()])
    return str(repo.index.commit("the governance tree", author=ACTOR, committer=ACTOR).hexsha)


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    """`main`: a commit without a tree ("start"), then the example tree on top."""
    repo = git.Repo.init(tmp_path / "gov", initial_branch="main")
    _commit(repo, "start")
    _add_tree(repo)
    return repo


def _applied(state: Path, commit: str) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / STATE_FILE).write_text(json.dumps({"branches": {"main": {"applied_commit": commit}}}))


def test_a_reset_branch_is_refused_with_both_commits(repo: git.Repo, tmp_path: Path) -> None:
    applied = _commit(repo, "merge one")
    _applied(tmp_path / "state", applied)
    repo.git.reset("--hard", "HEAD~1")
    head = _commit(repo, "another history")
    result = reconcile_once(Path(repo.working_dir), "main", "config", tmp_path / "state", _no_engine)
    assert (result.status, result.ok, result.failure_kind) == ("rewritten", False, "permanent")
    assert result.refusal is not None and result.refusal.kind == "history rewritten"
    assert applied[:12] in result.refusal.message and head[:12] in result.refusal.message
    assert (result.head, result.base) == (head, applied)
    assert json.loads((tmp_path / "state" / STATE_FILE).read_text())["branches"]["main"]["applied_commit"] == applied


def test_a_fast_forward_is_no_rewrite_and_allow_rewrite_lifts_the_refusal(repo: git.Repo, tmp_path: Path) -> None:
    start, head = repo.commit("main~1").hexsha, repo.commit("main").hexsha
    _applied(tmp_path / "state", start)
    with pytest.raises(EngineReached, match=head):  # an ancestor: on to the plan
        reconcile_once(Path(repo.working_dir), "main", "config", tmp_path / "state", _no_engine)
    repo.git.checkout("--orphan", "again")  # the same tree in a history without `start`
    rewritten = _add_tree(repo)
    repo.git.branch("-f", "main", rewritten)
    refused = reconcile_once(Path(repo.working_dir), "main", "config", tmp_path / "state", _no_engine)
    assert refused.status == "rewritten"
    with pytest.raises(EngineReached, match=rewritten):
        reconcile_once(Path(repo.working_dir), "main", "config", tmp_path / "state", _no_engine,
                       options=PassOptions(allow_rewrite=True))


def test_a_fetch_runs_under_the_lock_before_the_head_is_read(repo: git.Repo, tmp_path: Path) -> None:
    """The fetch hook moves the branch (as a fetch into the clone does); the pass reads the moved head."""
    _applied(tmp_path / "state", repo.commit("main~1").hexsha)
    moved: list[str] = []

    def fetch() -> None:
        with pytest.raises(ReconcilerBusyError), exclusive(tmp_path / "state"):
            pass  # the pass holds the state directory while it fetches
        moved.append(_commit(repo, "fetched"))

    with pytest.raises(EngineReached) as reached:
        reconcile_once(Path(repo.working_dir), "main", "config", tmp_path / "state", _no_engine,
                       options=PassOptions(fetch=fetch))
    assert str(reached.value) == moved[0]
