"""One spelling of a declared cluster's CreateCluster request: what the component declares as
pulumi-aws-native's `sagemaker.Cluster` (for `pulumi up`) is, field for field after the SDK's
case conversions, the request the HyperPod cluster executor sends, and it fits botocore's model
of CreateCluster (members, required members, enums, integer bounds)."""

from __future__ import annotations

from engines.hyperpod.cluster_executor import declared_clusters
from engines.hyperpod.executor import _pascal
from hypergov.model.tree import GovernanceTree
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from stacks.graph import capture_graph
from tests.clusters.cluster_files import CONFIG, declared_cluster, with_files
from tests.stacks.test_quota_request_round_trip import SAGEMAKER, _check_shape


def _tree(**hyperpod: object) -> GovernanceTree:
    files = {k: v for k, v in read_tree_dir(CONFIG).items() if isinstance(v, bytes)}
    if hyperpod.get("decommission"):  # CLU002 otherwise: nlp and research hold quota on trn-east
        files = {k: v for k, v in files.items() if not k.startswith(("projects/nlp", "projects/research",
                                                                     "workloads/nlp/", "workloads/research/"))}
    report = validate_files(with_files(files, clusters__trn_east=declared_cluster(**hyperpod)))
    assert report.ok, report.problems
    return report.tree


def test_the_component_declares_the_request_the_executor_sends() -> None:
    tree = _tree(node_recovery="Automatic")
    (declared,) = declared_clusters(tree)
    resources = [r for r in capture_graph(tree, "cluster-trn-east").resources
                 if r.type == "aws-native:sagemaker:Cluster"]
    assert len(resources) == 1
    inputs = dict(resources[0].inputs)
    inputs.pop("tags")
    assert _pascal(inputs) == declared.request
    _check_shape(declared.request, SAGEMAKER.operation_model("CreateCluster").input_shape, "CreateCluster")


def test_nothing_is_declared_on_a_cluster_being_decommissioned() -> None:
    tree = _tree(decommission=True)
    assert [r.type for r in capture_graph(tree, "cluster-trn-east").resources
            if r.type.startswith(("aws-native:", "kubernetes:"))] == []


def test_a_live_cluster_is_imported_by_pulumi_not_created_twice() -> None:
    """The reconciler's cluster phase creates or adopts the cluster with boto3 before the stacks
    (`reconciler.clusters`); the stacks are then declared from the tree with its live ARN. Pulumi's
    `import_` option makes `pulumi up` take that cluster over (the ID of aws-native's
    `AWS::SageMaker::Cluster` is its ClusterArn) instead of creating it a second time. A cluster not
    created yet (no ARN) is created. What crosses the seam is the registration's `importId`."""
    from engines.hyperpod.cluster_executor import with_cluster_arns

    arn = "arn:aws:sagemaker:us-east-1:444455556666:cluster/abcdef012345"
    tree = _tree()
    assert tree.clusters["trn-east"].model.hyperpod.arn is None

    def cluster_resource(t: GovernanceTree) -> object:
        (resource,) = [r for r in capture_graph(t, "cluster-trn-east").resources
                       if r.type == "aws-native:sagemaker:Cluster"]
        return resource

    assert cluster_resource(tree).import_id is None  # type: ignore[attr-defined]
    live = with_cluster_arns(tree, {"trn-east": arn})
    imported = cluster_resource(live)
    assert imported.import_id == arn  # type: ignore[attr-defined]
    assert imported.as_dict()["importId"] == arn  # type: ignore[attr-defined]
    from engines.graphs import _from_json, _to_json  # the graph cache keeps it

    graph = capture_graph(live, "cluster-trn-east")
    assert _from_json(_to_json(graph)) == graph
