"""The synthetic organization the benchmarks use is a valid tree of the requested size, and the
same seed gives the same bytes (benchmarks compare runs, so their input must not move)."""

from __future__ import annotations

import pytest

from benchmarks.synthetic import generate_org
from hypergov.validate import validate_files


@pytest.mark.parametrize(("projects", "clusters", "seed"), [
    pytest.param(1, 1, 0, id="smallest"),
    pytest.param(3, 5, 2, id="fewer-projects-than-clusters"),
    pytest.param(60, 4, 7, id="medium"),
    pytest.param(1000, 10, 1, id="benchmark-size"),
])
def test_synthetic_org_is_valid_and_sized(projects: int, clusters: int, seed: int) -> None:
    files = generate_org(projects=projects, clusters=clusters, seed=seed)
    report = validate_files(files)
    assert report.problems == []
    assert len(report.tree.projects) == projects
    assert len(report.tree.clusters) == clusters
    assert all(p.model.quotas for p in report.tree.projects.values())


def test_synthetic_org_is_deterministic_per_seed() -> None:
    first = generate_org(projects=40, clusters=3, seed=11)
    assert generate_org(projects=40, clusters=3, seed=11) == first
    assert generate_org(projects=40, clusters=3, seed=12) != first


def test_synthetic_org_covers_both_cluster_modes() -> None:
    tree = validate_files(generate_org(projects=20, clusters=4, seed=0)).tree
    modes = {c.model.task_governance for c in tree.clusters.values()}
    assert modes == {True, False}


def test_synthetic_org_refuses_empty_sizes() -> None:
    with pytest.raises(ValueError, match="at least one project"):
        generate_org(projects=0, clusters=1, seed=0)
