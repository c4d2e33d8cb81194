"""The Git host decisions, without a network: which merge request a CI job plans (GitHub Actions'
and GitLab CI's variables), which comment is hypergov's, the status for each outcome, and the cuts
to the hosts' limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.git_host import (
    MARKER,
    Comment,
    GitHostConfigError,
    comment_body,
    github_next_page,
    gitlab_next_page,
    merge_request_target,
    own_comment,
    status_for,
    token_from,
    truncate,
    verdict_of,
)


def test_github_actions_pull_request(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 42, "pull_request": {"number": 42, "head": {"sha": "a" * 40}}}))
    target = merge_request_target({"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/governance",
                                   "GITHUB_EVENT_PATH": str(event), "GITHUB_SHA": "b" * 40,
                                   "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
                                   "GITHUB_SERVER_URL": "https://ghe.example.com", "GITHUB_RUN_ID": "9"})
    assert (target.host, target.api_url, target.project, target.number) == (
        "github", "https://ghe.example.com/api/v3", "acme/governance", 42)
    assert target.head_sha == "a" * 40  # the head, not GITHUB_SHA (the merge commit of a pull_request run)
    assert target.job_url == "https://ghe.example.com/acme/governance/actions/runs/9"


@pytest.mark.parametrize(("environ", "sha"), [
    pytest.param({"CI_COMMIT_SHA": "c" * 40}, "c" * 40, id="merge-request-pipeline"),
    pytest.param({"CI_COMMIT_SHA": "m" * 40, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": "s" * 40}, "s" * 40,
                 id="merged-results-pipeline"),
])
def test_gitlab_ci_merge_request(environ: dict[str, str], sha: str) -> None:
    target = merge_request_target({"GITLAB_CI": "true", "CI_API_V4_URL": "https://gitlab.example.com/api/v4",
                                   "CI_PROJECT_ID": "17", "CI_MERGE_REQUEST_IID": "5", **environ})
    assert (target.host, target.api_url, target.project, target.number, target.head_sha) == (
        "gitlab", "https://gitlab.example.com/api/v4", "17", 5, sha)


def test_options_win_over_the_environment() -> None:
    target = merge_request_target({"GITHUB_REPOSITORY": "acme/other", "GITHUB_SHA": "b" * 40}, host="github",
                                  project="acme/governance", number=3, head_sha="d" * 40)
    assert (target.project, target.number, target.head_sha, target.api_url) == (
        "acme/governance", 3, "d" * 40, "https://api.github.com")


@pytest.mark.parametrize(("environ", "said"), [
    pytest.param({}, "--git-host", id="no-host"),
    pytest.param({"GITHUB_REPOSITORY": "acme/gov", "GITHUB_SHA": "b" * 40}, "--merge-request", id="github-push-run"),
    pytest.param({"GITLAB_CI": "true", "CI_API_V4_URL": "https://g/api/v4", "CI_PROJECT_ID": "1",
                  "CI_COMMIT_SHA": "c" * 40}, "CI_MERGE_REQUEST_IID", id="gitlab-branch-pipeline"),
])
def test_what_is_missing_is_named(environ: dict[str, str], said: str) -> None:
    with pytest.raises(GitHostConfigError, match=said):
        merge_request_target(environ)


def test_token_from_file_or_variable(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("glpat-from-file\n")
    assert token_from("gitlab", {"GITLAB_TOKEN": "glpat-env"}, secret) == "glpat-from-file"
    assert token_from("gitlab", {"GITLAB_TOKEN": "glpat-env"}, None) == "glpat-env"
    with pytest.raises(GitHostConfigError, match="GITHUB_TOKEN"):
        token_from("github", {}, None)


def test_own_comment_is_the_first_with_the_marker() -> None:
    comments = [Comment(1, "a person's comment quoting hypergov"), Comment(2, f"{MARKER}\nold"),
                Comment(3, f"{MARKER}\ncopy")]
    assert own_comment(comments) == Comment(2, f"{MARKER}\nold")
    assert own_comment([Comment(1, "no marker")]) is None


@pytest.mark.parametrize(("changed", "failed", "verdict"), [
    pytest.param(0, 0, "no-changes", id="no-changes"),
    pytest.param(2, 0, "changes", id="changes"),
    pytest.param(2, 1, "failed", id="a-stack-failed"),
])
def test_verdict(changed: int, failed: int, verdict: str) -> None:
    assert verdict_of(changed_stacks=changed, failed_stacks=failed) == verdict


def test_one_stack_is_singular() -> None:
    assert status_for("github", "changes", changed_stacks=1).description == "1 stack to change"


def test_truncate() -> None:
    assert truncate("short", 140) == "short"
    assert truncate("x" * 200, 140) == "x" * 139 + "…"


def test_comment_body_is_cut_to_the_limit_saying_where_the_plan_is() -> None:
    body = comment_body("y" * 70_000, host="github", where="mr.md")
    assert len(body) == 65_536 and body.startswith(MARKER) and body.endswith("The whole plan: mr.md._")
    assert comment_body("small", host="gitlab") == f"{MARKER}\nsmall"


def test_pagination_headers() -> None:
    link = ('<https://api.github.com/repositories/1/issues/7/comments?page=2>; rel="next", '
            '<https://api.github.com/repositories/1/issues/7/comments?page=5>; rel="last"')
    assert github_next_page(link) == "https://api.github.com/repositories/1/issues/7/comments?page=2"
    assert github_next_page('<https://x/a?page=1>; rel="prev"') is None and github_next_page(None) is None
    assert gitlab_next_page("3") == 3 and gitlab_next_page("") is None and gitlab_next_page(None) is None
