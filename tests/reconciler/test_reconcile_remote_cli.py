"""`hypergov reconcile --repo URL` from the command line, before any engine work: a token in the
URL never reaches stdout or stderr (a real `hypergov` process, real `git` against a loopback HTTP
server that refuses or fails, one pass and the watch loop), a clone made for another URL is
refused clearly, and bad options are usage errors (exit 1). Passes that apply, over file:// and
git daemon with terraform, are in tests/integration/test_reconcile_remote.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import main

TOKEN = "ghp_ThisTokenMustNeverBePrinted0123456789"
ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    # A git of its own: no credential helper or URL rewrite of this machine's config takes part.
    return {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "PYTHONPATH": str(ROOT), **extra}


class _Refusing(BaseHTTPRequestHandler):
    """A Git host that answers every request with the status the test set."""

    status = 401

    def do_GET(self) -> None:
        self.send_response(self.status)
        if self.status == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture(params=[401, 503])
def git_host(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    handler = type("Handler", (_Refusing,), {"status": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://x-access-token:{TOKEN}@127.0.0.1:{server.server_address[1]}/acme/gov.git", request.param
    finally:
        server.shutdown()
        server.server_close()


def _hypergov(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "reconcile", *args], capture_output=True, text=True,
                          env={**os.environ, **_env(tmp_path)}, cwd=tmp_path, timeout=120, check=False)


def test_a_token_in_the_url_never_reaches_the_output_of_one_pass(git_host: tuple[str, int], tmp_path: Path) -> None:
    url, status = git_host
    done = _hypergov(tmp_path, "--repo", url)
    assert done.returncode == 1, done.stderr
    said = done.stdout + done.stderr
    assert TOKEN not in said and "Traceback" not in said
    assert "git fetch from http://***@127.0.0.1:" in said  # what failed, and where, masked
    assert ("Authentication failed" if status == 401 else "returned error: 503") in said
    assert TOKEN in (tmp_path / "state" / "repo" / "config").read_text()  # kept only where git keeps it


def test_a_token_in_the_url_never_reaches_the_output_of_the_watch_loop(git_host: tuple[str, int],
                                                                       tmp_path: Path) -> None:
    url, status = git_host
    log = tmp_path / "daemon.log"
    with open(log, "w") as out:
        daemon = subprocess.Popen([sys.executable, "-m", "cli.main", "reconcile", "--repo", url, "--watch", "0.2",
                                   "--max-backoff", "0.5"], stdout=out, stderr=subprocess.STDOUT,
                                  env={**os.environ, **_env(tmp_path), "PYTHONUNBUFFERED": "1"}, cwd=tmp_path)
    kind = "permanent" if status == 401 else "temporary"
    try:
        deadline = time.monotonic() + 60
        while log.read_text().count(f"pass failed ({kind})") < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0
    finally:
        if daemon.poll() is None:
            daemon.kill()
    said = log.read_text()
    assert said.count(f"pass failed ({kind}): git fetch from http://***@127.0.0.1:") >= 2, said
    assert TOKEN not in said and "Traceback" not in said and "reconciler stopped (SIGTERM)" in said


def _bare_with_commit(path: Path) -> str:
    git.Repo.init(path, bare=True, initial_branch="main")
    work = git.Repo.clone_from(path.as_uri(), path.with_suffix(".work"))
    (Path(work.working_dir) / "README").write_text("no tree yet")
    work.index.add(["README"])
    actor = git.Actor("dev", "dev@example.com")
    work.index.commit("start", author=actor, committer=actor)
    work.git.push("origin", "HEAD:main")
    return path.as_uri()


def test_a_clone_made_for_another_url_is_refused(tmp_path: Path) -> None:
    one, two = _bare_with_commit(tmp_path / "one.git"), _bare_with_commit(tmp_path / "two.git")
    first = CliRunner().invoke(main, ["reconcile", "--repo", one], env=_env(tmp_path))
    assert first.exit_code == 1 and "'config/' does not exist" in first.output, first.output  # but cloned
    other = CliRunner().invoke(main, ["reconcile", "--repo", two], env=_env(tmp_path))
    assert other.exit_code == 1 and "Traceback" not in other.output
    assert f"follows {one}, not {two}" in other.output and "move" in other.output


@pytest.mark.parametrize(("args", "extra_env", "message"), [
    pytest.param(["--repo", "ftp://host/gov.git"], {}, "the scheme 'ftp' is not supported", id="scheme"),
    pytest.param(["--repo", "no/such/dir"], {}, "no such directory", id="missing-local-path"),
    pytest.param(["--repo", "file:///nowhere.git"], {"HYPERGOV_CONFIG_DIR": "/abs/config"},
                 "config_dir is the tree's path inside the repository", id="absolute-config-with-url"),
    pytest.param(["--repo", "file:///nowhere.git", "--branch", "a..b"], {}, "not a valid branch name",
                 id="bad-branch"),
    pytest.param(["--webhook-port", "0"], {}, "--webhook-port needs --watch", id="webhook-without-watch"),
    pytest.param(["--watch", "5", "--webhook-port", "0", "--repo", "file:///nowhere.git"],
                 {"HYPERGOV_WEBHOOK_SECRET": ""}, "HYPERGOV_WEBHOOK_SECRET", id="webhook-without-secret"),
    pytest.param(["--webhook-secret", "x"], {}, "No such option", id="no-secret-on-the-command-line"),
])
def test_bad_options_are_usage_errors(tmp_path: Path, args: list[str], extra_env: dict[str, str],
                                      message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["reconcile", *args], env=_env(tmp_path, **extra_env))
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "state" / "repo").exists()  # refused before anything was cloned
