"""The reconciler daemon's event log, on the standard `logging` module: one record per event
(a pass starts or ends, a stack is applied, a failure, a wait, a drift scan), bound to the
branch, the commit and the stack it concerns.

Two renderings of the same records: `text` (the line a person reads, as `hypergov reconcile` has
always printed it; records without one are JSON-only detail) and `json` (one object per line:
`ts`, `level`, `event`, `branch`, `commit`, `stack`, `message` and the event's own fields, for a
log shipper). Both pass every string through `redact`: credentials in URLs
(`https://user:token@host`) and the values of secret-looking environment variables (the AWS
secret key, session tokens, passwords) never reach a log line, whatever an error message quoted.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import IO, Any, Literal

LOGGER = "hypergov.reconciler"
LogFormat = Literal["text", "json"]
BOUND = ("branch", "commit", "stack")  # the context every JSON line carries (null when not known)
REDACTED = "***"
# Names of environment variables whose values are secrets; values shorter than 8 characters are
# left alone (redacting a word like "testing" everywhere would garble paths and messages).
_SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|WEBHOOK", re.IGNORECASE)
_MIN_SECRET = 8
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values to redact: those of secret-looking variables, longest first (so a secret that
    contains another is replaced whole)."""
    found = {v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
    return tuple(sorted(found, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` without URL credentials or any of `secrets`."""
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _redacted(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {str(k): _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(v, secrets) for v in value]
    return value


class JsonFormatter(logging.Formatter):
    """One JSON object per line; `fields` of the record (see `event`) become top-level keys."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__()
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(), "event": getattr(record, "event", "log")}
        bound = getattr(record, "bound", {})
        line |= {key: bound.get(key) for key in BOUND}
        line["message"] = record.getMessage()
        for key, value in getattr(record, "fields", {}).items():
            line.setdefault(key, value)  # an event's field never overwrites the envelope
        return json.dumps(_redacted(line, self.secrets), default=str, sort_keys=False)


class TextFormatter(logging.Formatter):
    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__()
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        return redact(record.getMessage(), self.secrets)


class _TextHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Text mode keeps the two streams `hypergov reconcile` has always used: results on stdout,
    everything else on stderr; a record with no text (JSON-only detail) prints nothing."""

    def __init__(self, out: IO[str], err: IO[str]) -> None:
        super().__init__(err)
        self.out, self.err = out, err

    def emit(self, record: logging.LogRecord) -> None:
        if not record.getMessage():
            return
        self.stream = self.out if getattr(record, "to_stdout", False) else self.err
        super().emit(record)


def configure(fmt: LogFormat, *, environ: Mapping[str, str] | None = None, out: IO[str] | None = None,
              err: IO[str] | None = None) -> logging.Logger:
    """The reconciler's logger, writing `fmt` (JSON: every line on stderr). Replaces the handlers
    a previous call installed (one process may run the command more than once, as tests do)."""
    secrets = secret_values(os.environ if environ is None else environ)
    out, err = out or sys.stdout, err or sys.stderr
    handler: logging.Handler
    if fmt == "json":
        handler = logging.StreamHandler(err)
        handler.setFormatter(JsonFormatter(secrets))
    else:
        handler = _TextHandler(out, err)
        handler.setFormatter(TextFormatter(secrets))
    logger = logging.getLogger(LOGGER)
    for old in list(logger.handlers):
        logger.removeHandler(old)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # the root logger's handlers (if any) must not print a second copy
    return logger


class EventLog:
    """The logger with its bound context: `bind(commit=...)` returns a copy with more of it."""

    def __init__(self, logger: logging.Logger, **bound: str | None) -> None:
        self.logger = logger
        self.bound = {k: v for k, v in bound.items() if v is not None}

    def bind(self, **more: str | None) -> EventLog:
        return EventLog(self.logger, **{**self.bound, **more})

    def event(self, event: str, message: str = "", *, level: int = logging.INFO, to_stdout: bool = False,
              **fields: Any) -> None:
        """One event. `message` is the text mode's line ("" for JSON-only detail)."""
        self.logger.log(level, "%s", message, extra={"event": event, "bound": self.bound, "fields": fields,
                                                     "to_stdout": to_stdout})
