"""The graph cache shared by the live scan and the terraform engine (`engines.graphs`)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from engines.graphs import KEEP_PER_STACK, stack_graphs
from engines.terraform.workspace import copy_for_planning
from hypergov.stack_views import stack_view
from hypergov.validate import load_valid_tree
from stacks.graph import ResourceGraph, capture_view
from stacks.spec import find_stack

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
