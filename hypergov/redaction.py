"""Masking at the source: one redactor per process knows every secret value hypergov loaded, and
everything hypergov says (log lines, plans and reports it prints, writes or posts, notifications,
audit records) passes through it.

It knows the secret-looking environment variables (read live: the AWS secret key, session tokens,
`HYPERGOV_WEBHOOK_SECRET`, a webhook URL and its token-like parts, ...) and what each place that
loads a secret registers when it loads it: the webhook's shared secret (file or variable), a Git
host token (file or variable), a notification sink's URL (variable or file: the whole URL and the
token-like parts of its path and query, since Slack's carries its token in the path), the
credentials of a Git remote's URL, the audit signing key's file.
`redact` replaces every occurrence of any of them, and the credentials of any `scheme://user@`
URL, with `***`; `redacted` does the same through a nested JSON-like value (keys included).

Here, in the core, because every layer above loads or prints something (`reconciler.git_host`,
which may import neither `engines` nor `urllib`, included); it imports only the standard library,
and not `urllib` (URLs are taken apart by pattern: only their secrets are wanted, and a malformed
one must not raise). Thread-safe: the daemon's webhook, metrics and lease threads log
while the main thread registers.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from contextlib import suppress
from typing import Any, TypeVar

REDACTED = "***"
# Values shorter than this are never redacted: replacing a short string everywhere it occurs (a
# word such as "testing", a number, a path part) would garble paths and messages, and a secret that
# short is guessable anyway. Every value registered is held to it, whatever its source.
MIN_SECRET = 8
# Names of environment variables whose values are secrets.
SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE_KEY|API_?KEY|WEBHOOK",
                         re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")
# scheme://[userinfo@]host[path][?query]: userinfo up to the last @ before the host's end.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:(?P<userinfo>[^/?#\s]*)@)?[^/?#\s@]*(?P<path>[^?#\s]*)"
                  r"(?:\?(?P<query>[^#\s]*))?")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")
# A path segment or query value made only of lower-case words (`services`, `incoming-webhook`) is
# a route, not a token; anything else of MIN_SECRET characters or more in a secret URL is masked.
_ROUTE_WORD = re.compile(r"[a-z]+(?:[-_.][a-z]+)*")

T = TypeVar("T")


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of secret-looking variables (MIN_SECRET characters or more), longest first."""
    found = {v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET}
    return tuple(sorted(found, key=len, reverse=True))


def _encoded(text: str, *, plus: bool = False) -> str:
    """Percent-encoded as in a URL's path or query (`urllib.parse.quote(text, safe="")`; `plus`:
    a space as `+`, as in a form)."""
    return "".join(ch if ch in _UNRESERVED else "+" if plus and ch == " " else
                   "".join(f"%{byte:02X}" for byte in ch.encode()) for ch in text)


def _decoded(text: str, *, plus: bool = False) -> str:
    raw = (text.replace("+", " ") if plus else text).encode()
    return _PERCENT.sub(lambda m: bytes([int(m[1], 16)]), raw).decode("utf-8", "replace")


def _forms(value: str) -> set[str]:
    """The value as it may be quoted: as it is, without surrounding blanks, escaped in JSON or a
    Python repr (a branch name quoted by `!r`), percent-encoded in a URL."""
    forms = {form for text in {value, value.strip()} for form in (
        text, json.dumps(text)[1:-1], repr(text)[1:-1], _encoded(text), _encoded(text, plus=True))}
    return {f for f in forms if len(f) >= MIN_SECRET}


def _token_like(part: str) -> bool:
    return len(part) >= MIN_SECRET and not _ROUTE_WORD.fullmatch(part)


def url_credentials(url: str) -> set[str]:
    """The secrets in a URL's userinfo: the password, or a user name alone when it is token-like
    (`https://<token>@host`); `git` or `x-access-token` with a password are no secret."""
    found = _URL.match(url.strip())
    if found is None or found["userinfo"] is None:
        return set()
    user, has_password, password = found["userinfo"].partition(":")
    if has_password:
        return {password, _decoded(password)}
    return {user, _decoded(user)} if _token_like(user) else set()


def url_secrets(url: str) -> set[str]:
    """Everything secret in a URL that is itself a secret (a notification webhook's): the whole
    URL, its credentials, and the token-like parts of its path and query."""
    found = {url, url.strip(), *url_credentials(url)}
    parts = _URL.match(url.strip())
    if parts is None:
        return found
    segments = parts["path"].split("/")
    values = [pair.partition("=")[2] for pair in (parts["query"] or "").split("&")]
    found |= {p for p in segments + values if _token_like(p)}
    found |= {d for p in segments if _token_like(d := _decoded(p))}
    found |= {d for v in values if _token_like(d := _decoded(v, plus=True))}
    return found


