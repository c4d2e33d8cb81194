"""Masking at the source (issue 33): a secret hypergov read from a FILE never appears in a log line,
text or JSON, wherever it turns up.

The webhook's shared secret from `--webhook-secret-file`, with the reconciler daemon as a real
process (`hypergov reconcile --watch --webhook-port 0`) and a real signed delivery over HTTP:
(a) in a branch name (a push to `refs/heads/<secret>`, which the 204 line quotes); (b) in a URL
(`--repo file://.../<secret>/...`, quoted by the failed fetch's message and git's own); (c) in a
setting and a tree value (`audit_branch` in hypergov.yaml, named by the audit push's failure; the
cost centre COST002 quotes). Trees fail validation or cannot be fetched: no pass needs an engine.

A Git host token from `--token-file`, in a stack's failure, the plan printed, its Markdown file,
the posted comment and commit status (`plan --base --post` against the GitHub stand-in). A
notification URL from a sink's `url_file`, read by the notifier when it sends, in a later log line
quoting it (whole, or only its token) in both formats.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner

import reconciler.merge_request_plan as use_case
from cli.main import main
from engines.outcomes import permanent
from engines.plan import Plan, StackName
from engines.settings import NotificationSettings, NotificationSink
from reconciler.logs import EventLog, configure
from reconciler.merge_request_plan import MergeRequestPlan
from reconciler.notify_send import Notifier
from tests.reconciler import git_host_fake
from tests.reconciler.git_host_fake import FakeHost
from tests.reconciler.test_logs import committed_tree

ROOT = Path(__file__).resolve().parents[2]
ACTOR = git.Actor("admin", "admin@example.com")
SECRET = "whsec-7Hq2ZpLmX4vR8tKc"  # a usable branch name, so that a push can name it
FORMATS = ("text", "json")


class Reconciler:
    """`hypergov reconcile --watch` as a process; everything it prints in one file."""

    def __init__(self, root: Path, fmt: str, *, args: tuple[str, ...] = (), settings: str = "",
                 config_dir: str | None = None) -> None:
        (root / "webhook-secret").write_text(SECRET + "\n")  # as a mounted Secret holds it
        (root / "hypergov.yaml").write_text(settings)
        self.fmt, self.log = fmt, root / "reconciler.log"
        env = {k: v for k, v in os.environ.items() if k != "HYPERGOV_WEBHOOK_SECRET"}
        env |= {"HYPERGOV_SETTINGS": str(root / "hypergov.yaml"), "HYPERGOV_STATE_DIR": str(root / "state"),
                "HYPERGOV_CONFIG_DIR": config_dir or str(root / "gov" / "config"), "PYTHONPATH": str(ROOT),
                "PYTHONUNBUFFERED": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        with open(self.log, "w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "cli.main", "reconcile", "--watch", "3600", "--webhook-port", "0",
                 "--webhook-secret-file", str(root / "webhook-secret"), "--log-format", fmt, *args],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root)

    def wait_for(self, pattern: str, timeout_s: float = 120.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = re.search(pattern, self.log.read_text())
            if found:
                return found
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"{pattern!r} did not appear; the reconciler said:\n{self.log.read_text()}")

    def port(self) -> int:
        where = r'"event": "webhook.listening".*"port": (\d+)' if self.fmt == "json" else \
            r"webhook: listening on http://127\.0\.0\.1:(\d+)/"
        return int(self.wait_for(where)[1])

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=60) == 0, self.log.read_text()
        return self.log.read_text()


@pytest.fixture
def reconcilers() -> Iterator[list[Reconciler]]:
    started: list[Reconciler] = []
    yield started
    for reconciler in started:
        if reconciler.process.poll() is None:
            reconciler.process.kill()
            reconciler.process.wait(timeout=60)


def _push(port: int, ref: str) -> int:
    """A push event signed with the shared secret, as GitHub delivers it."""
    body = json.dumps({"ref": ref}).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/hooks/hypergov", body=body, headers={
        "X-GitHub-Event": "push", "X-Hub-Signature-256": signature, "Content-Type": "application/json"})
    status = connection.getresponse().status
    connection.close()
    return status


def _events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_branch_named_like_the_webhook_secret_from_a_file_is_masked(
        tmp_path: Path, fmt: str, reconcilers: list[Reconciler]) -> None:
    """Issue 33's report: the secret read from --webhook-secret-file, pushed as a branch name."""
    committed_tree(tmp_path / "gov", cost_centre="not a cost centre")
    reconciler = Reconciler(tmp_path, fmt)
    reconcilers.append(reconciler)
    assert _push(reconciler.port(), f"refs/heads/{SECRET}") == 204  # signed with it: accepted, not followed
    reconciler.wait_for("GitHub push to ")
    output = reconciler.stop()
    assert SECRET not in output
    quoted = "GitHub push to 'refs/heads/***', not refs/heads/main; nothing to do"
    if fmt == "json":
        (delivery,) = [e for e in _events(output) if e["event"] == "webhook.delivery"]
        assert delivery["status"] == 204 and delivery["message"] == f"webhook: 204 from 127.0.0.1: {quoted}"
    else:
        assert f"webhook: 204 from 127.0.0.1: {quoted}\n" in output


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_webhook_secret_from_a_file_in_a_remote_url_never_appears(
        tmp_path: Path, fmt: str, reconcilers: list[Reconciler]) -> None:
    """The same secret in the path of the governance remote's URL (`--repo`): the fetch fails, and
    both hypergov's message and git's own quote the URL."""
    url = f"file://{tmp_path}/{SECRET}/governance.git"  # no such repository
    reconciler = Reconciler(tmp_path, fmt, args=("--repo", url), config_dir="config")
    reconcilers.append(reconciler)
    reconciler.port()
    reconciler.wait_for("pass failed")
    output = reconciler.stop()
    assert SECRET not in output
    masked = f"git fetch from file://{tmp_path}/***/governance.git failed: fatal: '{tmp_path}/***/governance.git' " \
             "does not appear to be a git repository"
    if fmt == "json":
        (failed, *_) = [e for e in _events(output) if e["event"] == "pass.failed"]
        assert masked in failed["message"] and failed["kind"] == "permanent"
    else:
        assert masked in output


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_webhook_secret_from_a_file_as_a_setting_and_a_tree_value_never_appears(
        tmp_path: Path, fmt: str, reconcilers: list[Reconciler]) -> None:
    """The same secret as the audit branch's name (`audit_branch` in hypergov.yaml) and as the
    tree's cost centre: the refused pass's `rejected` record is pushed to a remote that declines
    it, and the push failure names the branch; COST002 quotes the cost centre."""
    gov = committed_tree(tmp_path / "gov", cost_centre=SECRET)
    remote = tmp_path / "remote.git"
    git.Repo.init(remote, bare=True, initial_branch="main")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'GH006: Protected branch update failed.' >&2\nexit 1\n")
    hook.chmod(0o755)
    gov.create_remote("origin", str(remote))
    reconciler = Reconciler(tmp_path, fmt, settings=f"audit_branch: {SECRET}\n")
    reconcilers.append(reconciler)
    reconciler.port()
    reconciler.wait_for("audit record.* not pushed" if fmt == "text" else '"event": "audit.push_failed"')
    output = reconciler.stop()
    assert SECRET not in output
    said = "the remote's *** could not be fetched"
    if fmt == "json":
        events = _events(output)
        (failed,) = [e for e in events if e["event"] == "audit.push_failed"]
        assert said in failed["error"] and "couldn't find remote ref refs/heads/***" in failed["error"]
        (problem,) = [e for e in events if e["event"] == "tree.problem"]
        assert problem["rule"] == "COST002" and "cost centre '***'" in problem["message"]
    else:
        assert said in output and "couldn't find remote ref refs/heads/***" in output
        assert "COST002" in output and "cost centre '***'" in output


