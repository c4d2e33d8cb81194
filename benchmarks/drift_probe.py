"""Where a scan's time goes: the round trip of every call by operation (from the SDK's own events,
so the scan's code is unchanged), and a process's CPU time (the endpoint's, read from /proc)."""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ClientFor = Callable[[str, str | None, str], Any]


def cpu_seconds_of(pid: int) -> float:
    """User + system CPU seconds of process `pid` (Linux /proc), its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ScanProbe:
    """Times each API call from just before it is sent until its response is parsed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._seconds: dict[str, float] = defaultdict(float)
        self._calls: dict[str, int] = defaultdict(int)

    def wrap(self, client_for: ClientFor) -> ClientFor:
        def made(service: str, account: str | None, region: str) -> Any:
            client = client_for(service, account, region)
            client.meta.events.register("before-send", self._before)
            client.meta.events.register("after-call", self._after)
            return client
        return made

    def _before(self, **_: Any) -> None:
        self._local.started = time.perf_counter()

    def _after(self, event_name: str, **_: Any) -> None:
        started = getattr(self._local, "started", None)
        if started is None:
            return
        elapsed = time.perf_counter() - started
        operation = ".".join(event_name.split(".")[1:])  # after-call.<service>.<Operation>
        with self._lock:
            self._seconds[operation] += elapsed
            self._calls[operation] += 1

    def summary(self) -> dict[str, Any]:
        with self._lock:
            ops = sorted(self._seconds, key=lambda op: -self._seconds[op])
            return {"round_trip_s": round(sum(self._seconds.values()), 3),
                    "operations": {op: {"calls": self._calls[op], "s": round(self._seconds[op], 3),
                                        "mean_ms": round(1000 * self._seconds[op] / self._calls[op], 2)}
                                   for op in ops}}
