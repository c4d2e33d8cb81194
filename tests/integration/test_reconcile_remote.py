"""`hypergov reconcile --repo URL`: the reconciler follows a real bare remote to which a developer's
clone pushes merges, through its own clone, with the real terraform on the embedded endpoint.
Over `file://`: each merge is applied; a force-push is refused (nothing applied, the applied
commit kept) and applied with `--allow-rewrite`. Over `git daemon` on loopback, the watch loop as
a real process: a webhook delivery with a bad signature gets 401 and is logged; the remote goes
away, a merge is pushed and a good delivery wakes the loop (202), whose fetches fail as temporary
and back off; the remote comes back and the next pass applies the merge. Results are read with
boto3 from the endpoint; the audit records are read with git from the remote's audit branch."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.integration.conftest import CREDENTIALS, audit_records, wait_for
from tests.integration.test_reconcile import _budget, _commit, _governance_repo

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SECRET = "webhook-secret-for-tests"



def _remote(root: Path) -> tuple[Path, git.Repo]:
    """A bare remote holding the trimmed governance tree, and a developer's clone pushing to it."""
    bare = root / "remote" / "gov.git"
    git.Repo.init(bare, bare=True, initial_branch="main")
    dev = _governance_repo(root / "dev")
    dev.create_remote("origin", str(bare))
    dev.git.push("origin", "main")
    return bare, dev


def _env(endpoint: EmbeddedAwsProcess, root: Path) -> dict[str, str]:
    return {**CREDENTIALS, "HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_AWS_MAX_RETRIES": "3",
            "HYPERGOV_STATE_DIR": str(root / "state"), "HYPERGOV_SETTINGS": str(root / "none.yaml"),
            "HYPERGOV_CONFIG_DIR": "config",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _applied_commit(root: Path) -> str:
    return str(json.loads((root / "state" / "reconciler.json").read_text())["branches"]["main"]["applied_commit"])


def _merge(dev: git.Repo, old: bytes, new: bytes, message: str) -> str:
    sha = _commit(dev, "config/projects/speech.yaml", old, new, message)
    dev.git.push("origin", "main")
    return sha


def test_merges_pushed_to_the_remote_are_applied_and_a_force_push_is_refused(own_endpoint: EmbeddedAwsProcess,
                                                                              tmp_path: Path) -> None:
    endpoint = own_endpoint
    bare, dev = _remote(tmp_path)
    env = _env(endpoint, tmp_path)
    url = bare.as_uri()

    def reconcile(*args: str) -> Result:
        return CliRunner().invoke(main, ["reconcile", "--repo", url, *args], env=env)

    first = reconcile()
    assert first.exit_code == 0, first.output
    assert "applied: 4 stack(s) planned, 3 changed (first pass: every stack)" in first.output
    assert _applied_commit(tmp_path) == dev.head.commit.hexsha
    assert git.Repo(tmp_path / "state" / "repo").bare
    assert dev.head.commit.hexsha == git.Repo(bare).commit("main").hexsha  # the governed branch untouched

    lowered = _merge(dev, b"monthly_usd: 120000", b"monthly_usd: 90000", "speech: lower the budget")
    merged = reconcile()
    assert merged.exit_code == 0 and "1 stack(s) planned, 1 changed (since" in merged.output, merged.output
    assert _budget(endpoint) == 90000.0 and _applied_commit(tmp_path) == lowered
    pushed = audit_records(bare)  # on the remote's audit branch, pushed by the reconciler
    assert [(r["type"], r.get("stack")) for r in pushed if r.get("source_commit") == lowered] == [
        ("intent", None), ("outcome", "project-speech")]
    assert pushed[-1]["outcome"] == "applied" and pushed[-1]["source_author"] == "platform-admin <admin@example.com>"
    assert git.Repo(bare).commit("main").hexsha == lowered  # the governed branch holds no audit commit

    # Someone rewrites main: the applied merge is dropped and another change force-pushed in its place.
    dev.git.reset("--hard", "HEAD~1")
    rewritten = _merge_forced(dev, b"monthly_usd: 120000", b"monthly_usd: 70000", "speech: another history")
    refused = reconcile()
    assert refused.exit_code == 1, refused.output
    assert f"main@{rewritten[:12]}: REFUSED, history of 'main' was rewritten" in refused.output
    assert f"last applied commit {lowered[:12]} is not an ancestor of the new head {rewritten[:12]}" in refused.output
    assert "--allow-rewrite" in refused.output and "Traceback" not in refused.output
    assert _budget(endpoint) == 90000.0 and _applied_commit(tmp_path) == lowered  # nothing applied
    refusal = audit_records(bare)[-1]  # recorded, and pushed
    assert (refusal["type"], refusal["source_commit"], refusal["applied_commit"]) == ("refused", rewritten, lowered)

    allowed = reconcile("--allow-rewrite")
    assert allowed.exit_code == 0, allowed.output
    assert _budget(endpoint) == 70000.0 and _applied_commit(tmp_path) == rewritten


def _merge_forced(dev: git.Repo, old: bytes, new: bytes, message: str) -> str:
    sha = _commit(dev, "config/projects/speech.yaml", old, new, message)
    dev.git.push("--force", "origin", "main")
    return sha


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class GitDaemon:
    """`git daemon` serving the remote's directory on a fixed loopback port (it takes no port 0),
    pushes enabled (the audit branch), stopped and started again on the same port."""

    def __init__(self, base: Path) -> None:
        self.base, self.port = base, _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"git://127.0.0.1:{self.port}/gov.git"

    def start(self) -> GitDaemon:
        command = ["git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr", f"--base-path={self.base}",
                   "--listen=127.0.0.1", f"--port={self.port}", str(self.base)]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while subprocess.run(["git", "ls-remote", self.url], capture_output=True, check=False).returncode:
            assert time.monotonic() < deadline and self.process.poll() is None, "git daemon did not start"
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None



def _deliver(port: int, payload: dict[str, object], *, secret: str) -> int:
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/", body=body, headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": signature,
                                                        "Content-Type": "application/json"})
    status = connection.getresponse().status
    connection.close()
    return status


