"""The captured graph of every stack a scan compares with, made once per stack input.

A graph is a pure function of its stack's view and of hypergov's own code, so it is cached on
disk under `<state_dir>/graphs/` by the view's fingerprint and a digest of the code that declares
it (`components/`, `stacks/`, the core): a scan after the first captures only the stacks whose
inputs changed, and an upgrade of hypergov invalidates every entry. The provider role assumed in
member accounts (`assume_role_name`, the engine's `aws.account_access_role`) is part of the graph,
so of the key: the scan and the terraform engine share the entries. Capture runs Pulumi's
process-global runtime, so misses are captured in worker processes (one per core, spawned) when
there are many, in-process when there are few.

The directory may be shared by plans of different trees (main's and a merge request's, also on a
private copy of the state directory): entries are written atomically under a name of their own,
and each stack keeps its `KEEP_PER_STACK` most recently used entries. Reading entries may overlap
anything; capturing, writing and evicting take turns, by a lock between the threads of a process
(a plan captures the head's graphs on a thread beside its scan, and Pulumi's runtime cannot run
two captures at once) and a `flock` on the directory between processes sharing it (the reconciler
and a CLI plan), so a stack missing for both is captured once and read by the second.
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from engines.file_lock import file_lock
from hypergov.gc_tuning import bulk_work, tune_for_bulk_process
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import StackView, fingerprint, stack_view
from stacks.resource_graph import GraphResource, ResourceGraph
from stacks.spec import StackSpec

KEEP_PER_STACK = 3  # main's graph and those of a few open merge requests
IN_PROCESS_MAX = 150  # below this many misses, spawning workers (each imports Pulumi: seconds) costs more
_CODE_PACKAGES = ("components", "stacks", "hypergov")
TURN_FILE = ".capture.lock"  # in the cache directory: its flock is the processes' turn to capture
_IN_PROCESS = threading.Lock()  # the threads' turn: Pulumi's runtime is process-global


@functools.cache
def code_digest() -> str:
    """A digest of the source that turns a view into a graph."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for package in _CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _can_spawn() -> bool:
    """A spawned worker re-imports the main module from its file: none when the program came from
    stdin or `-c` with a fake path (then capture stays in-process)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return path is None or Path(path).is_file()


def _capture(item: tuple[StackView, str, str]) -> ResourceGraph:
    view, name, assume_role_name = item
    return _capture_view(view, name, assume_role_name=assume_role_name)


def _capture_view(view: StackView, name: str, *, assume_role_name: str) -> ResourceGraph:
    # The Pulumi SDK loads only when a graph is captured (~0.3 s): a plan of stacks whose graphs
    # the cache holds never needs it.
    from stacks.graph import capture_view

    return capture_view(view, name, assume_role_name=assume_role_name)


def _to_json(graph: ResourceGraph) -> str:
    return json.dumps({"stack": graph.stack, "resources": [r.as_dict() for r in graph.resources]},
                      sort_keys=True, separators=(",", ":"))


def _from_json(text: str) -> ResourceGraph:
    data = json.loads(text)
    return ResourceGraph(stack=data["stack"], resources=tuple(GraphResource.from_dict(r) for r in data["resources"]))


def _cache_key(name: str, view: StackView, assume_role_name: str) -> str:
    role = f"-{hashlib.sha256(assume_role_name.encode()).hexdigest()[:8]}" if assume_role_name else ""
    return f"{name}@{fingerprint(view)[:24]}-{code_digest()}{role}"


def capture(view: StackView, name: str, *, assume_role_name: str = "") -> ResourceGraph:
    """One stack's graph captured in this process, in turn with every other capture of it."""
    with _IN_PROCESS:
        return _capture_view(view, name, assume_role_name=assume_role_name)


