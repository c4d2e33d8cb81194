"""`hypergov plan --base REF --post` wired end to end to a local GitHub stand-in that checks every
request against GitHub's OpenAPI description (`git_host_fake`), the merge request's plan itself
replaced by a fixed one (the real plan runs against terraform in tests/integration): the exit
status stays the plan's (0 / 2 / 1) when posting works; a plan that cannot be posted exits 1 saying
that the plan itself succeeded and where its Markdown is; an invalid tree's problems are posted as
the comment with a failure status; the token is in no output."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import reconciler.merge_request_plan as use_case
from cli.main import main
from engines.outcomes import Failure, temporary
from engines.plan import Action, Plan, ResourceChange, StackName
from reconciler.git_host import MARKER
from reconciler.merge_request_plan import MergeRequestPlan
from tests.integration.common import governance_repo
from tests.reconciler import git_host_fake
from tests.reconciler.git_host_fake import FakeHost

TOKEN = "ghp_CLI0TOKEN0THAT0MUST0NEVER0PRINT00"
HEAD = "9" * 40


@pytest.fixture
def gov(tmp_path: Path) -> Path:
    governance_repo(tmp_path / "gov")
    return tmp_path / "gov"


@pytest.fixture
def github() -> Iterator[FakeHost]:
    fake = git_host_fake.github()
    yield from git_host_fake.serve(fake)
    assert fake.violations == []


def _plan(changed: bool, failures: dict[StackName, Failure] | None = None) -> MergeRequestPlan:
    changes = (ResourceChange(address="aws_budgets_budget.team", type="aws_budgets_budget", name="team",
                              action=Action.UPDATE, executor="terraform"),) if changed else ()
    return MergeRequestPlan(plans=[Plan(stack=StackName("project-vision"), engine="terraform", changes=changes)],
                            failures=failures or {}, leading=["### Governance summary\n\nbudget 100 → 200"])


def _run(gov: Path, tmp_path: Path, github: FakeHost, monkeypatch: pytest.MonkeyPatch,
         outcome: MergeRequestPlan | Exception | None, *extra: str) -> tuple[int, str]:
    """The command with the plan replaced by `outcome` (None: the real use case, which refuses an
    invalid tree before any engine work)."""
    def planned(*_: object, **__: object) -> MergeRequestPlan:
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    if outcome is not None:
        monkeypatch.setattr(use_case, "plan_merge_request", planned)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "head": {"sha": HEAD}}}))
    env = {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_CONFIG_DIR": str(gov / "config"), "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r",
           "GITHUB_EVENT_PATH": str(event), "GITHUB_API_URL": github.api_url, "GITHUB_TOKEN": TOKEN}
    monkeypatch.chdir(gov)
    result = CliRunner().invoke(main, ["plan", "--base", "main", "--private-state", "--markdown",
                                       str(tmp_path / "mr.md"), "--post", *extra], env=env)
    assert TOKEN not in result.output, "the token was printed"
    return result.exit_code, result.output


@pytest.mark.parametrize(("changed", "code", "state", "description"), [
    pytest.param(False, 0, "success", "No changes", id="no-changes"),
    pytest.param(True, 2, "success", "1 stack to change", id="changes"),
])
def test_posted_and_the_exit_status_is_the_plans(gov: Path, tmp_path: Path, github: FakeHost,
                                                 monkeypatch: pytest.MonkeyPatch, changed: bool, code: int,
                                                 state: str, description: str) -> None:
    status, output = _run(gov, tmp_path, github, monkeypatch, _plan(changed))
    assert status == code, output
    assert [s["state"] for s in github.statuses] == ["pending", state]
    assert github.statuses[-1]["description"] == description and github.statuses[-1]["sha"] == HEAD
    (comment,) = github.marked()
    assert comment["body"] == f"{MARKER}\n{(tmp_path / 'mr.md').read_text()}"
    assert "posted to github o/r#7: comment" in output


def test_a_re_plan_updates_the_same_comment(gov: Path, tmp_path: Path, github: FakeHost,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _run(gov, tmp_path, github, monkeypatch, _plan(True))
    status, output = _run(gov, tmp_path, github, monkeypatch, _plan(False))
    assert status == 0 and len(github.marked()) == 1 and "updated" in output


def test_a_stack_that_failed_is_a_failure_status(gov: Path, tmp_path: Path, github: FakeHost,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    failed = {StackName("project-speech"): temporary("AWS GetRole: Throttling", "throttled")}
    status, _ = _run(gov, tmp_path, github, monkeypatch, _plan(True, failed))
    assert status == 1 and github.statuses[-1]["state"] == "failure"
    assert github.statuses[-1]["description"].startswith("Plan failed: 1 stack(s) could not be planned")
    assert "project-speech" in github.marked()[0]["body"]


def test_a_plan_that_cannot_be_posted_exits_1_and_says_the_plan_succeeded(
        gov: Path, tmp_path: Path, github: FakeHost, monkeypatch: pytest.MonkeyPatch) -> None:
    github.fail = [401, 401, 401]  # the pending status, the listing, and nothing else is tried
    status, output = _run(gov, tmp_path, github, monkeypatch, _plan(True))
    assert status == 1
    assert "ERROR posting to github o/r#7 failed (permanent)" in output
    assert "the plan itself succeeded (exit status 2 without --post: changes planned)" in output
    assert f"its Markdown is at {tmp_path / 'mr.md'}" in output and (tmp_path / "mr.md").exists()
    assert "statuses: write" in output


def test_an_error_while_planning_is_posted_and_raised(gov: Path, tmp_path: Path, github: FakeHost,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    status, output = _run(gov, tmp_path, github, monkeypatch, OSError("the state bucket is unreachable"))
    assert status == 1 and "the state bucket is unreachable" in output
    assert github.statuses[-1]["state"] == "failure"
    assert "Nothing was planned" in github.marked()[0]["body"]


def test_an_invalid_tree_posts_its_problems(gov: Path, tmp_path: Path, github: FakeHost,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (gov / "config" / "org.yaml").write_text((gov / "config" / "org.yaml").read_text() + "\nnot_a_field: 1\n")
    status, output = _run(gov, tmp_path, github, monkeypatch, None)
    assert status == 1, output
    assert github.statuses[-1]["state"] == "failure"
    assert github.statuses[-1]["description"].startswith("Plan failed: the changed tree is invalid")
    body = github.marked()[0]["body"]
    assert "SCH001" in body and body == f"{MARKER}\n{(tmp_path / 'mr.md').read_text()}"


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["plan", "--post", "--markdown", "mr.md"], "--post needs --base", id="no-base"),
    pytest.param(["plan", "--post", "--base", "main"], "--post needs --markdown", id="no-markdown"),
    pytest.param(["plan", "--post", "--base", "main", "--markdown", "mr.md", "--git-host", "github",
                  "--project", "o/r", "--merge-request", "1", "--head-sha", HEAD], "GITHUB_TOKEN", id="no-token"),
])
def test_post_usage_errors_before_planning(gov: Path, tmp_path: Path, args: list[str], message: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(gov)
    env = {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "GITHUB_TOKEN": "", "GITHUB_ACTIONS": "", "GITHUB_REPOSITORY": "", "GITLAB_CI": "", "CI_API_V4_URL": ""}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 1 and message in result.output, result.output
