"""Trees known to pass every rule: a merge request's base, checked once per code version.

A merge request's plan checks two trees: the head (new with every push) and the base, which is
main's tree and the same for every merge request planned against it. The rules are a pure
function of the files and of the code that checks them, so once the base passed them, the same
files checked by the same code pass again: at 1,000 projects that is ~0.13 s of every plan. Only
the rules are skipped; the base is still loaded (the plan compares with its model), and a load
problem still refuses it.

The memory is a file per passing tree under `<state_dir>/valid-trees/`, named by a digest of the
files (paths and bytes), of the code (`engines.graphs.code_digest`: hypergov's rules and models
among it), of the botocore version (the field limits come from its models) and of Python's
version. A tree that fails is never remembered; a missing or unwritable directory only costs the
check.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import botocore

from engines.graphs import code_digest
from hypergov.tree_files import TreeFiles

VALID_TREES_DIR = "valid-trees"  # under the state directory
KEEP = 32  # main's tree and a few earlier ones (a base that moved back, a second governed repository)


def tree_digest(files: TreeFiles) -> str:
    digest = hashlib.sha256(f"{code_digest()}\0{botocore.__version__}\0{sys.version_info[:2]}".encode())
    for path in sorted(files):
        entry = files[path]
        digest.update(f"\0{path}\0".encode())
        digest.update(entry if isinstance(entry, bytes) else repr(entry).encode())
    return digest.hexdigest()


def known_valid(directory: Path | None, files: TreeFiles) -> bool:
    return directory is not None and (directory / tree_digest(files)).is_file()


def remember_valid(directory: Path | None, files: TreeFiles) -> None:
    """Note that `files` passed every rule (only call it for a tree that did)."""
    if directory is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / tree_digest(files)).touch()
        kept = sorted(directory.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in kept[KEEP:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass  # only speed depends on it