@contextmanager
def _capture_turn(cache_dir: Path | None) -> Iterator[None]:
    """Exclusive across threads (Pulumi's runtime is one per process) and, on a cache directory,
    across the processes sharing it: the next holder reads what the last one wrote instead of
    capturing it again. Thread lock first, then the directory's flock, always in this order."""
    with _IN_PROCESS:
        if cache_dir is None:
            yield
            return
        with file_lock(cache_dir / TURN_FILE):
            yield


def stack_graphs(tree: GovernanceTree, specs: Sequence[StackSpec], cache_dir: Path | None, *,
                 assume_role_name: str = "", workers: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, ResourceGraph]:
    """Every stack's graph, from the cache where its inputs are unchanged (stack name -> graph);
    `assume_role_name`: the role its AWS providers assume in member accounts (none: the caller's).
    `progress(captured, stacks)`: how many of them this call captured itself."""
    views: dict[str, StackView] = {s.name: stack_view(tree, s.kind, s.subject) for s in specs}
    keys = {name: _cache_key(name, view, assume_role_name) for name, view in views.items()}
    graphs = _cached(cache_dir, keys)  # entries are replaced atomically: reads need no turn
    captured: list[ResourceGraph] = []
    if len(graphs) < len(views):
        with _capture_turn(cache_dir):
            # Whoever held the turn before may have captured some of them meanwhile.
            graphs.update(_cached(cache_dir, {n: k for n, k in keys.items() if n not in graphs}))
            captured = _capture_all([(views[n], n, assume_role_name) for n in views if n not in graphs], workers)
            for graph in captured:
                graphs[graph.stack] = graph
                if cache_dir is not None:
                    _store(cache_dir / f"{keys[graph.stack]}.json", graph)
            if cache_dir is not None and captured:
                _evict(cache_dir, {g.stack for g in captured})
    if progress:
        progress(len(captured), len(views))
    return {name: graphs[name] for name in views}


def _cached(cache_dir: Path | None, keys: Mapping[str, str]) -> dict[str, ResourceGraph]:
    """The entries of `keys` (stack name -> cache key) the cache holds."""
    found: dict[str, ResourceGraph] = {}
    if cache_dir is None:
        return found
    for name, key in keys.items():
        entry = cache_dir / f"{key}.json"
        try:
            found[name] = _from_json(entry.read_text())
            os.utime(entry)  # recently used: kept when the stack's older entries are evicted
        except FileNotFoundError:  # never captured, or evicted by another plan meanwhile
            pass
    return found


def _capture_all(misses: list[tuple[StackView, str, str]], workers: int | None) -> list[ResourceGraph]:
    """Under the turn: in this process when few, else in spawned worker processes."""
    if not misses:
        return []
    if len(misses) <= IN_PROCESS_MAX or (workers or os.cpu_count() or 1) == 1 or not _can_spawn():
        with bulk_work():
            return [_capture(m) for m in misses]
    # spawn, not fork: a fork of a process with threads (a pytest worker, a daemon with a webhook
    # listener) can copy a held lock into the child, which then never starts.
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count(), initializer=tune_for_bulk_process,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_capture, misses, chunksize=max(1, len(misses) // 32)))


def _store(target: Path, graph: ResourceGraph) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    partial.write_text(_to_json(graph))
    partial.replace(target)  # never a half-written entry under the final name


def _evict(cache_dir: Path, stacks: set[str]) -> None:
    """All but each of `stacks`' `KEEP_PER_STACK` most recently used entries ('@' is in no stack
    name). One listing of the directory for them all: it holds a few entries per stack of the org."""
    def used(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except FileNotFoundError:  # evicted by another plan meanwhile
            return 0.0

    entries: dict[str, list[Path]] = {}
    for path in cache_dir.iterdir():
        stack, at, rest = path.name.partition("@")
        if at and rest.endswith(".json") and stack in stacks:
            entries.setdefault(stack, []).append(path)
    for paths in entries.values():
        for stale in sorted(paths, key=used, reverse=True)[KEEP_PER_STACK:]:
            stale.unlink(missing_ok=True)
