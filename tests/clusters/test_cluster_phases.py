"""The pure parts of applying declared clusters around the stacks: which decisions go before the
stacks and which after (AWS: quotas bind to a live cluster; DeleteCluster refuses a cluster that
still has quotas or a scheduler config), which refusals stop a run and how (busy: temporary), and
the live ARN a managed cluster's stacks are declared with."""

from __future__ import annotations

import pytest

from engines.hyperpod.cluster_driver import ClusterAction, ClusterPlan
from engines.hyperpod.cluster_executor import (
    PlannedCluster,
    awaiting_cluster,
    declared_clusters,
    live_arns,
    with_cluster_arns,
)
from hypergov.model.tree import GovernanceTree
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from reconciler.clusters import held_back, phases
from tests.clusters.cluster_files import CONFIG, GPU_WEST_GROUPS, declared_cluster, with_files

ARN = "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdefgh1234"


def _tree() -> GovernanceTree:
    """gpu-west declared (managed, task governance) without its ARN, trn-east declared too."""
    files = with_files(read_tree_dir(CONFIG), clusters__gpu_west=declared_cluster(GPU_WEST_GROUPS, example="gpu-west",
                                                                            name="gpu-west"),
                       clusters__trn_east=declared_cluster())
    report = validate_files(files)
    assert report.ok, report.problems
    return report.tree


def _planned(action: ClusterAction, *, key: str = "gpu-west", refusal: str | None = None,
             status: str | None = None, arn: str | None = None) -> PlannedCluster:
    (declared,) = [d for d in declared_clusters(_tree()) if d.key == key]
    return PlannedCluster(declared, ClusterPlan(declared.name, action, refusal=refusal, live_status=status), arn=arn)


def test_decommissions_go_after_the_stacks_everything_else_before() -> None:
    create, scale, gone = _planned("create"), _planned("scale", key="trn-east"), _planned("decommission")
    split = phases([create, gone, scale])
    assert split.first == (create, scale) and split.last == (gone,)


@pytest.mark.parametrize(("status", "kind", "refused"), [
    pytest.param("Updating", "temporary", False, id="busy-is-retried"),
    pytest.param("InService", None, True, id="not-adopted-needs-a-commit"),
    pytest.param("Failed", None, True, id="failed-needs-a-person"),
])
def test_a_refused_cluster_decision_stops_the_run(status: str, kind: str | None, refused: bool) -> None:
    result = held_back([_planned("scale", key="trn-east"),
                        _planned("none", refusal="cannot go on", status=status)])
    assert result is not None and not result.ok and result.stack == "hyperpod-clusters"
    assert (result.refusal is not None) == refused
    assert (result.error.kind if result.error else None) == kind
    assert "gpu-west: cannot go on" in (result.failure or "")


def test_nothing_refused_holds_nothing_back() -> None:
    assert held_back([_planned("create"), _planned("none", key="trn-east")]) is None


def test_the_stacks_bind_to_the_live_arn_and_wait_while_there_is_none() -> None:
    tree = _tree()
    assert awaiting_cluster(tree) == {"cluster-gpu-west": (
        "planned once HyperPod cluster 'gpu-west' is created: its scheduler config and compute quotas bind to "
        "the ARN SageMaker gives it")}  # trn-east is plain EKS: nothing binds to its ARN
    arns = live_arns([_planned("scale", arn=ARN), _planned("create", key="trn-east")])
    assert arns == {"gpu-west": ARN}
    resolved = with_cluster_arns(tree, arns)
    assert resolved.clusters["gpu-west"].model.hyperpod.arn == ARN
    assert tree.clusters["gpu-west"].model.hyperpod.arn is None  # the tree as Git holds it is not changed
    assert awaiting_cluster(resolved) == {}


def test_a_decommissioned_cluster_has_no_arn_and_awaits_nothing() -> None:
    planned = _planned("decommission", arn=ARN)
    assert live_arns([planned], [(planned, None, None)]) == {}
