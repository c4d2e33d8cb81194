"""The plan posted to GitHub and GitLab for real over HTTP, to local stand-ins that check every
request against the hosts' published OpenAPI descriptions (`git_host_fake`): one comment per merge
request, created once and then updated in place (found by its marker across pages of comments;
a person's comment never touched), the commit status for each outcome, a 5xx retried, a 401/403
permanent with a message that says what the token needs, and the token in no message.

GitLab's description (openapi_v3.yaml) covers both operations (notes under
`/projects/{id}/merge_requests/{noteable_id}/notes`, statuses under `/projects/{id}/statuses/{sha}`);
the four path items and every component they reference are GitLab's text, transcribed into
`gitlab_openapi_v3_excerpt.yaml` (where each block sits in the file: its `.md`). GitLab's status
body allows properties it does not name, so a misspelt field is not caught there (an enum or a
missing `state` is). Its known gaps (the notes list declared as one note, the status answered 201
where it declares 200) are listed in gitlab.json.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engines.outcomes import Backoff
from reconciler.git_host import MARKER, MergeRequestTarget, status_for
from reconciler.git_host_client import GitHostError, HostApi, host_api, post_plan
from tests.reconciler import git_host_fake
from tests.reconciler.git_host_fake import FakeHost

TOKEN = "ghp_FAKE0TOKEN0NEVER0SHOWN0000000000"
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"


@pytest.fixture(params=["github", "gitlab"])
def host(request: pytest.FixtureRequest) -> Iterator[FakeHost]:
    fake = git_host_fake.github() if request.param == "github" else git_host_fake.gitlab()
    yield from git_host_fake.serve(fake)
    assert fake.violations == [], "requests or answers outside the host's OpenAPI description"


def _api(fake: FakeHost, *, sleeps: list[float] | None = None) -> HostApi:
    target = MergeRequestTarget(host="github" if fake.kind == "github" else "gitlab", api_url=fake.api_url,
                                project="o/r" if fake.kind == "github" else "group/project", number=7, head_sha=SHA,
                                job_url="https://ci.example.com/jobs/1")
    return host_api(target, TOKEN, sleep=(sleeps if sleeps is not None else []).append,
                    backoff=lambda: Backoff(base_s=0.01, cap_s=0.01))


def test_comment_created_then_updated_in_place(host: FakeHost) -> None:
    host.add_comment("LGTM, but see the quota")  # a person's: never touched
    for n in range(150):  # more than a page (100) before hypergov's comment would be found
        host.add_comment(f"comment {n}", system=host.kind == "gitlab" and n % 2 == 0)
    api = _api(host)
    first = post_plan(api, markdown="## hypergov plan\n\n1 stack to change", status=status_for(
        api.target.host, "changes", changed_stacks=1))
    assert first.created and len(host.marked()) == 1
    second = post_plan(api, markdown="## hypergov plan\n\nNo changes", status=status_for(api.target.host, "no-changes"))
    assert not second.created and second.comment_id == first.comment_id
    assert [c["body"] for c in host.marked()] == [f"{MARKER}\n## hypergov plan\n\nNo changes"]
    assert host.comments[0]["body"] == "LGTM, but see the quota"
    pages = [r for r in host.requests if r.method == "GET"]
    assert len(pages) == 4  # two pages per listing: the second run paged to the marker too
    edits = [r.operation for r in host.requests if r.method in ("PATCH", "PUT")]
    assert len(edits) == 1


def test_a_second_run_with_an_unchanged_plan_edits_nothing(host: FakeHost) -> None:
    api = _api(host)
    for _ in range(2):
        post_plan(api, markdown="same plan", status=status_for(api.target.host, "no-changes"))
    assert len(host.marked()) == 1
    assert not [r for r in host.requests if r.method in ("PATCH", "PUT")]


@pytest.mark.parametrize(("verdict", "github_state", "gitlab_state", "description"), [
    pytest.param("planning", "pending", "running", "hypergov is planning this change", id="pending"),
    pytest.param("no-changes", "success", "success", "No changes", id="success"),
    pytest.param("changes", "success", "success", "3 stacks to change", id="success-with-changes"),
    pytest.param("failed", "failure", "failed", "Plan failed: project-vision: temporary: throttled", id="failure"),
])
def test_status_for_each_outcome(host: FakeHost, verdict: str, github_state: str, gitlab_state: str,
                                 description: str) -> None:
    api = _api(host)
    api.set_status(status_for(api.target.host, "planning"))
    api.set_status(status_for(api.target.host, verdict, changed_stacks=3,  # type: ignore[arg-type]
                              reason="project-vision: temporary: throttled"))
    pending, final = host.statuses
    assert pending["state"] == ("pending" if host.kind == "github" else "running")
    assert final["state"] == (github_state if host.kind == "github" else gitlab_state)
    assert final["description"] == description and final["sha"] == SHA
    assert final["target_url"] == "https://ci.example.com/jobs/1"
    assert final.get("context", final.get("name")) == "hypergov/plan"


def test_a_long_failure_is_cut_to_the_hosts_limit(host: FakeHost) -> None:
    api = _api(host)
    api.set_status(status_for(api.target.host, "failed", reason="x" * 500))
    limit = 140 if host.kind == "github" else 255
    assert len(host.statuses[0]["description"]) == limit and host.statuses[0]["description"].endswith("…")


def test_a_server_error_is_tried_again(host: FakeHost) -> None:
    host.fail = [500, 502]
    sleeps: list[float] = []
    api = _api(host, sleeps=sleeps)
    posted = post_plan(api, markdown="plan", status=status_for(api.target.host, "no-changes"))
    assert posted.created and len(sleeps) == 2 and len(host.marked()) == 1


def test_rate_limit_then_success(host: FakeHost) -> None:
    host.fail = [429]
    api = _api(host)
    api.set_status(status_for(api.target.host, "no-changes"))
    assert len(host.statuses) == 1


@pytest.mark.parametrize("status", [401, 403])
def test_an_auth_refusal_is_permanent_with_a_clear_message(host: FakeHost, status: int) -> None:
    host.fail = [status]
    sleeps: list[float] = []
    api = _api(host, sleeps=sleeps)
    with pytest.raises(GitHostError) as raised:
        post_plan(api, markdown="plan", status=status_for(api.target.host, "no-changes"))
    failure = raised.value.failure
    assert failure.kind == "permanent" and failure.reason == "git-host-access-denied" and sleeps == []
    assert f"HTTP {status}" in failure.message
    assert ("statuses: write" if host.kind == "github" else "`api` scope") in failure.message
    assert TOKEN not in str(raised.value) and TOKEN not in repr(raised.value.failure) and TOKEN not in repr(api)


def test_every_retry_gives_up_as_temporary(host: FakeHost) -> None:
    host.fail = [503] * 10
    api = _api(host)
    with pytest.raises(GitHostError) as raised:
        api.set_status(status_for(api.target.host, "no-changes"))
    assert raised.value.failure.temporary and TOKEN not in str(raised.value)


def test_an_unreachable_host_is_temporary_and_names_no_token() -> None:
    target = MergeRequestTarget(host="github", api_url="http://127.0.0.1:9", project="o/r", number=1, head_sha=SHA)
    api = host_api(target, TOKEN, sleep=lambda _: None, attempts=2)
    with pytest.raises(GitHostError) as raised:
        api.list_comments()
    assert raised.value.failure.reason == "git-host-connection" and TOKEN not in str(raised.value)


def test_the_token_is_sent_only_as_the_hosts_header(host: FakeHost) -> None:
    api = _api(host)
    post_plan(api, markdown="plan", status=status_for(api.target.host, "no-changes"))
    for seen in host.requests:
        assert TOKEN not in seen.path and TOKEN not in str(seen.query) and TOKEN not in str(seen.body)
        header = seen.headers.get("authorization") if host.kind == "github" else seen.headers.get("private-token")
        assert header in (f"Bearer {TOKEN}", TOKEN)


def test_the_check_catches_a_request_outside_the_description() -> None:
    """The stand-in is no rubber stamp: a state GitHub does not know, a misspelt field, an unknown
    query parameter and a missing body are each caught."""
    check = git_host_fake.github().check
    headers = {"content-type": "application/json"}
    _, _, problems = check.check("POST", f"/repos/o/r/statuses/{SHA}", {}, headers, b'{"state": "changes"}')
    assert any("'changes' is not one of" in p for p in problems)
    _, _, problems = check.check("GET", "/repos/o/r/issues/7/comments", {"perpage": ["100"]}, headers, b"")
    assert any("perpage" in p for p in problems)
    _, _, problems = check.check("POST", "/repos/o/r/issues/7/comments", {}, headers, b"")
    assert any("required" in p for p in problems)
    _, _, problems = check.check("POST", "/repos/o/r/issues/seven/comments", {}, headers, b'{"body": "x"}')
    assert any("issue_number" in p for p in problems)
    gitlab = git_host_fake.gitlab().check
    _, _, problems = gitlab.check("POST", f"/api/v4/projects/1/statuses/{SHA}", {}, headers,
                                  b'{"state": "changes", "context": "x"}')
    assert any("'changes' is not one of" in p for p in problems)
    _, _, problems = gitlab.check("POST", f"/api/v4/projects/1/statuses/{SHA}", {}, headers, b'{"context": "x"}')
    assert any("'state' is a required property" in p for p in problems)
    _, _, problems = gitlab.check("POST", "/api/v4/projects/1/merge_requests/7/notes", {}, headers, b'{"bdy": "x"}')
    assert any("'body' is a required property" in p for p in problems)
