"""The process's redactor (`hypergov.redaction`): what it learns from each kind of secret, the forms
in which a secret is quoted, overlapping secrets, nested values, the environment read live, and
registering from threads while others redact."""

from __future__ import annotations

import json
import threading
from urllib.parse import quote, quote_plus, unquote

import pytest

from hypergov import redaction
from hypergov.redaction import REDACTED, Redactor, secret_values, url_credentials, url_secrets

SLACK_TOKEN = "Xq7bT0kenInThePath0fSlack"
SLACK = f"https://hooks.slack.example/services/T0AAA0000/B0BBB0000/{SLACK_TOKEN}"


def test_a_registered_secret_is_masked_wherever_and_however_it_is_quoted() -> None:
    redactor = Redactor(environ={})
    secret = 'whsec-"quoted"\\and/slashed'
    redactor.register(secret.encode() + b"\n")  # a file's bytes, its newline too
    for said in (f"push to {secret!r}", json.dumps({"ref": f"refs/heads/{secret}"}),
                 f"https://host/x?ref={quote(secret, safe='')}", f"https://host/x?ref={quote_plus(secret)}",
                 f"branch {secret}\n"):
        masked = redactor.redact(said)
        assert "quoted" not in masked and REDACTED in masked, (said, masked)


@pytest.mark.parametrize("text", ["plain", "a b+c/d?e=f&g", "ümlaut €", "~-._", "%41", ""])
def test_percent_encoding_is_urllibs(text: str) -> None:
    assert redaction._encoded(text) == quote(text, safe="")
    assert redaction._encoded(text, plus=True) == quote_plus(text, safe="")
    assert redaction._decoded(quote(text, safe="")) == unquote(quote(text, safe="")) == text
    assert redaction._decoded(quote_plus(text, safe=""), plus=True) == text


def test_values_shorter_than_8_characters_are_never_masked() -> None:
    redactor = Redactor(environ={"GIT_PASSWORD": "hunter2"})
    redactor.register("testing")
    redactor.register_credentials("https://u:short@host/x")
    assert redactor.redact("testing hunter2 short") == "testing hunter2 short"
    assert redactor.secrets() == ()


def test_overlapping_secrets_are_masked_as_one_span() -> None:
    redactor = Redactor(environ={})
    redactor.register("abcdefgh12")
    redactor.register("fgh12345xy")
    assert redactor.redact("before abcdefgh12345xy after") == f"before {REDACTED} after"
    assert redactor.redact("abcdefgh12 and fgh12345xy") == f"{REDACTED} and {REDACTED}"


def test_a_secret_url_is_masked_whole_and_by_its_token_parts_but_not_its_route_words() -> None:
    assert url_secrets(SLACK) >= {SLACK, SLACK_TOKEN, "T0AAA0000", "B0BBB0000"}
    assert not url_secrets(SLACK) & {"services", "hooks.slack.example", "https:"}
    assert url_secrets("https://hooks.example/incoming-webhook?token=Zm9vYmFyYmF6cXV4&channel=alerts") >= {
        "Zm9vYmFyYmF6cXV4"}
    redactor = Redactor(environ={})
    redactor.register_url(SLACK + "\n")
    assert redactor.redact(f"POST {SLACK} failed") == f"POST {REDACTED} failed"
    assert redactor.redact(f"htps://hooks.slack.example/services/T0AAA0000/B0BBB0000/{SLACK_TOKEN}") == \
        f"htps://hooks.slack.example/services/{REDACTED}/{REDACTED}/{REDACTED}"