def _planned(token: str) -> MergeRequestPlan:
    """A merge request's plan whose one failed stack quotes a URL holding the token (as a provider's
    error may quote the address it was given)."""
    failure = permanent(f"GET https://git.example.com/api/v4/projects?private_token={token} answered 500", "git")
    return MergeRequestPlan(plans=[Plan(stack=StackName("project-vision"), engine="terraform", changes=())],
                            failures={StackName("project-speech"): failure},
                            leading=[f"### Governance summary\n\nthe job's token {token} (never shown)"])


@pytest.fixture
def github() -> Iterator[FakeHost]:
    fake = git_host_fake.github()
    yield from git_host_fake.serve(fake)
    assert fake.violations == []


def test_a_git_host_token_from_a_file_is_in_no_output_file_or_post(
        tmp_path: Path, github: FakeHost, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "ghp_FROM0A0FILE0TOKEN0NEVER0SHOWN0000"
    (tmp_path / "token").write_text(token + "\n")
    committed_tree(tmp_path / "gov", cost_centre="CC-12")
    monkeypatch.setattr(use_case, "plan_merge_request", lambda *_, **__: _planned(token))
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "head": {"sha": "9" * 40}}}))
    env = {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_CONFIG_DIR": str(tmp_path / "gov" / "config"), "GITHUB_ACTIONS": "true",
           "GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_PATH": str(event), "GITHUB_API_URL": github.api_url,
           "GITHUB_TOKEN": ""}
    monkeypatch.chdir(tmp_path / "gov")
    for as_json in (False, True):
        result = CliRunner().invoke(main, ["plan", "--base", "main", "--private-state", "--markdown",
                                           str(tmp_path / "mr.md"), "--post", "--token-file", str(tmp_path / "token"),
                                           *(["--json"] if as_json else [])], env=env)
        assert result.exit_code == 1, result.output
        assert token not in result.output
        assert "private_token=***" in result.output
        assert ('"stack": "project-speech",\n    "error"' if as_json else "ERROR project-speech") in result.output
        markdown = (tmp_path / "mr.md").read_text()
        assert token not in markdown and "the job's token *** (never shown)" in markdown
    (comment,) = github.marked()
    posted = json.dumps([comment, github.statuses])
    assert github.statuses and token not in posted and "private_token=***" in comment["body"]


