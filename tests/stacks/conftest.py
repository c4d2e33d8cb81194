"""Captured graphs of every stack of the example tree, shared by the property tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from example_tree import example_tree

from hypergov.model.tree import GovernanceTree
from stacks.graph import capture_graph
from stacks.resource_graph import ResourceGraph
from stacks.spec import plan_stacks


@pytest.fixture(scope="session")
def tree() -> GovernanceTree:
    return example_tree()


@pytest.fixture(scope="session")
def graphs(tree: GovernanceTree) -> dict[str, ResourceGraph]:
    return {spec.name: capture_graph(tree, spec.name) for spec in plan_stacks(tree)}
