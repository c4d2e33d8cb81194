"""Write-ahead auditing with a real Git repository and a stand-in engine (the `Engine` Protocol is
our own seam; real terraform runs in tests/integration/test_reconcile_crash.py): the intent is on
the audit branch before the first stack is applied, the outcomes after; no intent, no apply; an
intent left without an outcome is resolved as `interrupted` once, by its own writer only; the
failpoints kill the process with SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import git
import pytest

from engines import failpoints
from engines.plan import Action, ApplyResult, Plan, ResourceChange, StackName
from reconciler.audit import AuditLog
from reconciler.audit_store import AuditWriteError
from reconciler.pass_result import Scope
from reconciler.reconcile import with_replan
from reconciler.write_ahead import apply_audited, resolve_interrupted
from tests.audit_trail import records_at
from tests.example_tree import example_tree

BRANCH = "hypergov/audit"


def _records(repo: Path) -> list[dict[str, Any]]:
    return records_at(repo, BRANCH)


def _plan(stack: str) -> Plan:
    change = ResourceChange(f"aws_iam_role.{stack}", "aws_iam_role", stack, Action.CREATE, "terraform")
    return Plan(stack=StackName(stack), engine="terraform", changes=(change,), source_commit="c" * 40)


class Engine:
    """Applies every plan, noting which audit records were on the branch when it started."""

    name = "terraform"

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.seen_at_start: list[list[str]] = []

    def apply_many(self, plans: Sequence[Plan], *, on_start: Callable[[StackName], None] | None = None,
                   on_done: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None) -> list[ApplyResult]:
        results = []
        for plan in plans:
            self.seen_at_start.append([r["type"] for r in _records(self.repo)])
            if on_start:
                on_start(plan.stack)
            result = ApplyResult(stack=plan.stack, applied=plan.changes)
            results.append(result)
            if on_done:
                on_done(result)
        return results

    def plan_many(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("must not be called")

    refresh_many = known_stacks = plan_many


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "gov"
    git.Repo.init(root, initial_branch="main").index.commit("empty")
    return root


def test_the_intent_is_recorded_before_any_stack_is_applied(repo: Path, tmp_path: Path) -> None:
    audit = AuditLog.open(repo, state_dir=tmp_path / "state", branch=BRANCH)
    engine = Engine(repo)
    done = apply_audited(engine, [_plan("org"), _plan("project-nlp")], audit, source_author="dev <d@example.com>")
    assert engine.seen_at_start == [["intent"], ["intent"]]  # on the branch before the first apply started
    intent, org, nlp = _records(repo)
    assert [s["stack"] for s in intent["stacks"]] == ["org", "project-nlp"]
    assert (org["type"], org["stack"], org["outcome"], org["intent"]) == ("outcome", "org", "applied", intent["intent"])
    assert nlp["applied"] == ["create aws_iam_role.project-nlp"] and nlp["source_author"] == "dev <d@example.com>"
    assert org["timing"]["started"] <= org["timing"]["finished"]
    assert done.audit_error is None and [r["seq"] for r in done.records] == [1, 2, 3]
    assert resolve_interrupted(audit) == []  # the intent has its outcomes


def test_no_intent_no_apply(tmp_path: Path) -> None:
    (tmp_path / "not-a-repo").mkdir()
    audit = AuditLog.open(tmp_path / "not-a-repo", state_dir=tmp_path / "state", branch=BRANCH)
    engine = Engine(tmp_path / "not-a-repo")
    with pytest.raises(AuditWriteError, match="not-a-repo"):
        apply_audited(engine, [_plan("org")], audit)
    assert engine.seen_at_start == []


def test_an_intent_without_outcome_is_resolved_once_by_its_own_writer(repo: Path, tmp_path: Path) -> None:
    mine = AuditLog.open(repo, state_dir=tmp_path / "state", branch=BRANCH)
    mine.write([{"type": "intent", "intent": "i1", "stacks": [{"stack": "org"}, {"stack": "project-nlp"}]}],
               subject="intent")  # ... and then the process died
    theirs = AuditLog.open(repo, state_dir=tmp_path / "other-state", branch=BRANCH)
    theirs.write([{"type": "intent", "intent": "i2", "stacks": [{"stack": "project-cv"}]}], subject="busy elsewhere")
    restarted = AuditLog.open(repo, state_dir=tmp_path / "state", branch=BRANCH)
    kept: list[list[StackName]] = []
    assert resolve_interrupted(restarted, keep=kept.append) == ["org", "project-nlp"]
    assert kept == [["org", "project-nlp"]]
    assert resolve_interrupted(restarted) == []  # recorded once
    mine_only = [(r["type"], r.get("stack"), r["intent"]) for r in _records(repo) if r["writer"] == mine.writer]
    assert mine_only == [("intent", None, "i1"), ("interrupted", "org", "i1"), ("interrupted", "project-nlp", "i1")]
    assert [r["type"] for r in _records(repo) if r["writer"] == theirs.writer] == ["intent"]  # not ours to resolve


def test_interrupted_stacks_are_planned_again_whatever_the_commits_say() -> None:
    tree = example_tree()
    scope = Scope(plan=(StackName("project-vision"),), destroy=())
    again = with_replan(scope, [StackName("org"), StackName("project-vision"), StackName("project-gone")],
                        head=tree, known=[StackName("project-gone"), StackName("org")])
    assert again == Scope(plan=(StackName("org"), StackName("project-vision")), destroy=(StackName("project-gone"),))


def test_failpoints_are_parsed_strictly_and_kill_with_sigkill(tmp_path: Path) -> None:
    assert failpoints.enabled({"HYPERGOV_FAILPOINTS": "after-intent, typo,mid-apply"}) == {"after-intent", "mid-apply"}
    assert failpoints.enabled({}) == frozenset()
    with pytest.raises(ValueError, match="unknown failpoint"):
        failpoints.reached("after-lunch")
    code = "from engines import failpoints; failpoints.reached('before-push'); print('survived')"
    alive = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path.cwd())})
    assert (alive.returncode, alive.stdout) == (0, "survived\n")
    killed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path.cwd()),
                                 "HYPERGOV_FAILPOINTS": "before-push"})
    assert killed.returncode == -signal.SIGKILL and killed.stdout == ""
