"""The audit records on a branch read with git itself (`ls-tree -r`, `show`), not with hypergov's
reader: what the tests compare hypergov's own reading and writing with."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

BRANCH = "hypergov/audit"


def _git(repo: str | os.PathLike[str], *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def record_paths(repo: str | os.PathLike[str], ref: str = BRANCH) -> list[str]:
    """Every record's path at `ref` (none when `ref` does not exist), oldest first: by the
    sequence number the file name starts with, whatever directory the layout puts it in."""
    proc = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "--full-tree", ref, "--",
                           "records/"], capture_output=True, text=True, check=False)
    return sorted(proc.stdout.split(), key=lambda p: (p.rsplit("/", 1)[-1], p))


def record_files(repo: str | os.PathLike[str], ref: str = BRANCH) -> dict[str, bytes]:
    """Every record file at `ref`: path -> bytes, oldest first."""
    return {path: _git(repo, "show", f"{ref}:{path}") for path in record_paths(repo, ref)}


def records_at(repo: str | os.PathLike[str], ref: str = BRANCH) -> list[dict[str, Any]]:
    """The records at `ref`, oldest first, parsed."""
    return [json.loads(data) for data in record_files(repo, ref).values()]