@pytest.mark.parametrize(("url", "secrets"), [
    pytest.param("https://x-access-token:ghs_0123456789abcdef@github.com/o/r.git", {"ghs_0123456789abcdef"},
                 id="password"),
    pytest.param("https://ghp_0123456789abcdef0123@github.com/o/r.git", {"ghp_0123456789abcdef0123"},
                 id="token-as-user"),
    pytest.param("ssh://git@host/o/r.git", set(), id="ssh-user"),
    pytest.param("git@host:o/r.git", set(), id="scp-like"),
    pytest.param("https://host/o/r.git", set(), id="none"),
    pytest.param("https://u:p%40ss%2Fword99@host/r.git", {"p%40ss%2Fword99", "p@ss/word99"}, id="percent-encoded"),
])
def test_the_credentials_of_a_remote_url(url: str, secrets: set[str]) -> None:
    assert url_credentials(url) == secrets


def test_a_remote_urls_password_is_masked_even_without_its_scheme() -> None:
    """git prints `user:token@host` without the scheme in some messages; the URL's own userinfo
    is masked by pattern, the password wherever it is."""
    redactor = Redactor(environ={})
    redactor.register_credentials("git://hypergov:ghp_tokentokentoken@git.example.com/gov.git")
    assert redactor.redact("fatal: unable to look up hypergov:ghp_tokentokentoken@git.example.com") == \
        f"fatal: unable to look up hypergov:{REDACTED}@git.example.com"
    assert redactor.redact("https://anyone:else@host/r") == f"https://{REDACTED}@host/r"


def test_nested_values_keys_included() -> None:
    redactor = Redactor(environ={})
    redactor.register("s3cr3t-value")
    value = {"a": ["x s3cr3t-value", ("s3cr3t-value", 3)], "s3cr3t-value": {"n": None, "ok": True}, 7: 1.5}
    assert redactor.redacted(value) == {"a": [f"x {REDACTED}", (REDACTED, 3)], REDACTED: {"n": None, "ok": True},
                                        7: 1.5}


def test_the_environment_is_read_live(monkeypatch: pytest.MonkeyPatch) -> None:
    redactor = Redactor()
    monkeypatch.setenv("HYPERGOV_SLACK_WEBHOOK_URL", SLACK)  # set after the redactor was made
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "correct horse battery")
    assert redactor.redact(f"{SLACK} / correct horse battery") == f"{REDACTED} / {REDACTED}"
    assert redactor.redact(f"token {SLACK_TOKEN}") == f"token {REDACTED}"  # the URL's token part too
    assert "correct horse battery" in secret_values({"PULUMI_CONFIG_PASSPHRASE": "correct horse battery"})
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE")
    assert redactor.redact("correct horse battery") == "correct horse battery"


def test_registering_from_threads_while_others_redact() -> None:
    redactor = Redactor(environ={})
    secrets = [f"secret-{n:04d}-value" for n in range(200)]
    text = " ".join(secrets)
    errors: list[BaseException] = []

    def register(chunk: list[str]) -> None:
        for secret in chunk:
            redactor.register(secret)

    def redact() -> None:
        try:
            for _ in range(50):
                redactor.redact(text)
        except BaseException as exc:  # any failure in a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=register, args=(secrets[n::4],)) for n in range(4)]
    threads += [threading.Thread(target=redact) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert redactor.redact(text) == " ".join([REDACTED] * len(secrets))


def test_a_callers_own_value_is_masked_whatever_its_length() -> None:
    assert Redactor(environ={}).redact("token abc in a message", ("abc",)) == f"token {REDACTED} in a message"


def test_a_private_key_file_is_masked_whole_and_line_by_line_but_not_its_armor() -> None:
    body = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
            "QyNTUxOQAAACD0bGl0ZXJhbGx5LW5vdC1hLXJlYWwta2V5LWp1c3QtZm9yLXRlc3Rz"]
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----\n"
    redactor = Redactor(environ={})
    redactor.register_key(key.encode())
    assert redactor.redact(f"cannot use {key}") == f"cannot use {REDACTED}"
    assert redactor.redact(f"line {body[1]} / joined {''.join(body)}") == f"line {REDACTED} / joined {REDACTED}"
    assert redactor.redact("-----BEGIN OPENSSH PRIVATE KEY-----") == "-----BEGIN OPENSSH PRIVATE KEY-----"
