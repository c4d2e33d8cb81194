"""The graph cache shared by the live scan and the terraform engine (`engines.graphs`)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from engines.graphs import KEEP_PER_STACK, stack_graphs
from engines.terraform.workspace import copy_for_planning
from hypergov.stack_views import stack_view
from hypergov.validate import load_valid_tree
from stacks import graph as stacks_graph
from stacks.graph import capture_view
from stacks.resource_graph import ResourceGraph
from stacks.spec import StackSpec, find_stack

CONFIG = Path(__file__).resolve().parents[2] / "config"
ROLE = "OrganizationAccountAccessRole"


def _assumed_roles(graph: ResourceGraph) -> set[str]:
    """The AWS providers' assumeRole inputs (as Pulumi serialises them: a JSON string)."""
    return {str(r.inputs.get("assumeRole") or "") for r in graph.resources if r.type.startswith("pulumi:providers:aws")}


def test_the_assumed_role_is_part_of_the_key_and_of_the_graph(tmp_path: Path) -> None:
    tree = load_valid_tree(CONFIG)
    spec = find_stack(tree, "cluster-gpu-west")
    plain = stack_graphs(tree, [spec], tmp_path)[spec.name]
    assumed = stack_graphs(tree, [spec], tmp_path, assume_role_name=ROLE)[spec.name]
    assert len(list(tmp_path.glob(f"{spec.name}@*.json"))) == 2  # one entry each, neither evicted
    # The graph the engine captures itself (its provider assumes the settings' role in member accounts).
    expected = capture_view(stack_view(tree, spec.kind, spec.subject), spec.name, assume_role_name=ROLE)
    assert _assumed_roles(assumed) == _assumed_roles(expected)
    assert any(f":role/{ROLE}" in role for role in _assumed_roles(assumed))
    assert not any(_assumed_roles(plain) - {""})
    again = stack_graphs(tree, [spec], tmp_path, assume_role_name=ROLE)[spec.name]  # from the cache
    assert again == assumed


def test_each_stack_keeps_its_most_recently_used_entries(tmp_path: Path) -> None:
    tree = load_valid_tree(CONFIG)
    spec = find_stack(tree, "cluster-gpu-west")
    stack_graphs(tree, [spec], tmp_path)
    (current,) = tmp_path.glob(f"{spec.name}@*.json")
    for n in range(KEEP_PER_STACK + 1):  # older entries of other trees of the stack
        old = tmp_path / f"{spec.name}@old{n}.json"
        old.write_text(current.read_text())
        os.utime(old, (1_000 + n, 1_000 + n))
    os.utime(current, (1, 1))  # the oldest on disk, but read next: used most recently
    stack_graphs(tree, [spec], tmp_path)
    stack_graphs(tree, [spec], tmp_path, assume_role_name=ROLE)  # a miss: written, then the stack's entries evicted
    left = sorted(p.name for p in tmp_path.glob(f"{spec.name}@*.json"))
    assert len(left) == KEEP_PER_STACK
    assert current.name in left and f"{spec.name}@old{KEEP_PER_STACK}.json" in left
    assert f"{spec.name}@old0.json" not in left


def test_a_private_copy_of_the_state_shares_the_graph_cache(tmp_path: Path) -> None:
    shared, private = tmp_path / "state", tmp_path / "private"
    (shared / "graphs").mkdir(parents=True)
    (shared / "graphs" / "org@x.json").write_text("{}")
    copy_for_planning(shared, private)
    assert (private / "graphs").resolve() == (shared / "graphs").resolve()
    assert (private / "graphs" / "org@x.json").read_text() == "{}"


def test_a_capture_in_another_thread_is_the_same_graph() -> None:
    """A plan captures the head's graphs on a background thread while its scan reads (asyncio
    gives only the main thread an event loop on demand)."""
    tree = load_valid_tree(CONFIG)
    spec = find_stack(tree, "project-speech")
    with ThreadPoolExecutor(max_workers=1) as other:
        captured = other.submit(stack_graphs, tree, [spec], None).result()[spec.name]
    assert captured == capture_view(stack_view(tree, spec.kind, spec.subject), spec.name)