def test_the_watch_loop_over_git_daemon_survives_the_remote_going_away_and_wakes_on_a_webhook(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    endpoint = own_endpoint
    bare, dev = _remote(tmp_path)
    daemon = GitDaemon(bare.parent).start()
    webhook_port = _free_port()
    log = tmp_path / "reconciler.log"
    env = {**os.environ, **_env(endpoint, tmp_path), "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT),
           "HYPERGOV_WEBHOOK_SECRET": SECRET}
    # An hour between periodic passes: every pass after the first one here comes from the webhook's wake
    # or from the backoff's retries.
    with open(log, "w") as out:
        reconciler = subprocess.Popen([sys.executable, "-m", "cli.main", "reconcile", "--repo", daemon.url,
                                       "--watch", "3600", "--max-backoff", "2", "--webhook-port", str(webhook_port)],
                                      stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        first = wait_for(log, "applied: 4 stack(s) planned, 3 changed (first pass: every stack)")
        wait_for(log, f"webhook: listening on http://127.0.0.1:{webhook_port}/")
        assert _deliver(webhook_port, {"ref": "refs/heads/main"}, secret="a guess") == 401
        wait_for(log, "webhook: REFUSED 401 from 127.0.0.1: bad X-Hub-Signature-256", after=first)

        daemon.stop()  # the remote goes away; a merge still lands (pushed to the bare repository directly)
        lowered = _merge(dev, b"monthly_usd: 120000", b"monthly_usd: 90000", "speech: lower the budget")
        assert _deliver(webhook_port, {"ref": "refs/heads/main"}, secret=SECRET) == 202
        woken = wait_for(log, "webhook: 202 from 127.0.0.1", after=first)
        failed = wait_for(log, f"main: pass failed (temporary): git fetch from {daemon.url} failed", after=woken)
        wait_for(log, "main: retrying in", after=failed)
        wait_for(log, "main: pass failed (temporary)", after=failed + 1)  # and again: still alive, backing off
        assert reconciler.poll() is None and _budget(endpoint) == 120000.0

        daemon.start()  # back, on the same port
        applied = wait_for(log, f"main@{lowered[:12]}: applied", after=failed)
        assert _budget(endpoint) == 90000.0 and _applied_commit(tmp_path) == lowered
        reconciler.send_signal(signal.SIGTERM)
        assert reconciler.wait(timeout=120) == 0, log.read_text()
    finally:
        daemon.stop()
        if reconciler.poll() is None:
            reconciler.kill()
    said = log.read_text()
    assert "1 stack(s) planned, 1 changed" in said[applied:] and "Traceback" not in said
    assert "pushed 2 audit record(s) to origin" in said[failed:applied]  # over git://, once the remote was back
    assert [(r["type"], r.get("stack")) for r in audit_records(bare) if r.get("source_commit") == lowered] == [
        ("intent", None), ("outcome", "project-speech")]
    assert SECRET not in said and "reconciler stopped (SIGTERM)" in said
