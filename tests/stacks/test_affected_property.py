"""The affected-stack set is exact where it matters, by property: for random single-field edits of
a synthetic org, every stack whose captured resource graph changes is in the affected set (so no
stack outside it changes). A merged change planned for no stack while the head is recorded as
applied is what this rules out.

The edits are drawn from every scalar leaf of every file of the tree (numbers moved by one,
booleans flipped, strings changed, optional keys dropped); an edit that makes the tree invalid is
discarded, as the gate would refuse it. Graphs are captured with the real Pulumi SDK under mocks,
as the engines capture them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import generate_org
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from stacks.affected import affected_stacks
from stacks.graph import capture_graph
from stacks.spec import plan_stacks
from tests.tree_edits import Edit, edited, single_field_edits

FILES = generate_org(projects=5, clusters=4, seed=11)  # cluster c03 runs plain EKS (Kueue)


def _valid(files: dict[str, bytes]) -> GovernanceTree | None:
    report = validate_files(files)
    return report.tree if report.ok else None


EDITS = single_field_edits(FILES)


@pytest.fixture(scope="module")
def base() -> tuple[GovernanceTree, dict[str, Any]]:
    tree = _valid(FILES)
    assert tree is not None, "the synthetic org must validate"
    return tree, {s.name: capture_graph(tree, s.name).to_json(readable=False) for s in plan_stacks(tree)}


def test_the_edits_reach_every_kind_of_file() -> None:
    files = {name.split("/")[0] for name, _, _ in EDITS}
    assert files == {"org.yaml", "clusters", "projects", "workloads"}


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
@given(edit=st.sampled_from(EDITS))
def test_every_stack_whose_graph_changes_is_affected(edit: Edit,
                                                     base: tuple[GovernanceTree, dict[str, Any]]) -> None:
    before, graphs = base
    after = _valid(edited(FILES, *edit))
    assume(after is not None)
    assert after is not None
    affected = affected_stacks(before, after)
    planned = {*affected.to_plan, *affected.removed}
    for spec in plan_stacks(after):
        if spec.name in planned:
            continue
        assert capture_graph(after, spec.name).to_json(readable=False) == graphs[spec.name], (
            f"{edit} changes the graph of {spec.name}, which the affected set {sorted(planned)} misses")
