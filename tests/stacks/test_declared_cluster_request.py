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
