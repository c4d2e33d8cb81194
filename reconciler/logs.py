"""The reconciler daemon's event log, on the standard `logging` module: one record per event
(a pass starts or ends, a stack is applied, a failure, a wait, a drift scan), bound to the
branch, the commit and the stack it concerns.

Two renderings of the same records: `text` (the line a person reads, as `hypergov reconcile` has
always printed it; records without one are JSON-only detail) and `json` (one object per line:
`ts`, `level`, `event`, `branch`, `commit`, `stack`, `message` and the event's own fields, for a
log shipper). Both pass every string through the process's redactor (`hypergov.redaction`) when
the line is written, not when logging is configured: credentials in URLs (`https://user:token@host`),
the values of secret-looking environment variables (the AWS secret key, session tokens, passwords)
and every secret hypergov loaded (the webhook's shared secret, a Git host token, a notification
URL, from a variable or a file, even one read after `configure`) never reach a log line, whatever
an error message, a branch name or a setting quoted.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import IO, Any, Literal

from hypergov.redaction import REDACTOR

LOGGER = "hypergov.reconciler"
LogFormat = Literal["text", "json"]
BOUND = ("branch", "commit", "stack")  # the context every JSON line carries (null when not known)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` without URL credentials, any secret the process knows, or any of `secrets`."""
    return REDACTOR.redact(text, secrets)


class JsonFormatter(logging.Formatter):
    """One JSON object per line; `fields` of the record (see `event`) become top-level keys.
    `secrets`: values masked besides the process's (`hypergov.redaction.REDACTOR`)."""

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
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
        line = json.loads(json.dumps(line, default=str))  # JSON's own values (a Path, a datetime as str) first
        return json.dumps(REDACTOR.redacted(line, self.secrets), sort_keys=False)


class TextFormatter(logging.Formatter):
    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
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
    a previous call installed (one process may run the command more than once, as tests do).
    `environ`: an environment besides the process's own whose secret-looking values are masked
    too (the process's is read by the redactor at each line)."""
    if environ is not None:
        REDACTOR.register_environ(environ)
    out, err = out or sys.stdout, err or sys.stderr
    handler: logging.Handler
    if fmt == "json":
        handler = logging.StreamHandler(err)
        handler.setFormatter(JsonFormatter())
    else:
        handler = _TextHandler(out, err)
        handler.setFormatter(TextFormatter())
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
