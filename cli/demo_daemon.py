"""The reconciler daemon as `make demo` (and the daemon's integration tests) run it: a child
process `hypergov reconcile --watch ... --log-format json`, its JSON events read from its stderr
file as they are written, its Prometheus metrics scraped over HTTP and parsed with Prometheus'
own text parser."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

Event = dict[str, Any]
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class DaemonLog:
    """The daemon's stderr, one JSON event per line, read as it grows."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def events(self) -> list[Event]:
        text = self.path.read_text()
        complete = text[:text.rfind("\n") + 1]  # without a line being written
        return [json.loads(line) for line in complete.splitlines() if line.strip()]

    def wait_for(self, wanted: Callable[[Event], bool], *, after: int = 0,
                 timeout_s: float = 300.0) -> tuple[int, Event]:
        """The first event after index `after` that `wanted` accepts, and its index."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for n, event in enumerate(self.events()[after:], start=after):
                if wanted(event):
                    return n, event
            time.sleep(0.3)
        raise TimeoutError(f"no such event in {timeout_s:.0f} s; the daemon said:\n{self.path.read_text()[-6000:]}")


def scrape(port: int) -> Samples:
    """Every sample the daemon's /metrics serves, by (name, sorted labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        body = response.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def http_status(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@dataclass
class Daemon:
    """A running `hypergov reconcile --watch` child; `stop` sends SIGTERM (it finishes what it
    applies and records it) and kills it only when it does not end in time."""

    process: subprocess.Popen[bytes]
    log: DaemonLog

    @classmethod
    def start(cls, command: Sequence[str], *, env: dict[str, str], cwd: Path, log_dir: Path) -> Daemon:
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / "daemon.log", "w") as err, open(log_dir / "daemon.out", "w") as out:
            process = subprocess.Popen(list(command), stdout=out, stderr=err, env={**env, "PYTHONUNBUFFERED": "1"},
                                       cwd=cwd)
        return cls(process, DaemonLog(log_dir / "daemon.log"))

    def metrics_port(self, *, timeout_s: float = 60.0) -> int:
        _, listening = self.log.wait_for(lambda e: e["event"] == "metrics.listening", timeout_s=timeout_s)
        return int(listening["port"])

    def stop(self, *, timeout_s: float = 240.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait(timeout=30)
