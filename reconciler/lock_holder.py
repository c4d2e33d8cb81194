"""Who holds the state directory's lock: a sidecar file beside `reconciler.lock`, written by
whoever takes the flock (pid, host, when, what) and removed when it lets go.

An flock cannot be asked who holds it, and testing it by taking it would make a concurrent
reconciler exit busy; so `hypergov status` reads this file instead and says whether the pid is
still alive (only answerable on the same host). A holder killed with SIGKILL leaves the file
behind: the flock itself is released by the kernel, and status reports the pid as dead.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HOLDER_SUFFIX = ".holder"


def holder_path(lock_file: Path) -> Path:
    return lock_file.with_name(lock_file.name + HOLDER_SUFFIX)


def write_holder(lock_file: Path) -> None:
    """Called right after the flock is taken; a failure to write is not a failure to lock."""
    record = {"pid": os.getpid(), "host": socket.gethostname(),
              "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv[:3]))}
    path = holder_path(lock_file)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(record) + "\n")
        tmp.replace(path)
    except OSError:
        pass


def clear_holder(lock_file: Path) -> None:
    holder_path(lock_file).unlink(missing_ok=True)


@dataclass(frozen=True)
class LockHolder:
    pid: int
    host: str
    started_at: str
    command: str
    alive: bool | None  # None: on another host, not knowable from here

    def as_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "host": self.host, "started_at": self.started_at, "command": self.command,
                "alive": self.alive}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def read_holder(lock_file: Path, *, this_host: str | None = None) -> LockHolder | None:
    """The recorded holder (None: nobody recorded, or the record is unreadable)."""
    try:
        data = json.loads(holder_path(lock_file).read_text())
        pid, host = int(data["pid"]), str(data["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    here = this_host or socket.gethostname()
    return LockHolder(pid=pid, host=host, started_at=str(data.get("started_at", "")),
                      command=str(data.get("command", "")), alive=pid_alive(pid) if host == here else None)
