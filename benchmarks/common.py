"""Shared benchmark plumbing: best-of-N timing, a printed table, JSON results, and stopping the
processes a benchmark (or a multi-process test) started."""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def best_of(fn: Callable[[], object], *, repeat: int = 3) -> float:
    """Best wall time in seconds over `repeat` runs (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        padded = (c.rjust(w) if n and i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        print("  ".join(padded))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if value < 10 else f"{value:.1f}"
    return str(value)


def write_results(name: str, payload: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"{name}.json"
    meta = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out.write_text(json.dumps({"benchmark": name, "environment": meta, **payload}, indent=2) + "\n")
    print(f"\nwrote {out}")
    return out


def org_size_arguments(parser: argparse.ArgumentParser, *, sample_help: str) -> None:
    """The synthetic-org options the live-state benchmarks share (`--quick`: see `quick_sizes`)."""
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sample", type=int, default=4, help=sample_help)
    parser.add_argument("--quick", action="store_true", help="a small run: 40 projects, 4 clusters, sample 2")


def quick_sizes(args: argparse.Namespace) -> argparse.Namespace:
    if args.quick:
        args.projects, args.clusters, args.sample = 40, 4, 2
    return args


def stop_processes(processes: Sequence[subprocess.Popen[Any]], *, grace_s: float = 120.0) -> None:
    """SIGTERM each process still running, then wait `grace_s` for it; a process that did not end
    has its process group SIGKILLed (each was started with `start_new_session=True`)."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
