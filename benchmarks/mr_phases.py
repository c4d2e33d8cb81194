"""Where the time of one `hypergov plan --base ...` goes: the real command, with a timer around
each phase's function, run in this process (`python -m benchmarks.mr_phases plan --base main ...`).

cProfile sees only the calling thread, and terraform runs on `plan_many`'s worker threads, so the
phases are timed by wrapping the functions that make them up (wall time, summed over calls).
The totals go, as JSON, to the file named by `HYPERGOV_BENCH_PHASES` when the command exits.
Imports are not a phase here (they happen inside whichever phase first needs a module):
`bench_mr` measures them with `python -X importtime`.
"""

from __future__ import annotations

import atexit
import functools
import gc
import importlib
import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

# (label, module, attribute): a function looked up in that module's namespace when called, so
# wrapping the module attribute times every call (a name imported elsewhere is listed again there).
PHASES: tuple[tuple[str, str, str], ...] = (
    ("read trees (working tree, base commit)", "hypergov.validate", "read_tree_dir"),
    ("read trees (working tree, base commit)", "hypergov.tree_files", "read_tree_dir"),
    ("read trees (working tree, base commit)", "hypergov.gitsource", "read_tree_at"),
    ("validate (load + rules, both trees)", "hypergov.validate", "validate_files"),
    ("change-control approvals", "hypergov.change_control", "required_approvals"),
    ("affected stacks", "reconciler.merge_request", "affected_stacks"),
    ("build engine", "engines.factory", "build_engine"),
    ("engine plan_many (prepare + plan of every stack)", "engines.terraform.engine", "TerraformEngine.plan_many"),
    ("graphs of the scan (head) and of the base", "engines.live.scan", "stack_graphs"),
    ("graphs of the engine (cached: the scan's)", "engines.terraform.engine", "stack_graphs"),
    ("live scan (list/describe calls + compare)", "engines.live.scan", "scan_with"),
    ("scan -> terraform changes", "engines.live.scan", "scan_changes"),
    ("engine prepare (view, translate, write)", "engines.terraform.engine", "TerraformEngine.prepare"),
    ("stack view", "engines.terraform.engine", "stack_view"),
    ("graph capture", "engines.terraform.engine", "capture"),
    ("terraform init (+ lock check)", "engines.terraform.runner", "TerraformRunner.init"),
    ("terraform plan", "engines.terraform.runner", "TerraformRunner.plan"),
    ("terraform show -json", "engines.terraform.runner", "TerraformRunner.show_json"),
    ("HyperPod driver plan", "engines.terraform.engine", "TerraformEngine._plan_hyperpod"),
    ("Kubernetes plan", "engines.terraform.engine", "TerraformEngine._plan_kube"),
    ("capacity impact", "reconciler.merge_request", "capacity_impact"),
    ("render Markdown", "cli.plan", "render_markdown"),
)
MAIN = "command (after start-up)"
GC = "garbage collection pauses (this process, all threads)"

_totals: dict[str, float] = defaultdict(float)
_calls: dict[str, int] = defaultdict(int)
_lock = threading.Lock()


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            with _lock:
                _totals[label] += time.perf_counter() - start
                _calls[label] += 1
    return wrapper


def _gc_timer() -> Callable[[str, dict[str, Any]], None]:
    """A `gc.callbacks` hook summing the collector's pauses, which stop every thread of the process."""
    started: list[float] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            with _lock:
                _totals[GC] += time.perf_counter() - started.pop()
                _calls[GC] += 1
    return on_gc


def _install() -> None:
    gc.callbacks.append(_gc_timer())
    for label, module_name, attribute in PHASES:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, _timed(label, getattr(owner, name)))


def _write(target: str, started: float) -> None:
    phases = {label: {"s": round(_totals[label], 4), "calls": _calls[label]} for label in dict.fromkeys(
        [*(p[0] for p in PHASES), MAIN, GC]) if _calls[label]}
    with open(target, "w") as out:
        json.dump({"phases": phases, "setup_s": round(started, 4)}, out, indent=2)


def main() -> None:
    setup_start = time.perf_counter()
    _install()  # imports the modules it wraps: their import time is set-up, not a phase
    setup_s = time.perf_counter() - setup_start
    target = os.environ.get("HYPERGOV_BENCH_PHASES")
    if target:
        atexit.register(_write, target, setup_s)
    from cli.main import run

    _timed(MAIN, run)()


if __name__ == "__main__":
    main()
