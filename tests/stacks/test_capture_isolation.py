"""Graph capture resets Pulumi's process-global runtime state: captures in sequence do not leak
into each other, the machine's $KUBECONFIG does not leak into them, and capturing from a config
directory equals capturing from the loaded tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from example_tree import CONFIG

from hypergov.model.tree import GovernanceTree
from hypergov.validate import InvalidTreeError, load_valid_tree
from stacks.graph import capture_graph
from stacks.spec import UnknownStackError


def test_sequential_captures_are_independent(tree: GovernanceTree) -> None:
    alone = capture_graph(tree, "project-speech").to_json()
    capture_graph(tree, "org")
    capture_graph(tree, "cluster-trn-east")
    assert capture_graph(tree, "project-speech").to_json() == alone


def test_capture_ignores_the_ambient_kubeconfig(tree: GovernanceTree, monkeypatch: pytest.MonkeyPatch) -> None:
    """pulumi-kubernetes would read $KUBECONFIG into the provider's inputs; the graph must not."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    clean = capture_graph(tree, "project-nlp")
    monkeypatch.setenv("KUBECONFIG", "/home/admin/.kube/config")
    assert capture_graph(tree, "project-nlp") == clean
    assert os.environ["KUBECONFIG"] == "/home/admin/.kube/config"  # restored for the rest of the process


def test_capture_from_directory_equals_capture_from_tree() -> None:
    from_dir = capture_graph(CONFIG, "project-vision")
    from_tree = capture_graph(load_valid_tree(CONFIG), "project-vision")
    assert from_dir.resources == from_tree.resources


def test_unknown_stack_and_invalid_tree_are_refused(tmp_path: Path, tree: GovernanceTree) -> None:
    with pytest.raises(UnknownStackError, match="project-nope"):
        capture_graph(tree, "project-nope")
    (tmp_path / "org.yaml").write_text("name: x\n")
    with pytest.raises(InvalidTreeError):
        capture_graph(tmp_path, "org")
