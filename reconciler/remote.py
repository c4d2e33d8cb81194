"""Following a remote governance repository: the reconciler's own clone under the state directory.

`hypergov reconcile --repo URL` (https, ssh, git://, file:// or scp-like `user@host:path`) keeps a
**bare** clone in `<state_dir>/repo/` and fetches into it before every pass. Bare, because the
reconciler never reads a working copy (trees are read from Git objects, `hypergov.gitsource`) and
the audit trail writes with plumbing: without a checkout there is no stale file, no index to lock
and nothing a person could edit there. The clone fetches only what the reconciler needs: the
followed branch into `refs/heads/<branch>` (forced: the remote is the truth, and a rewrite is
caught against the last applied commit, not by fetch) and the audit branch into
`refs/remotes/origin/<audit branch>` (the local `refs/heads/<audit branch>` holds records not yet
pushed, which a fetch must never overwrite); `--prune` drops the tracking ref when the remote's
audit branch goes away.

Credentials only as git takes them (credential helpers, `GIT_SSH_COMMAND`, `GIT_ASKPASS`, or in the
URL): the URL is written into the clone's config directly (never on a command line, where `ps`
shows it) and masked (`https://***@host/...`) in every message, git's own included; its password
(or a token given as the user name) is registered with the process's redactor, so that it is
masked wherever else it turns up (git prints `user:token@host` without the scheme in some messages). Git never
prompts (`GIT_TERMINAL_PROMPT=0`): a daemon waiting on a prompt would hang forever.

The decisions (what `--repo` names, what to do with an existing clone, which refspecs, how a
failure is classified, what a rewrite refusal says) are pure functions; `RemoteClone` acts on them.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import git

from engines.outcomes import Failure, HypergovError, PermanentError, classify_git_output
from hypergov.gitsource import RefNotFoundError
from hypergov.redaction import register_credentials

CLONE_DIR = "repo"  # under the state directory
REMOTE = "origin"
# The audit trail's branch by default; the command passes the `audit_branch` setting.
AUDIT_BRANCH = "hypergov/audit"
FETCH_TIMEOUT_S = 300.0
SCHEMES = ("https", "http", "ssh", "git", "file", "git+ssh", "ssh+git")

_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/\s]*)@")
_SCHEME = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://")


@dataclass(frozen=True)
class LocalRepo:
    """A repository on this machine, read in place (as before remotes existed)."""

    path: Path


@dataclass(frozen=True)
class RemoteRepo:
    """A repository the reconciler follows through its own clone."""

    url: str


class RepoArgumentError(ValueError):
    """`--repo` names nothing usable; the message says what is accepted."""


def parse_repo(text: str) -> LocalRepo | RemoteRepo:
    """Pure: what `--repo` names, by git's own rule: `scheme://...` is a URL; a colon before any
    slash (`host:path`, `git@host:org/repo`) is scp-like ssh; anything else is a local path."""
    if not text.strip():
        raise RepoArgumentError("--repo is empty; give a local repository path or a URL")
    scheme = _SCHEME.match(text)
    if scheme:
        if scheme["scheme"].lower() not in SCHEMES:
            raise RepoArgumentError(f"--repo {mask_url(text)}: the scheme '{scheme['scheme']}' is not supported; "
                                    f"use one of {', '.join(s + '://' for s in SCHEMES)}, user@host:path or a path")
        return RemoteRepo(text)
    if "::" in text:  # git's <transport>::<address> remote helpers (ext:: runs commands): never
        raise RepoArgumentError(f"--repo {text}: remote helpers (<transport>::<address>) are not supported")
    colon, slash = text.find(":"), text.find("/")
    if colon > 0 and (slash < 0 or colon < slash):
        if text.startswith("-"):  # an ssh option in disguise (`-oProxyCommand=...:x`): never a host
            raise RepoArgumentError(f"--repo {text}: a host name cannot begin with '-'")
        return RemoteRepo(text)
    return LocalRepo(Path(text))


def mask_url(text: str, url: str | None = None) -> str:
    """Pure: every `scheme://userinfo@` in `text` as `scheme://***@` (userinfo may hold a token),
    and the userinfo of `url` wherever else it appears (git prints `user:token@host` without the
    scheme in some messages, e.g. a git:// host it cannot look up)."""
    masked = _USERINFO.sub(r"\g<scheme>***@", text)
    found = _USERINFO.match(url or "")
    user, _, password = (found["userinfo"] if found else "").partition(":")
    # The password; or a user name long enough to be a token (`https://<token>@host`): short
    # names (`git`) are no secret, and replacing them everywhere would garble the message.
    secret = password or (user if len(user) >= 12 else "")
    return masked.replace(secret, "***") if secret else masked


def without_userinfo(url: str) -> str:
    return _USERINFO.sub(r"\g<scheme>", url)


CloneVerdict = Literal["create", "use", "repoint", "refuse"]


def clone_verdict(*, existing_url: str | None, wanted: str, has_refs: bool) -> CloneVerdict:
    """Pure: what to do with the clone directory. `existing_url` None: there is no clone yet.
    The same URL but other credentials (a rotated token) is re-pointed; so is a clone that never
    fetched anything (a typo corrected); a clone of another repository is refused."""
    if existing_url is None:
        return "create"
    if existing_url == wanted:
        return "use"
    if without_userinfo(existing_url) == without_userinfo(wanted) or not has_refs:
        return "repoint"
    return "refuse"


def fetch_refspecs(branch: str, audit_branch: str) -> tuple[str, ...]:
    """Pure: the followed branch (exact: a missing branch is an error; forced: the remote is the
    truth, a rewrite is caught against the applied commit) and the audit branch (a pattern, so that
    a remote without one yet is no error; it matches only names that begin with the audit branch's;
    not forced: a rewritten remote audit branch is never taken over, the audit push reports it)."""
    return (f"+refs/heads/{branch}:refs/heads/{branch}",
            f"refs/heads/{audit_branch}*:refs/remotes/{REMOTE}/{audit_branch}*")


def rewrite_refusal(*, branch: str, applied: str, head: str) -> str:
    """Pure: what a person reads when the branch no longer contains the commit applied last."""
    return (f"history of '{branch}' was rewritten: the last applied commit {applied[:12]} is not an ancestor of "
            f"the new head {head[:12]} (a force-push or a reset); nothing applied. Restore the history (push "
            f"{applied[:12]} back, or a commit on top of it), or apply the new head as it is with "
            "`hypergov reconcile --allow-rewrite` (plans compare with live state, so only the differences are applied)")


class RemoteGitError(HypergovError):
    """A git command against the remote failed; its classification comes from git's output."""

    def __init__(self, message: str, failure: Failure) -> None:
        super().__init__(message)
        self._failure = failure

    @property
    def failure(self) -> Failure:
        return self._failure


class CloneMismatchError(PermanentError):
    """The clone under the state directory is not one of the repository asked for."""

    reason = "clone-mismatch"


@dataclass(frozen=True)
class RemoteClone:
    """The reconciler's bare clone of `url` at `path`, following `branch`."""

    url: str
    branch: str
    path: Path
    audit_branch: str = AUDIT_BRANCH
    timeout_s: float = FETCH_TIMEOUT_S

    def __post_init__(self) -> None:
        register_credentials(self.url)

    @property
    def shown_url(self) -> str:
        return mask_url(self.url, self.url)

    def fetch(self) -> str:
        """Create or check the clone, fetch, and return the followed branch's head."""
        self._prepare()
        # Not --quiet: git then says nothing about a rejected ref, which `_audit_rejected` reads.
        self._git("fetch", "--prune", "--no-tags", REMOTE, *fetch_refspecs(self.branch, self.audit_branch),
                  remote=True, tolerate=self._audit_rejected)
        return self.head()

    def _audit_rejected(self, stderr: str) -> bool:
        """Pure: the fetch failed only because the remote's audit branch is no continuation of the
        one fetched before (the followed branch was updated): the audit push says so on its own."""
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        rejected = [ln for ln in lines if "[rejected]" in ln]
        return bool(rejected) and all(f"-> {REMOTE}/{self.audit_branch}" in ln for ln in rejected) and not any(
            ln.startswith(("fatal:", "error:")) for ln in lines)

    def head(self) -> str:
        """The followed branch's head as last fetched (no network)."""
        try:
            return self._git("rev-parse", "--verify", "--quiet", f"refs/heads/{self.branch}^{{commit}}").strip()
        except RemoteGitError as exc:
            raise RefNotFoundError(f"no branch '{self.branch}' fetched from {self.shown_url} yet") from exc

    def _prepare(self) -> None:
        existing = self._existing_url()
        verdict = clone_verdict(existing_url=existing, wanted=self.url, has_refs=existing is not None and bool(
            self._git("for-each-ref", "--count=1", "refs/").strip()))
        if verdict == "refuse":
            raise CloneMismatchError(
                f"the reconciler's clone {self.path} follows {mask_url(existing or '', existing)}, not "
                f"{self.shown_url}; "
                f"use the same --repo, or move {self.path} away (the next pass clones again; what was applied "
                "stays recorded in reconciler.json, and a rewritten history is still refused)")
        if verdict == "create":
            self.path.mkdir(parents=True, exist_ok=True)
            self._git("init", "--quiet", "--bare")
            self._git("symbolic-ref", "HEAD", f"refs/heads/{self.branch}")
        if verdict in ("create", "repoint"):
            # Written into the config file directly: a URL on git's command line shows in `ps`.
            with git.Repo(self.path).config_writer() as config:
                config.set_value(f'remote "{REMOTE}"', "url", self.url)
                config.set_value(f'remote "{REMOTE}"', "tagOpt", "--no-tags")

    def _existing_url(self) -> str | None:
        if not self.path.exists():
            return None
        try:
            repo = git.Repo(self.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            if self.path.is_dir() and not any(self.path.iterdir()):
                return None  # an empty directory (e.g. a freshly mounted volume) becomes the clone
            raise CloneMismatchError(f"{self.path} exists but is not the reconciler's clone; move it away, and "
                                     "the next pass clones again") from exc
        if not repo.bare:
            raise CloneMismatchError(f"{self.path} is a repository with a working copy, not the reconciler's bare "
                                     "clone; move it away, and the next pass clones again")
        with repo.config_reader() as config:
            url = config.get_value(f'remote "{REMOTE}"', "url", default="")
        if not url:
            raise CloneMismatchError(f"{self.path} has no remote '{REMOTE}'; move it away, and the next pass "
                                     "clones again")
        register_credentials(str(url))  # the credentials a previous run was given (rotated since, perhaps)
        return str(url)

    def _git(self, *args: str, remote: bool = False, tolerate: Callable[[str], bool] | None = None) -> str:
        command = ["git", f"--git-dir={self.path}", *args]
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}  # English: classified by its words
        what = f"git {args[0]} from {self.shown_url}" if remote else f"git {args[0]} in {self.path}"
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=self.timeout_s,
                                  stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired as exc:
            text = f"{what} timed out after {self.timeout_s:.0f} s"
            raise RemoteGitError(text, classify_git_output(text, prefix="", reason="remote")) from exc
        if done.returncode == 0 or (tolerate is not None and tolerate(done.stderr)):
            return done.stdout
        said = mask_url(done.stderr.strip() or f"exit status {done.returncode}", self.url)
        if remote and f"couldn't find remote ref refs/heads/{self.branch}" in said:
            raise RefNotFoundError(f"no branch '{self.branch}' on {self.shown_url}")
        message = f"{what} failed: {' '.join(said.split())}"
        raise RemoteGitError(message, classify_git_output(said, prefix=f"{what} failed: ", reason="remote"))


def is_ancestor(repo_path: Path, old: str, new: str) -> bool:
    """Whether commit `old` is in the history of `new`; False also when `old` is not in the
    repository at all (gone with a rewrite and a gc): then nothing shows the history is intact."""
    done = subprocess.run(["git", f"--git-dir={git.Repo(repo_path).git_dir}", "merge-base", "--is-ancestor",
                           old, new], capture_output=True, check=False, env={**os.environ, "LC_ALL": "C"})
    return done.returncode == 0


def valid_branch(name: str) -> bool:
    """Git's own rule for a branch name (`git check-ref-format --branch`), and no pattern
    characters: the name ends up in a fetch refspec."""
    if not name or "*" in name or name.startswith("-"):
        return False
    done = subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True, check=False)
    return done.returncode == 0
