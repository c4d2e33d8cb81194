"""Seeding a tree whose cluster declares its instance groups runs the cluster with those groups
(names, types, counts), so adopting it compares group by group; a cluster without declared
groups keeps one group per instance type of its capacity (named `<family>-<size>`)."""

from __future__ import annotations

from embedded_aws import EmbeddedAws, seed_tree_clusters
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from tests.clusters.cluster_files import CONFIG, declared_cluster, with_files


def test_declared_groups_are_seeded_as_declared(aws: EmbeddedAws) -> None:
    files = {k: v for k, v in read_tree_dir(CONFIG).items() if isinstance(v, bytes)}
    groups = (("trn", "ml.trn1.32xlarge", 16), ("a100", "ml.p4d.24xlarge", 8))
    report = validate_files(with_files(files, clusters__trn_east=declared_cluster(groups)))
    assert report.ok, report.problems
    aws.reset()  # moto's state is process-wide: a module run before in this worker may have seeded trn-east
    seed_tree_clusters(report.tree, aws)
    east = aws.client("sagemaker", account="444455556666", region="us-east-1").describe_cluster(ClusterName="trn-east")
    assert sorted((g["InstanceGroupName"], g["InstanceType"], g["TargetCount"]) for g in east["InstanceGroups"]) == [
        ("a100", "ml.p4d.24xlarge", 8), ("trn", "ml.trn1.32xlarge", 16)]
    west = aws.client("sagemaker", account="111122223333", region="us-west-2").describe_cluster(ClusterName="gpu-west")
    assert sorted(g["InstanceGroupName"] for g in west["InstanceGroups"]) == ["g5-12xlarge", "p5-48xlarge"]
