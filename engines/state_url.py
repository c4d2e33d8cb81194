"""The grammar of a state location, `s3://bucket/prefix` (the `state_backend` setting): one place
below both the settings, which refuse a malformed URL when they load, and the S3 backend
(`engines.terraform.backend.S3State`), which keeps each stack's state under it. Pure."""

from __future__ import annotations

import re

_URL = re.compile(r"^s3://(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:/(?P<prefix>[^?#]*?))?/?$")


def parse_state_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of an S3 state location; the prefix without leading or trailing slash
    (may be empty). ValueError, with an example, for anything else."""
    match = _URL.match(url.strip())
    if match is None:
        raise ValueError(f"{url!r} is not an S3 state location such as s3://acme-hypergov-state/prod")
    return match["bucket"], (match["prefix"] or "").strip("/")
