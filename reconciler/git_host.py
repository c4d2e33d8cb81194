"""The merge request on its Git host, as decisions: which merge request a CI job plans (its host,
project, number and head commit, from options or the CI's own variables), which comment is
hypergov's (the one carrying `MARKER`), what the comment body and the commit status say, and how
both are cut to the host's limits. No I/O: `reconciler.git_host_client` sends what is decided here.

One comment per merge request: a re-plan finds its comment again by the hidden marker and
updates it; a comment without the marker (a person's) is never touched. The commit status has one
context (`hypergov/plan` on GitHub, the status `name` on GitLab), so each run replaces the last.

Statuses: GitHub knows only pending, success, failure and error; GitLab pending, running, success,
failed, canceled and skipped. A plan with changes is **success** on both, described "N stacks to
change": changes are what a merge request is for, and a required check must not block the merge
of a reviewed change (the reviewers read the comment; the approvals are the Git host's rules). A
plan that failed (a stack that could not be planned, an invalid tree) is failure / failed with the
reason as description; planning under way is pending (GitHub) / running (GitLab).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hypergov.redaction import redact, register

HostKind = Literal["github", "gitlab"]
Verdict = Literal["planning", "no-changes", "changes", "failed"]

MARKER = "<!-- hypergov-plan -->"
STATUS_CONTEXT = "hypergov/plan"
GITHUB_API = "https://api.github.com"
# GitHub answers 422 "description is too long (maximum is 140 characters)"; its OpenAPI description
# gives no maxLength. A comment body is limited to 65,536 characters (422 "Body is too long").
GITHUB_DESCRIPTION_MAX = 140
GITHUB_BODY_MAX = 65_536
# GitLab keeps a status description in a 255-character column and a note body up to 1,000,000.
GITLAB_DESCRIPTION_MAX = 255
GITLAB_BODY_MAX = 1_000_000
ELLIPSIS = "…"
TOKEN_VARIABLES: Mapping[HostKind, str] = {"github": "GITHUB_TOKEN", "gitlab": "GITLAB_TOKEN"}


class GitHostConfigError(ValueError):
    """What to post to cannot be told (no host, project, merge request or commit; no token): the
    message names the option or CI variable that would tell it."""


@dataclass(frozen=True)
class MergeRequestTarget:
    """Where the plan goes: a GitHub pull request or a GitLab merge request, and its head commit."""

    host: HostKind
    api_url: str  # https://api.github.com, https://gitlab.example.com/api/v4
    project: str  # owner/repo (GitHub); a numeric id or a namespace/path (GitLab)
    number: int  # the pull request's number (GitHub) or the merge request's iid (GitLab)
    head_sha: str
    job_url: str | None = None  # the CI job, linked from the commit status

    @property
    def label(self) -> str:
        """How messages name it (never with a token)."""
        sign = "#" if self.host == "github" else "!"
        return f"{self.host} {self.project}{sign}{self.number}"


@dataclass(frozen=True)
class Comment:
    id: int
    body: str


@dataclass(frozen=True)
class StatusDecision:
    state: str  # in the host's own words
    description: str


def _int(text: str | None, what: str) -> int | None:
    if text is None or not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        raise GitHostConfigError(f"{what} must be a number, not {text!r}") from None


def _github_event(environ: Mapping[str, str]) -> dict[str, object]:
    path = environ.get("GITHUB_EVENT_PATH", "")
    if not path:
        return {}
    try:
        loaded = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _github_pull_request(event: Mapping[str, object]) -> tuple[int | None, str | None]:
    """The pull request's number and head commit from a pull_request (or pull_request_target)
    event: GITHUB_SHA is the merge commit GitHub made for the check run, not the head."""
    pull = event.get("pull_request")
    if not isinstance(pull, dict):
        return None, None
    number = pull.get("number", event.get("number"))
    head = pull.get("head")
    sha = head.get("sha") if isinstance(head, dict) else None
    return (number if isinstance(number, int) else None), (sha if isinstance(sha, str) else None)


def detect_host(environ: Mapping[str, str]) -> HostKind | None:
    if environ.get("GITHUB_ACTIONS") == "true" or environ.get("GITHUB_REPOSITORY"):
        return "github"
    if environ.get("GITLAB_CI") == "true" or environ.get("CI_API_V4_URL"):
        return "gitlab"
    return None


def merge_request_target(environ: Mapping[str, str], *, host: HostKind | None = None, api_url: str | None = None,
                         project: str | None = None, number: int | None = None,
                         head_sha: str | None = None) -> MergeRequestTarget:
    """The merge request to post to: each option as given, else from the CI's variables (GitHub
    Actions: GITHUB_API_URL, GITHUB_REPOSITORY, the pull request in GITHUB_EVENT_PATH; GitLab CI:
    CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID, CI_MERGE_REQUEST_SOURCE_BRANCH_SHA in a
    merged-results pipeline, else CI_COMMIT_SHA). Missing pieces are a `GitHostConfigError`."""
    kind = host or detect_host(environ)
    if kind is None:
        raise GitHostConfigError("--post: which Git host? Give --git-host github|gitlab (detected from "
                                 "GITHUB_ACTIONS / GITLAB_CI in CI)")
    if kind == "github":
        event = _github_event(environ)
        event_number, event_sha = _github_pull_request(event)
        url = api_url or environ.get("GITHUB_API_URL") or GITHUB_API
        repo = project or environ.get("GITHUB_REPOSITORY")
        found_number = number if number is not None else event_number
        sha = head_sha or event_sha or environ.get("GITHUB_SHA")
        missing = [name for name, value in (("--project (GITHUB_REPOSITORY)", repo),
                                            ("--merge-request (the pull request in GITHUB_EVENT_PATH)", found_number),
                                            ("--head-sha (GITHUB_SHA)", sha)) if not value]
    else:
        url = api_url or environ.get("CI_API_V4_URL") or ""
        repo = project or environ.get("CI_PROJECT_ID")
        found_number = number if number is not None else _int(environ.get("CI_MERGE_REQUEST_IID"),
                                                              "CI_MERGE_REQUEST_IID")
        sha = head_sha or environ.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA") or environ.get("CI_COMMIT_SHA")
        missing = [name for name, value in (("--api-url (CI_API_V4_URL)", url), ("--project (CI_PROJECT_ID)", repo),
                                            ("--merge-request (CI_MERGE_REQUEST_IID: run in a merge request "
                                             "pipeline)", found_number),
                                            ("--head-sha (CI_COMMIT_SHA)", sha)) if not value]
    if missing:
        raise GitHostConfigError(f"--post to {kind}: cannot tell {', '.join(missing)}")
    assert repo is not None and found_number is not None and sha is not None
    if kind == "github" and not re.fullmatch(r"[^/\s]+/[^/\s]+", repo):
        raise GitHostConfigError(f"--project for GitHub is owner/repo, not {repo!r}")
    return MergeRequestTarget(host=kind, api_url=url.rstrip("/"), project=repo, number=found_number, head_sha=sha,
                              job_url=_job_url(kind, environ))


def _job_url(kind: HostKind, environ: Mapping[str, str]) -> str | None:
    if kind == "gitlab":
        return environ.get("CI_JOB_URL") or None
    server, repo, run = (environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


def token_from(host: HostKind, environ: Mapping[str, str], token_file: Path | None) -> str:
    """The token: from `token_file` when given (a mounted secret), else the host's variable;
    registered with the process's redactor (no output, file or post shows it)."""
    if token_file is not None:
        try:
            token = token_file.read_text().strip()
        except OSError as exc:
            raise GitHostConfigError(f"--token-file {token_file}: cannot read it ({exc.strerror})") from None
        if not token:
            raise GitHostConfigError(f"--token-file {token_file} is empty")
        register(token)
        return token
    token = environ.get(TOKEN_VARIABLES[host], "").strip()
    if not token:
        raise GitHostConfigError(f"--post to {host}: no token; set {TOKEN_VARIABLES[host]} or give --token-file")
    register(token)
    return token


