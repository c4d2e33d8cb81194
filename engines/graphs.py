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
and each stack keeps its `KEEP_PER_STACK` most recently used entries.
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from hypergov.gc_tuning import bulk_work, tune_for_bulk_process
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import StackView, fingerprint, stack_view
from stacks.graph import GraphResource, ResourceGraph, capture_view
from stacks.spec import StackSpec

KEEP_PER_STACK = 3  # main's graph and those of a few open merge requests
IN_PROCESS_MAX = 150  # below this many misses, spawning workers (each imports Pulumi: seconds) costs more
_CODE_PACKAGES = ("components", "stacks", "hypergov")


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
    return capture_view(view, name, assume_role_name=assume_role_name)


def _to_json(graph: ResourceGraph) -> str:
    return json.dumps({"stack": graph.stack, "resources": [r.as_dict() for r in graph.resources]},
                      sort_keys=True, separators=(",", ":"))


def _from_json(text: str) -> ResourceGraph:
    data = json.loads(text)
    resources = tuple(GraphResource(
        urn=r["urn"], type=r["type"], name=r["name"], parent=r["parent"], custom=r["custom"], provider=r["provider"],
        inputs=r["inputs"], depends_on=tuple(r["dependsOn"]),
        property_dependencies={k: tuple(v) for k, v in r["propertyDependencies"].items()},
        import_id=r.get("importId")) for r in data["resources"])
    return ResourceGraph(stack=data["stack"], resources=resources)


def _cache_key(name: str, view: StackView, assume_role_name: str) -> str:
    role = f"-{hashlib.sha256(assume_role_name.encode()).hexdigest()[:8]}" if assume_role_name else ""
    return f"{name}@{fingerprint(view)[:24]}-{code_digest()}{role}"


def stack_graphs(tree: GovernanceTree, specs: Sequence[StackSpec], cache_dir: Path | None, *,
                 assume_role_name: str = "", workers: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, ResourceGraph]:
    """Every stack's graph, from the cache where its inputs are unchanged (stack name -> graph);
    `assume_role_name`: the role its AWS providers assume in member accounts (none: the caller's)."""
    views: dict[str, StackView] = {s.name: stack_view(tree, s.kind, s.subject) for s in specs}
    keys = {name: _cache_key(name, view, assume_role_name) for name, view in views.items()}
    graphs: dict[str, ResourceGraph] = {}
    if cache_dir is not None:
        for name, key in keys.items():
            cached = cache_dir / f"{key}.json"
            try:
                graphs[name] = _from_json(cached.read_text())
                os.utime(cached)  # recently used: kept when the stack's older entries are evicted
            except FileNotFoundError:
                pass
    misses = [(views[n], n, assume_role_name) for n in views if n not in graphs]
    if len(misses) <= IN_PROCESS_MAX or (workers or os.cpu_count() or 1) == 1 or not _can_spawn():
        with bulk_work():
            captured = [_capture(m) for m in misses]
    else:
        # spawn, not fork: a fork of a process with threads (a pytest worker, a daemon with a webhook
        # listener) can copy a held lock into the child, which then never starts.
        with ProcessPoolExecutor(max_workers=workers or os.cpu_count(), initializer=tune_for_bulk_process,
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            captured = list(pool.map(_capture, misses, chunksize=max(1, len(misses) // 32)))
    for graph in captured:
        graphs[graph.stack] = graph
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)
            target = cache_dir / f"{keys[graph.stack]}.json"
            partial = target.with_name(f"{target.name}.{os.getpid()}-{threading.get_ident()}.tmp")
            partial.write_text(_to_json(graph))
            partial.replace(target)  # never a half-written entry under the final name
    if cache_dir is not None and captured:
        _evict(cache_dir, {g.stack for g in captured})
    if progress:
        progress(len(misses), len(views))
    return {name: graphs[name] for name in views}


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
