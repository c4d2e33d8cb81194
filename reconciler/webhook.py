"""The webhook: a push to the followed branch wakes the reconciler at once, instead of at the next
periodic fetch (which stays, as the safety net for a delivery that never came).

GitHub signs each delivery with the shared secret (`X-Hub-Signature-256: sha256=<HMAC-SHA256 of
the body>`); GitLab sends the secret itself (`X-Gitlab-Token`). Both are compared in constant time
(`hmac.compare_digest`). Answers: 401 for a missing or bad signature (logged, without the secret
or any header value), 202 for a push to the followed branch (the loop wakes), 204 for a push to
another ref or any other event, 200 for GitHub's ping. A body over `MAX_BODY` bytes gets 413
without being read, and a client that sends too slowly is cut off after `READ_TIMEOUT_S`, so no
client can stall the server (each connection has its own thread). What a delivery asks for is
decided by `judge`, a pure function; `WebhookServer` only moves bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

from hypergov.redaction import redact, register

MAX_BODY = 1024 * 1024  # GitHub caps payloads at 25 MB, but a push event is a few KB; a large body is abuse
READ_TIMEOUT_S = 10.0
SECRET_ENV = "HYPERGOV_WEBHOOK_SECRET"


class WebhookSecretError(ValueError):
    """No usable shared secret; the message says where it is read from."""


def load_secret(environ: Mapping[str, str], secret_file: Path | None) -> bytes:
    """The shared secret: the file's content (one trailing newline dropped) when given, else the
    environment variable. Never a command-line value (`ps` shows those to every user). Registered
    with the process's redactor: no log line shows it, whatever quotes it (a branch name)."""
    if secret_file is not None:
        try:
            secret = secret_file.read_bytes().removesuffix(b"\n").removesuffix(b"\r")
        except OSError as exc:
            raise WebhookSecretError(f"--webhook-secret-file {secret_file}: cannot read it ({exc.strerror})") from exc
        where = f"--webhook-secret-file {secret_file}"
    else:
        secret = environ.get(SECRET_ENV, "").encode()
        where = SECRET_ENV
    if not secret.strip():
        raise WebhookSecretError(f"--webhook-port needs the shared secret: set {SECRET_ENV} or pass "
                                 f"--webhook-secret-file FILE ({where} is empty or unset)")
    register(secret)
    return secret


def github_signature_ok(secret: bytes, body: bytes, header: str | None) -> bool:
    """GitHub's `X-Hub-Signature-256`: `sha256=` and the hex HMAC-SHA256 of the raw body."""
    if not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.removeprefix("sha256=").strip().lower().encode())


def gitlab_token_ok(secret: bytes, header: str | None) -> bool:
    """GitLab's `X-Gitlab-Token`: the secret itself."""
    return header is not None and hmac.compare_digest(secret, header.encode())


@dataclass(frozen=True)
class Verdict:
    status: int
    message: str  # for the log and the response body; never a secret or a header value
    wake: bool = False


def judge(*, headers: Mapping[str, str], body: bytes, secret: bytes, branch: str) -> Verdict:
    """Pure: what a delivery gets. `headers` by lower-case name."""
    if "x-hub-signature-256" in headers:
        if not github_signature_ok(secret, body, headers["x-hub-signature-256"]):
            return Verdict(401, "bad X-Hub-Signature-256 (GitHub): not signed with the shared secret")
        event = headers.get("x-github-event", "")
        if event == "ping":
            return Verdict(200, "pong")
        return _push(event == "push", _github_payload(headers, body), branch, source="GitHub")
    if "x-gitlab-token" in headers:
        if not gitlab_token_ok(secret, headers["x-gitlab-token"]):
            return Verdict(401, "bad X-Gitlab-Token (GitLab): not the shared secret")
        return _push(headers.get("x-gitlab-event", "") == "Push Hook", body, branch, source="GitLab")
    return Verdict(401, "no X-Hub-Signature-256 (GitHub) or X-Gitlab-Token (GitLab) header")


def _github_payload(headers: Mapping[str, str], body: bytes) -> bytes:
    """GitHub sends JSON, or the JSON as the `payload` field of a form (content type setting)."""
    if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return parse_qs(body.decode("utf-8", "replace")).get("payload", [""])[0].encode()
    return body


def _push(is_push: bool, payload: bytes, branch: str, *, source: str) -> Verdict:
    if not is_push:
        return Verdict(204, f"{source}: not a push event; nothing to do")
    try:
        ref = json.loads(payload).get("ref")
    except (ValueError, AttributeError):
        return Verdict(400, f"{source} push: the body is not a JSON object")
    if ref != f"refs/heads/{branch}":
        # Masked before it is cut: a cut could leave the start of a secret the ref holds.
        return Verdict(204, f"{source} push to {redact(str(ref))[:200]!r}, not refs/heads/{branch}; nothing to do")
    return Verdict(202, f"{source} push to refs/heads/{branch}: fetching now", wake=True)


class WebhookServer(ThreadingHTTPServer):
    """POST to any path. `on_verdict` hears every answer (the client's address and the verdict)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], *, secret: bytes, branch: str, wake: threading.Event,
                 on_verdict: Callable[[str, Verdict], None]) -> None:
        self.secret, self.branch, self.wake, self.on_verdict = secret, branch, wake, on_verdict
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: WebhookServer
    timeout = READ_TIMEOUT_S  # the socket's: a client that stops sending is cut off
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self._answer(Verdict(411, "a Content-Length is required"))
            return
        if int(length) > MAX_BODY:
            self._answer(Verdict(413, f"the body is over {MAX_BODY} bytes"))
            return
        try:
            body = self.rfile.read(int(length))
        except TimeoutError:
            self._answer(Verdict(408, f"the body did not arrive within {READ_TIMEOUT_S:.0f} s"))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        verdict = judge(headers=headers, body=body, secret=self.server.secret, branch=self.server.branch)
        if verdict.wake:
            self.server.wake.set()
        self._answer(verdict)

    def do_GET(self) -> None:
        self._answer(Verdict(405, "POST push events here"))

    def _answer(self, verdict: Verdict) -> None:
        self.server.on_verdict(self.client_address[0], verdict)
        payload = b"" if verdict.status == 204 else (verdict.message + "\n").encode()
        try:
            self.send_response(verdict.status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the client went away; nothing to tell it
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: `on_verdict` reports each delivery, without the request line's details."""


@contextmanager
def serving(host: str, port: int, *, secret: bytes, branch: str, wake: threading.Event,
            on_verdict: Callable[[str, Verdict], None]) -> Iterator[WebhookServer]:
    """The server on its own thread for as long as the block runs."""
    server = WebhookServer((host, port), secret=secret, branch=branch, wake=wake, on_verdict=on_verdict)
    thread = threading.Thread(target=server.serve_forever, name="hypergov-webhook", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
