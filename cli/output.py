"""What the commands print and the reports they write, through the process's redactor
(`hypergov.redaction`): no plan, report, result or error line shows a secret hypergov loaded
(a Git host token, the webhook's shared secret, a notification URL, a secret-looking environment
variable), whatever tree value, setting or error message quotes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hypergov.redaction import redact


def echo(message: Any = None, *, err: bool = False, nl: bool = True) -> None:
    """`click.echo`, redacted (bytes are written as they are: hypergov prints none)."""
    click.echo(redact(message) if isinstance(message, str) else message, err=err, nl=nl)


def write_report(path: Path, text: str) -> None:
    """A report or plan written to a file (`--markdown`), redacted as printed text is."""
    path.write_text(redact(text))
