"""The webhook: GitHub's documented signature example (docs.github.com, "Validating webhook
deliveries": secret "It's a Secret to Everybody", payload "Hello, World!"), GitLab's token, what
each delivery is answered, and the server itself over real HTTP on loopback: a bad signature
gets 401, a push to the branch 202 and a wake, an oversized body 413 without being read, and a
client that stops sending is cut off without stalling the others. The running daemon woken by a
real push is in tests/integration/test_reconcile_remote.py."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler import webhook
from reconciler.webhook import (
    MAX_BODY,
    SECRET_ENV,
    Verdict,
    WebhookSecretError,
    github_signature_ok,
    gitlab_token_ok,
    judge,
    load_secret,
    serving,
)

SECRET = b"s3cret-for-tests"
GITHUB_DOC_SECRET = b"It's a Secret to Everybody"
GITHUB_DOC_PAYLOAD = b"Hello, World!"
GITHUB_DOC_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_githubs_documented_example_validates() -> None:
    assert github_signature_ok(GITHUB_DOC_SECRET, GITHUB_DOC_PAYLOAD, GITHUB_DOC_SIGNATURE)


@pytest.mark.parametrize(("secret", "body", "header"), [
    pytest.param(b"It's a secret to everybody", GITHUB_DOC_PAYLOAD, GITHUB_DOC_SIGNATURE, id="other-secret"),
    pytest.param(GITHUB_DOC_SECRET, b"Hello, World?", GITHUB_DOC_SIGNATURE, id="body-changed"),
    pytest.param(GITHUB_DOC_SECRET, GITHUB_DOC_PAYLOAD, GITHUB_DOC_SIGNATURE.removeprefix("sha256="),
                 id="no-sha256-prefix"),
    pytest.param(GITHUB_DOC_SECRET, GITHUB_DOC_PAYLOAD, "sha1=" + "0" * 40, id="sha1-header"),
    pytest.param(GITHUB_DOC_SECRET, GITHUB_DOC_PAYLOAD, "", id="empty"),
    pytest.param(GITHUB_DOC_SECRET, GITHUB_DOC_PAYLOAD, None, id="missing"),
])
def test_a_wrong_github_signature_is_refused(secret: bytes, body: bytes, header: str | None) -> None:
    assert not github_signature_ok(secret, body, header)


def test_gitlab_sends_the_token_itself() -> None:
    assert gitlab_token_ok(SECRET, SECRET.decode())
    assert not gitlab_token_ok(SECRET, "s3cret-for-test") and not gitlab_token_ok(SECRET, None)


def _github(event: str, payload: dict[str, object], *, secret: bytes = SECRET) -> tuple[dict[str, str], bytes]:
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    return {"x-github-event": event, "x-hub-signature-256": signature, "content-type": "application/json"}, body


@pytest.mark.parametrize(("headers_body", "status", "wake"), [
    pytest.param(_github("push", {"ref": "refs/heads/main"}), 202, True, id="github-push-main"),
    pytest.param(_github("push", {"ref": "refs/heads/feature"}), 204, False, id="github-push-other-branch"),
    pytest.param(_github("push", {"ref": "refs/tags/main"}), 204, False, id="github-tag-named-like-the-branch"),
    pytest.param(_github("ping", {"zen": "Keep it logically awesome."}), 200, False, id="github-ping"),
    pytest.param(_github("pull_request", {"action": "opened"}), 204, False, id="github-other-event"),
    pytest.param(_github("push", {"ref": "refs/heads/main"}, secret=b"wrong"), 401, False, id="github-bad-signature"),
    pytest.param(({"x-gitlab-event": "Push Hook", "x-gitlab-token": SECRET.decode()},
                  b'{"object_kind": "push", "ref": "refs/heads/main"}'), 202, True, id="gitlab-push-main"),
    pytest.param(({"x-gitlab-event": "Push Hook", "x-gitlab-token": "guess"},
                  b'{"ref": "refs/heads/main"}'), 401, False, id="gitlab-bad-token"),
    pytest.param(({"x-gitlab-event": "Tag Push Hook", "x-gitlab-token": SECRET.decode()},
                  b'{"ref": "refs/tags/v1"}'), 204, False, id="gitlab-tag-push"),
    pytest.param(({"content-type": "application/json"}, b'{"ref": "refs/heads/main"}'), 401, False,
                 id="unsigned"),
])
def test_what_each_delivery_gets(headers_body: tuple[dict[str, str], bytes], status: int, wake: bool) -> None:
    headers, body = headers_body
    verdict = judge(headers=headers, body=body, secret=SECRET, branch="main")
    assert (verdict.status, verdict.wake) == (status, wake)
    assert SECRET.decode() not in verdict.message


def test_githubs_form_encoded_deliveries_are_read_too() -> None:
    body = b"payload=" + json.dumps({"ref": "refs/heads/main"}).encode().replace(b" ", b"+")
    signature = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    headers = {"x-github-event": "push", "x-hub-signature-256": signature,
               "content-type": "application/x-www-form-urlencoded"}
    assert judge(headers=headers, body=body, secret=SECRET, branch="main").status == 202


def test_the_secret_comes_from_a_file_or_the_environment_never_empty(tmp_path: Path) -> None:
    (tmp_path / "secret").write_bytes(b"from-file\n")
    assert load_secret({SECRET_ENV: "from-env"}, tmp_path / "secret") == b"from-file"
    assert load_secret({SECRET_ENV: "from-env"}, None) == b"from-env"
    with pytest.raises(WebhookSecretError, match=SECRET_ENV):
        load_secret({}, None)
    with pytest.raises(WebhookSecretError, match="cannot read it"):
        load_secret({}, tmp_path / "missing")


@pytest.fixture
def server() -> Iterator[tuple[int, threading.Event, list[tuple[str, Verdict]]]]:
    wake, heard = threading.Event(), []
    with serving("127.0.0.1", 0, secret=SECRET, branch="main", wake=wake,
                 on_verdict=lambda client, verdict: heard.append((client, verdict))) as running:
        yield running.server_address[1], wake, heard


def _post(port: int, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/hooks/hypergov", body=body, headers=headers)
    response = connection.getresponse()
    answer = (response.status, response.read())
    connection.close()
    return answer


def test_over_http_a_good_push_wakes_and_a_bad_signature_is_refused_and_logged(server: tuple[
        int, threading.Event, list[tuple[str, Verdict]]]) -> None:
    port, wake, heard = server
    headers, body = _github("push", {"ref": "refs/heads/main"}, secret=b"not the secret")
    assert _post(port, headers, body)[0] == 401 and not wake.is_set()
    assert heard[-1][1].status == 401 and "X-Hub-Signature-256" in heard[-1][1].message
    headers, body = _github("push", {"ref": "refs/heads/main"})
    status, text = _post(port, headers, body)
    assert (status, wake.is_set()) == (202, True) and b"fetching now" in text
    assert heard[-1][0] == "127.0.0.1"


def test_an_oversized_body_gets_413_without_being_read(server: tuple[int, threading.Event,
                                                                     list[tuple[str, Verdict]]]) -> None:
    port, wake, _ = server
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n"
                       "X-GitHub-Event: push\r\n\r\n".encode())  # and not one byte of the body
        assert client.recv(200).startswith(b"HTTP/1.1 413")
    assert not wake.is_set()


def test_a_stalled_client_is_cut_off_and_others_are_served_meanwhile(
        server: tuple[int, threading.Event, list[tuple[str, Verdict]]], monkeypatch: pytest.MonkeyPatch) -> None:
    port, wake, _ = server
    monkeypatch.setattr(webhook._Handler, "timeout", 1.0)  # READ_TIMEOUT_S, shortened for the test
    with socket.create_connection(("127.0.0.1", port), timeout=60) as stalled:
        stalled.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")  # 99 bytes never come
        headers, body = _github("push", {"ref": "refs/heads/main"})
        assert _post(port, headers, body)[0] == 202  # served while the other connection hangs
        # The stalled one is answered 408 and closed after the read timeout (the server's, not ours).
        assert stalled.recv(200).startswith(b"HTTP/1.1 408")
    assert wake.is_set()  # by the good push only
