"""The merge request's plan posted to its Git host (`hypergov plan --base REF --post`): GitHub's
REST API (issue comments, commit statuses) and GitLab's (merge request notes, commit statuses).
`reconciler.git_host` decides what to say; this module sends it.

HTTP goes through a `Transport` (one request in, one response out; the standard library's urllib
by default, without following redirects, so that the token is never sent to another address), so
that tests put a local server behind it. Each request has a timeout; a temporary failure (HTTP 429,
5xx, a rate limit's 403, a connection error or timeout) is tried again with the shared backoff
(`engines.outcomes.Backoff`, honouring Retry-After) up to `attempts` times; a permanent one (401,
403, 404, 422) is raised at once as a `GitHostError` whose failure says which, and for 401/403
which permissions the token needs. The token is only ever a request header: it is registered with
the process's redactor (`hypergov.redaction`) and every message this module makes passes through
it, so it is in no log line, error or exception text; what is sent (comment bodies, status
descriptions) passes through it too, so no secret hypergov loaded is posted.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from engines.outcomes import Backoff, Failure, HypergovError, permanent, temporary
from hypergov.redaction import redact, redacted, register
from reconciler.git_host import (
    STATUS_CONTEXT,
    Comment,
    HostKind,
    MergeRequestTarget,
    StatusDecision,
    comment_body,
    github_next_page,
    gitlab_next_page,
    own_comment,
)

HTTP_TIMEOUT_S = 15.0
ATTEMPTS = 4
MAX_PAGES = 100  # 100 comments a page: a merge request with more than 10,000 comments is not searched further
GITHUB_API_VERSION = "2022-11-28"
PERMISSIONS: Mapping[HostKind, str] = {
    "github": "the token needs `pull-requests: write` (or `issues: write`) and `statuses: write` on the "
              "repository (GITHUB_TOKEN: set them under `permissions:` in the workflow)",
    "gitlab": "the token needs the `api` scope and at least the Developer role in the project",
}


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes | None = None


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]  # names in lower case
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body or b"null")


Transport = Callable[[HttpRequest], HttpResponse]  # raises OSError (TimeoutError included) when unreachable


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A 3xx is answered as it is: following it would send the token wherever it points."""

    def redirect_request(self, *_: Any, **__: Any) -> None:
        return None


def urllib_transport(timeout_s: float = HTTP_TIMEOUT_S) -> Transport:
    opener = urllib.request.build_opener(_NoRedirect())

    def send(request: HttpRequest) -> HttpResponse:
        prepared = urllib.request.Request(request.url, data=request.body, method=request.method,
                                          headers=dict(request.headers))
        try:
            with opener.open(prepared, timeout=timeout_s) as response:
                return HttpResponse(int(response.status), {k.lower(): v for k, v in response.headers.items()},
                                    response.read())
        except urllib.error.HTTPError as exc:
            headers = {k.lower(): v for k, v in exc.headers.items()} if exc.headers else {}
            return HttpResponse(int(exc.code), headers, exc.read() or b"")
    return send


