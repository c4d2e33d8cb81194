"""An exclusive `flock` on a file, held for a block: between processes sharing one disk, released
by the kernel when its holder dies (so a killed process never leaves it held)."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Wait for and hold the exclusive lock on `path` (created if missing) until the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