def _masked(text: str, secrets: Iterable[str]) -> str:
    """Every occurrence of any secret replaced, overlapping ones as one span (replacing them one
    after the other could leave a piece of the second); then URL credentials."""
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        start = text.find(secret)
        while start >= 0:
            spans.append((start, start + len(secret)))
            start = text.find(secret, start + 1)
    if spans:
        spans.sort()
        pieces, kept, (begin, end) = [], 0, spans[0]
        for start, stop in spans[1:]:
            if start <= end:
                end = max(end, stop)
                continue
            pieces += [text[kept:begin], REDACTED]
            kept, (begin, end) = end, (start, stop)
        text = "".join([*pieces, text[kept:begin], REDACTED, text[end:]])
    return _URL_USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)


class Redactor:
    """The secrets of one process: those registered, and the secret-looking variables of
    `environ` (default: `os.environ`, read at each use, so a variable set later is masked too)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._lock = threading.Lock()
        self._learned: frozenset[str] = frozenset()
        self._from_environ: tuple[tuple[str, ...], frozenset[str]] = ((), frozenset())  # the values, their forms

    # --- learning -------------------------------------------------------------------------------
    def register(self, value: str | bytes | None) -> None:
        """A secret hypergov has just loaded (and its quoted forms); a value too short is ignored."""
        if value is None:
            return
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        self._learn(_forms(text))

    def register_url(self, url: str | None) -> None:
        """A URL that is itself a secret (a notification webhook's): see `url_secrets`."""
        if url:
            self._learn({form for part in url_secrets(url) for form in _forms(part)})

    def register_credentials(self, url: str | None) -> None:
        """The credentials a URL carries (a Git remote's): see `url_credentials`."""
        if url:
            self._learn({form for part in url_credentials(url) for form in _forms(part)})

    def register_key(self, content: str | bytes) -> None:
        """A private key file as read (PEM or OpenSSH): the whole text, its body on one line, and each
        line of the body (the `-----BEGIN ...-----` armor is no secret and stays readable)."""
        text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
        body = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("-----")]
        self._learn({form for part in {text, "".join(body), *body} for form in _forms(part)})

    def register_environ(self, environ: Mapping[str, str]) -> None:
        """The secret-looking variables of an environment other than the process's own."""
        self._learn({form for value in secret_values(environ) for part in url_secrets(value) for form in _forms(part)})

    def _learn(self, values: set[str]) -> None:
        values = {v for v in values if len(v) >= MIN_SECRET}
        if values - self._learned:
            with self._lock:
                self._learned = self._learned | values

    # --- for tests: what was learned, and going back to it -------------------------------------
    def snapshot(self) -> frozenset[str]:
        return self._learned

    def restore(self, learned: frozenset[str]) -> None:
        with self._lock:
            self._learned = learned

    # --- masking --------------------------------------------------------------------------------
    def secrets(self, extra: Iterable[str] = ()) -> tuple[str, ...]:
        """Every value masked now, longest first; `extra`: a caller's own (a token it holds), whatever
        their length."""
        return tuple(sorted({*self._learned, *self._environ_secrets(),
                             *(v for v in extra if v)}, key=len, reverse=True))

    def _environ_secrets(self) -> frozenset[str]:
        """The environment's secrets as they may be quoted (`_forms`; a URL's parts too, as
        `register_url` learns them), worked out again only when the values change."""
        # A variable set or unset by another thread meanwhile: the values as last read.
        with suppress(KeyError, RuntimeError):
            values = secret_values(os.environ if self._environ is None else self._environ)
            if values != self._from_environ[0]:
                self._from_environ = values, frozenset(
                    form for value in values for part in url_secrets(value) for form in _forms(part))
        return self._from_environ[1]

    def redact(self, text: str, extra: Iterable[str] = ()) -> str:
        """`text` without any secret (nor `extra` values) or URL credentials."""
        return _masked(text, self.secrets(extra))

    def redacted(self, value: T, extra: Iterable[str] = ()) -> T:
        """A JSON-like value (mappings, lists, tuples, strings, anything else as it is) with every
        string redacted, keys included; mappings come back as dicts."""
        secrets = self.secrets(extra)

        def walk(item: Any) -> Any:
            if isinstance(item, str):
                return _masked(item, secrets)
            if isinstance(item, Mapping):
                return {walk(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
            if isinstance(item, list):
                return [walk(v) for v in item]
            if isinstance(item, tuple):
                return tuple(walk(v) for v in item)
            return item

        result: T = walk(value)
        return result


REDACTOR = Redactor()  # the process's


def register(value: str | bytes | None) -> None:
    REDACTOR.register(value)


def register_url(url: str | None) -> None:
    REDACTOR.register_url(url)


def register_credentials(url: str | None) -> None:
    REDACTOR.register_credentials(url)


def register_key(content: str | bytes) -> None:
    REDACTOR.register_key(content)


def redact(text: str, extra: Iterable[str] = ()) -> str:
    return REDACTOR.redact(text, extra)


def redacted(value: T, extra: Iterable[str] = ()) -> T:
    return REDACTOR.redacted(value, extra)
