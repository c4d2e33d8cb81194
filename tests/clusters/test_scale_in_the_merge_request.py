"""A merge request that scales a declared group shows the capacity gain in the governance
summary (the capacity is derived from the groups, so no second number changes) and in the
capacity simulation's inputs. By hand: trn-east gains a g5.48xlarge group 4 -> 8 instances;
AWS gives ml.g5.48xlarge 8 GPUs, so +4 instances and +32 GPUs."""

from __future__ import annotations

from capacity.adapter import cluster_capacities
from hypergov.governance_diff import diff_governance
from hypergov.governance_markdown import governance_markdown
from hypergov.model.tree import GovernanceTree
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from tests.clusters.cluster_files import CONFIG, TRN_EAST_GROUPS, declared_cluster, with_files


def _tree(count: int) -> GovernanceTree:
    files = {k: v for k, v in read_tree_dir(CONFIG).items() if isinstance(v, bytes)}
    report = validate_files(with_files(files, clusters__trn_east=declared_cluster(
        (*TRN_EAST_GROUPS, ("g5-48xlarge", "ml.g5.48xlarge", count)))))
    assert report.ok, report.problems
    return report.tree


def test_the_governance_summary_shows_the_gpus_gained() -> None:
    diff = diff_governance(_tree(4), _tree(8))
    (cluster,) = diff.clusters
    assert cluster.name == "trn-east"
    (change,) = cluster.capacity
    assert (change.instance_type, change.instances.before, change.instances.after) == ("ml.g5.48xlarge", 4, 8)
    assert (change.gpus.before, change.gpus.after) == (32, 64)
    assert cluster.capacity_gpus.after - cluster.capacity_gpus.before == 32  # type: ignore[operator]
    assert "ml.g5.48xlarge" in governance_markdown(diff)


def test_the_capacity_simulation_sees_the_scaled_group() -> None:
    def g5(tree: GovernanceTree) -> int:
        (found,) = [c for c in cluster_capacities(tree) if c.name == "trn-east"]
        return found.capacity_gpus["ml.g5.48xlarge"]
    assert (g5(_tree(4)), g5(_tree(8))) == (4 * 8, 8 * 8)