class GitHostError(HypergovError):
    """A request to the Git host failed; `failure` says whether trying again may help."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self._failure = failure

    @property
    def failure(self) -> Failure:
        return self._failure


class HostApi(Protocol):
    """What posting needs of a Git host (GitHub's and GitLab's APIs below; fakes in tests)."""

    target: MergeRequestTarget

    def list_comments(self) -> list[Comment]: ...

    def create_comment(self, body: str) -> Comment: ...

    def update_comment(self, comment_id: int, body: str) -> None: ...

    def set_status(self, status: StatusDecision) -> None: ...


def _retry_after(headers: Mapping[str, str]) -> float:
    text = headers.get("retry-after", "").strip()
    return float(text) if text.isdigit() else 0.0


@dataclass
class _Api(ABC):
    """What both hosts' clients share: requests with retries, failures classified, the token masked.
    Each host says how the token is sent (`_headers`)."""

    target: MergeRequestTarget
    token: str = field(repr=False)  # never in a repr, a traceback's locals aside
    transport: Transport = field(default_factory=urllib_transport)
    attempts: int = ATTEMPTS
    sleep: Callable[[float], None] = time.sleep
    backoff: Callable[[], Backoff] = lambda: Backoff(base_s=1.0, cap_s=30.0)

    def __post_init__(self) -> None:
        register(self.token)

    @abstractmethod
    def _headers(self) -> dict[str, str]:
        """The host's authentication and content headers."""

    def _mask(self, text: str) -> str:
        return redact(text, (self.token,))

    def _failure(self, what: str, response: HttpResponse) -> Failure:
        """Pure: a response that is not a success, classified; the host's own message quoted."""
        try:
            said = response.json()
        except ValueError:
            said = None
        message = said.get("message", said.get("error", "")) if isinstance(said, dict) else ""
        detail = " ".join(str(message).split())[:300]
        where = f"{self.target.label}: {what}: HTTP {response.status}{f' ({detail})' if detail else ''}"
        status = response.status
        rate_limited = status in (403, 429) and (response.headers.get("x-ratelimit-remaining") == "0"
                                                 or "retry-after" in response.headers)
        if status == 429 or status >= 500 or rate_limited:
            return temporary(self._mask(f"{where}; try again later"), "git-host-unavailable",
                             retry_after_s=_retry_after(response.headers))
        if status in (401, 403):
            word = "did not accept the token" if status == 401 else "refused the request"
            return permanent(self._mask(f"{where}: {self.target.host} {word}; {PERMISSIONS[self.target.host]}"),
                             "git-host-access-denied")
        if 300 <= status < 400:
            return permanent(self._mask(f"{where}: redirected (to {response.headers.get('location', '?')}); give "
                                        "--api-url the API's own address"), "git-host-redirect")
        return permanent(self._mask(where), "git-host-rejected")

    def _send(self, method: str, url: str, what: str, payload: object = None) -> HttpResponse:
        """One request, tried again on temporary failures; a permanent one or the last is raised."""
        if not url.startswith(self.target.api_url + "/"):  # a Link header pointing elsewhere: no token there
            raise GitHostError(permanent(self._mask(f"{self.target.label}: {what}: the host pointed at "
                                                    f"{url}, outside {self.target.api_url}"), "git-host-redirect"))
        body = None if payload is None else json.dumps(redacted(payload)).encode()
        headers = {**self._headers(), **({"Content-Type": "application/json"} if body is not None else {})}
        backoff = self.backoff()
        failure: Failure | None = None
        for attempt in range(max(1, self.attempts)):
            if attempt:
                self.sleep(backoff.next_delay(failure))
            try:
                response = self.transport(HttpRequest(method, url, headers, body))
            except OSError as exc:  # refused, reset, timed out, no such host: never the token in the text
                failure = temporary(self._mask(f"{self.target.label}: {what}: cannot reach {self.target.api_url} "
                                               f"({type(exc).__name__}: {exc})"), "git-host-connection")
                continue
            if 200 <= response.status < 300:
                return response
            failure = self._failure(what, response)
            if not failure.temporary:
                break
        assert failure is not None
        raise GitHostError(failure)

    def _json(self, response: HttpResponse, what: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise GitHostError(permanent(f"{self.target.label}: {what}: the answer is not JSON",
                                         "git-host-rejected")) from None


def _comment(found: Any, what: str, label: str) -> Comment:
    if not isinstance(found, dict) or not isinstance(found.get("id"), int):
        raise GitHostError(permanent(f"{label}: {what}: unexpected answer (no comment id)", "git-host-rejected"))
    return Comment(id=found["id"], body=str(found.get("body") or ""))


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


@dataclass
class GitHubApi(_Api):
    """GitHub's REST API: a pull request's comments are its issue's comments."""

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": GITHUB_API_VERSION, "User-Agent": "hypergov"}

    @property
    def _repo(self) -> str:
        owner, _, repo = self.target.project.partition("/")
        return f"{self.target.api_url}/repos/{_q(owner)}/{_q(repo)}"

    def list_comments(self) -> list[Comment]:
        url: str | None = f"{self._repo}/issues/{self.target.number}/comments?per_page=100"
        found: list[Comment] = []
        for _ in range(MAX_PAGES):
            if url is None:
                break
            response = self._send("GET", url, "listing comments")
            page = self._json(response, "listing comments")
            found += [_comment(c, "listing comments", self.target.label) for c in (page or [])]
            url = github_next_page(response.headers.get("link"))
        return found

    def create_comment(self, body: str) -> Comment:
        response = self._send("POST", f"{self._repo}/issues/{self.target.number}/comments", "creating the comment",
                              {"body": body})
        return _comment(self._json(response, "creating the comment"), "creating the comment", self.target.label)

    def update_comment(self, comment_id: int, body: str) -> None:
        self._send("PATCH", f"{self._repo}/issues/comments/{comment_id}", "updating the comment", {"body": body})

    def set_status(self, status: StatusDecision) -> None:
        payload: dict[str, object] = {"state": status.state, "description": status.description,
                                      "context": STATUS_CONTEXT}
        if self.target.job_url:
            payload["target_url"] = self.target.job_url
        self._send("POST", f"{self._repo}/statuses/{_q(self.target.head_sha)}", "setting the commit status", payload)


@dataclass
class GitLabApi(_Api):
    """GitLab's REST API (v4): merge request notes and commit statuses."""

    def _headers(self) -> dict[str, str]:
        return {"PRIVATE-TOKEN": self.token, "Accept": "application/json", "User-Agent": "hypergov"}

    @property
    def _project(self) -> str:
        return f"{self.target.api_url}/projects/{_q(self.target.project)}"

    def list_comments(self) -> list[Comment]:
        notes = f"{self._project}/merge_requests/{self.target.number}/notes"
        found: list[Comment] = []
        page: int | None = 1
        for _ in range(MAX_PAGES):
            if page is None:
                break
            response = self._send("GET", f"{notes}?sort=asc&order_by=created_at&per_page=100&page={page}",
                                  "listing notes")
            found += [_comment(n, "listing notes", self.target.label)
                      for n in (self._json(response, "listing notes") or [])
                      if not (isinstance(n, dict) and n.get("system"))]  # system notes: GitLab's own lines
            page = gitlab_next_page(response.headers.get("x-next-page"))
        return found

    def create_comment(self, body: str) -> Comment:
        response = self._send("POST", f"{self._project}/merge_requests/{self.target.number}/notes",
                              "creating the note", {"body": body})
        return _comment(self._json(response, "creating the note"), "creating the note", self.target.label)

    def update_comment(self, comment_id: int, body: str) -> None:
        self._send("PUT", f"{self._project}/merge_requests/{self.target.number}/notes/{comment_id}",
                   "updating the note", {"body": body})

    def set_status(self, status: StatusDecision) -> None:
        payload: dict[str, object] = {"state": status.state, "name": STATUS_CONTEXT,
                                      "description": status.description}
        if self.target.job_url:
            payload["target_url"] = self.target.job_url
        self._send("POST", f"{self._project}/statuses/{_q(self.target.head_sha)}", "setting the commit status",
                   payload)


def host_api(target: MergeRequestTarget, token: str, **options: Any) -> GitHubApi | GitLabApi:
    return (GitHubApi if target.host == "github" else GitLabApi)(target, token, **options)


@dataclass(frozen=True)
class Posted:
    comment_id: int
    created: bool  # False: hypergov's comment was found by its marker and updated
    status: StatusDecision


def post_plan(api: HostApi, *, markdown: str, status: StatusDecision, where: str | None = None) -> Posted:
    """Create or update hypergov's one comment on the merge request, then set the commit status."""
    body = comment_body(markdown, host=api.target.host, where=where)
    existing = own_comment(api.list_comments())
    if existing is None:
        comment_id, created = api.create_comment(body).id, True
    else:
        if existing.body != body:
            api.update_comment(existing.id, body)
        comment_id, created = existing.id, False
    api.set_status(status)
    return Posted(comment_id=comment_id, created=created, status=status)