class Posts:
    def __init__(self) -> None:
        self.urls: list[str] = []

    def __call__(self, url: str, body: bytes) -> int:
        self.urls.append(url)
        return 200


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_notification_url_from_a_file_is_masked_whole_and_by_its_token(tmp_path: Path, fmt: str) -> None:
    """Slack's incoming-webhook URL carries its token in the path: read from the sink's file when a
    message is sent (after logging was configured), it is masked in every later line, whole or in
    part; the message itself went to the real URL."""
    token = "xoxbT0ken0InThe0Path0Of0Slack"
    url = f"https://hooks.slack.example/services/T0AAA0000/B0BBB0000/{token}"
    (tmp_path / "slack-url").write_text(url + "\n")
    out, err = io.StringIO(), io.StringIO()
    log = EventLog(configure(fmt, environ={}, out=out, err=err), branch="main")  # type: ignore[arg-type]
    posts = Posts()
    notifier = Notifier.for_state_dir(NotificationSettings(sinks=[NotificationSink(
        kind="slack", url_file=tmp_path / "slack-url")]), tmp_path, post=posts)
    failure = permanent("boom", "terraform")
    deliveries = notifier.after_failure(failure, branch="main")
    assert posts.urls == [url] and [d.failure for d in deliveries] == [None]
    log.event("notify.sent", f"told {url}", to_stdout=True, sink=url, detail={"token": token})
    log.event("notify.failed", f"<urlopen error unknown url type: {url.replace('https', 'htps')}>",
              level=40, path=f"/services/T0AAA0000/B0BBB0000/{token}")
    said = out.getvalue() + err.getvalue()
    assert token not in said and url not in said and "T0AAA0000" not in said
    assert "told ***" in said and "/B0BBB0000/" not in said and "htps://hooks.slack.example/services/" in said



def test_a_usage_error_quoting_a_url_that_holds_the_file_secret_is_masked(tmp_path: Path) -> None:
    """Read before `--repo` is checked: the usage error quotes the URL, the secret masked."""
    (tmp_path / "webhook-secret").write_text(SECRET + "\n")
    result = CliRunner().invoke(main, [
        "reconcile", "--watch", "5", "--webhook-port", "0", "--webhook-secret-file", str(tmp_path / "webhook-secret"),
        "--repo", f"htps://git.example.com/{SECRET}/governance.git"],
        env={"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state")})
    assert result.exit_code == 1
    assert SECRET not in result.output
    assert "--repo htps://git.example.com/***/governance.git: the scheme 'htps' is not supported" in result.output


def test_audit_records_are_masked_before_they_are_chained(tmp_path: Path) -> None:
    """A record quoting a secret loaded from a file (a refusal's reason, a stack's error) is
    recorded masked; the chain over what was recorded is intact."""
    from reconciler.audit import AuditLog, refused_payload
    from reconciler.audit_verify import verify_branch
    from reconciler.git_host import token_from

    token = "glpat-FROM0A0FILE0NEVER0RECORDED"
    (tmp_path / "token").write_text(token)
    assert token_from("gitlab", {}, tmp_path / "token") == token
    repo = committed_tree(tmp_path / "gov", cost_centre="CC-1234")
    log = AuditLog.open(tmp_path / "gov", state_dir=tmp_path / "state", branch="hypergov/audit")
    written = log.write([refused_payload(branch=f"feature/{token}", head=repo.head.commit.hexsha,
                                         source_author="dev <dev@example.com>", reason=f"fetch with {token} failed",
                                         applied_commit=None)], subject="refused")
    assert written[0]["branch"] == "feature/***" and written[0]["refusal"] == "fetch with *** failed"
    stored = subprocess.run(["git", "-C", str(tmp_path / "gov"), "log", "-p", "hypergov/audit"], capture_output=True,
                            text=True, check=True).stdout
    assert token not in stored and "fetch with *** failed" in stored
    assert verify_branch(log.store).broken is None


def test_the_audit_signing_key_read_from_its_file_is_masked(tmp_path: Path) -> None:
    """The key hypergov reads to sign audit commits: its text never reaches a log line."""
    from reconciler.audit_signing import SigningKey

    SigningKey.of_writer(tmp_path / "signing_key")  # made and written, then read as a restart reads it
    SigningKey.load(tmp_path / "signing_key")
    text = (tmp_path / "signing_key").read_text()
    body = [line for line in text.splitlines() if not line.startswith("-----")]
    err = io.StringIO()
    log = EventLog(configure("json", environ={}, err=err), branch="main")
    log.event("audit.failed", f"cannot sign with {text}", line=f"-----BEGIN OPENSSH PRIVATE KEY-----{body[-1]}")
    assert not any(line in err.getvalue() for line in body)
    (line,) = _events(err.getvalue())
    assert line["message"] == "cannot sign with ***" and line["line"] == "-----BEGIN OPENSSH PRIVATE KEY-----***"