def test_two_threads_missing_one_stack_capture_it_once(tmp_path: Path) -> None:
    """The daemon plans on one thread while a scheduled scan reads on another: both miss the same
    stack at the same moment. It is captured once (the second reads the first's entry) and both get
    the graph a lone capture gives."""
    tree = load_valid_tree(CONFIG)
    spec = find_stack(tree, "cluster-gpu-west")
    start = threading.Barrier(2)
    captured: list[int] = []

    def plan() -> ResourceGraph:
        start.wait()
        return stack_graphs(tree, [spec], tmp_path, progress=lambda n, _: captured.append(n))[spec.name]

    with ThreadPoolExecutor(max_workers=2) as threads:
        first, second = (f.result() for f in [threads.submit(plan), threads.submit(plan)])
    expected = capture_view(stack_view(tree, spec.kind, spec.subject), spec.name)
    assert first == second == expected
    assert sorted(captured) == [0, 1]  # one capture, one read of its entry
    assert len(list(tmp_path.glob(f"{spec.name}@*.json"))) == 1 and not list(tmp_path.glob("*.tmp"))


def test_in_process_captures_never_overlap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pulumi's runtime is one per process: two threads capturing different stacks (no cache)
    take turns. Spy: the real `capture_view`, counting how many run at once."""
    tree = load_valid_tree(CONFIG)
    specs = [find_stack(tree, "project-speech"), find_stack(tree, "cluster-gpu-west")]
    running, most = [0], [0]
    guard = threading.Lock()

    def counted(*args: Any, **kwargs: Any) -> ResourceGraph:
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return capture_view(*args, **kwargs)
        finally:
            with guard:
                running[0] -= 1

    monkeypatch.setattr(stacks_graph, "capture_view", counted)  # where `engines.graphs` imports it when capturing
    start = threading.Barrier(2)

    def plan(spec: StackSpec) -> ResourceGraph:
        start.wait()
        return stack_graphs(tree, [spec], None)[spec.name]

    with ThreadPoolExecutor(max_workers=2) as threads:
        got = list(threads.map(plan, specs))
    assert most[0] == 1
    assert got == [capture_view(stack_view(tree, s.kind, s.subject), s.name) for s in specs]


_PROCESS = """
import sys, time
from pathlib import Path
from engines.graphs import stack_graphs
from hypergov.validate import load_valid_tree
from stacks.spec import find_stack

cache, ready, other = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
tree = load_valid_tree(sys.argv[4])
spec = find_stack(tree, "cluster-gpu-west")
ready.touch()
while not other.exists():  # both start capturing at the same moment
    time.sleep(0.01)
stack_graphs(tree, [spec], cache, progress=lambda captured, _: print(captured))
"""


def test_two_processes_sharing_the_cache_capture_a_stack_once(tmp_path: Path) -> None:
    """A CLI plan and the reconciler share `<state_dir>/graphs`: the stack both miss is captured
    by one process; the other waits for its turn and reads the entry."""
    cache = tmp_path / "graphs"
    flags = [tmp_path / "ready-a", tmp_path / "ready-b"]
    root = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-c", _PROCESS, str(cache), str(mine), str(theirs), str(CONFIG)],
                              cwd=root, stdout=subprocess.PIPE, text=True)
             for mine, theirs in (flags, flags[::-1])]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert sorted(int(out.split()[-1]) for out in outputs) == [0, 1]
    tree = load_valid_tree(CONFIG)
    spec = find_stack(tree, "cluster-gpu-west")
    assert len(list(cache.glob(f"{spec.name}@*.json"))) == 1  # one entry, read back below
    assert stack_graphs(tree, [spec], cache)[spec.name] == capture_view(stack_view(tree, spec.kind, spec.subject),
                                                                        spec.name)
    assert not list(cache.glob("*.tmp"))
