"""An exclusive `flock` on a file, held for a block: between processes sharing one disk, released
by the kernel when its holder dies (so a killed process never leaves it held)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
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


@contextmanager
def file_lock_or_busy(path: Path, busy: Callable[[str], Exception]) -> Iterator[None]:
    """Hold the exclusive lock on `path` for the block, or raise `busy(holder)` at once when another
    process holds it (a busy exit, never a wait). The holder writes its pid into the file, so the
    refusal can name it ("" when unknown); the kernel releases the lock when its holder dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:  # not "w": truncating would erase the holder's pid before we know it is busy
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.seek(0)
            raise busy(handle.read().strip()) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