def truncate(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: max(0, limit - len(ELLIPSIS))] + ELLIPSIS


def one_line(text: str) -> str:
    return " ".join(text.split())


def comment_body(markdown: str, *, host: HostKind, where: str | None = None) -> str:
    """The comment: the marker (hidden in rendered Markdown) and the plan, cut to the host's limit
    with a line saying where the whole plan is. Secrets are masked before the cut (a cut could
    leave the start of one), here as in the status's description."""
    limit = GITHUB_BODY_MAX if host == "github" else GITLAB_BODY_MAX
    body = f"{MARKER}\n{redact(markdown)}"
    if len(body) <= limit:
        return body
    note = f"\n\n_The plan is longer than the {host} comment limit; cut here. The whole plan: {where or 'the CI job'}._"
    return body[: limit - len(note)] + note


def own_comment(comments: Iterable[Comment]) -> Comment | None:
    """hypergov's comment among the merge request's (the first carrying the marker: should an
    earlier bug or a copy have left two, the oldest is updated and no third is made)."""
    return next((c for c in comments if MARKER in c.body), None)


def verdict_of(*, changed_stacks: int, failed_stacks: int) -> Verdict:
    if failed_stacks:
        return "failed"
    return "changes" if changed_stacks else "no-changes"


def status_for(host: HostKind, verdict: Verdict, *, changed_stacks: int = 0, reason: str = "") -> StatusDecision:
    """The commit status for `verdict`, in the host's states, its description cut to the host's
    limit (see the module's docstring for the mapping)."""
    plural = "stack" if changed_stacks == 1 else "stacks"
    description, state = {
        "planning": ("hypergov is planning this change", "pending" if host == "github" else "running"),
        "no-changes": ("No changes", "success"),
        "changes": (f"{changed_stacks} {plural} to change", "success"),
        "failed": (f"Plan failed: {one_line(redact(reason))}" if reason else "Plan failed",
                   "failure" if host == "github" else "failed"),
    }[verdict]
    limit = GITHUB_DESCRIPTION_MAX if host == "github" else GITLAB_DESCRIPTION_MAX
    return StatusDecision(state=state, description=truncate(description, limit))


_LINK = re.compile(r'<(?P<url>[^>]+)>\s*;\s*rel="?(?P<rel>[^";]+)"?')


def github_next_page(link_header: str | None) -> str | None:
    """The `rel="next"` URL of a GitHub Link header (None: the last page)."""
    for found in _LINK.finditer(link_header or ""):
        if "next" in found["rel"].split():
            return found["url"]
    return None


def gitlab_next_page(next_page_header: str | None) -> int | None:
    """GitLab's `x-next-page` header: the next page's number, empty on the last page."""
    text = (next_page_header or "").strip()
    return int(text) if text.isdigit() else None


def failure_comment(reason: str) -> str:
    """The comment when nothing could be planned (the tree could not be read, no credentials)."""
    return f"## hypergov plan failed\n\nNothing was planned: {one_line(reason)}\n\nSee the CI job's log.\n"
