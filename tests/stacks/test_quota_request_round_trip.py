"""One spelling of a compute quota request: the view's `EffectiveQuota.request` (SageMaker's own
CreateComputeQuota shape) is what the component declares, and what the terraform engine reads back
out of the captured graph after the Pulumi SDK's snake_case and camelCase conversions, field for
field. The request is also checked against botocore's service model of CreateComputeQuota, so a
misspelled key fails here and not at SageMaker."""

from __future__ import annotations

import botocore.session
import pytest

from engines.hyperpod.executor import desired_objects
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import ClusterView, stack_view
from stacks.resource_graph import ResourceGraph

SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")


def _governed(tree: GovernanceTree) -> list[str]:
    return [c for c, m in sorted(tree.clusters.items()) if m.model.task_governance]


def test_the_example_tree_has_task_governance_quotas(tree: GovernanceTree) -> None:
    assert _governed(tree), "the round trip needs at least one task-governance cluster"


@pytest.mark.parametrize("cluster", ["gpu-west"])
def test_the_engine_reads_back_exactly_the_views_request(cluster: str, tree: GovernanceTree,
                                                         graphs: dict[str, ResourceGraph]) -> None:
    view = stack_view(tree, "cluster", cluster)
    assert isinstance(view, ClusterView) and view.hyperpod_arn
    read_back = {o.name: o.request for o in desired_objects(graphs[f"cluster-{cluster}"].resources)
                 if o.kind.noun == "ComputeQuota"}
    expected = {q.name: q.request(cluster_arn=view.hyperpod_arn) for q in view.quotas.values()}
    assert read_back == expected
    assert len(expected) == len(view.teams) > 0


def _check_shape(value: object, shape: botocore.model.Shape, path: str) -> None:
    if shape.type_name == "structure":
        assert isinstance(value, dict), path
        unknown = set(value) - set(shape.members)
        assert not unknown, f"{path}: {unknown} are not members of {shape.name}"
        missing = set(shape.required_members) - set(value)
        assert not missing, f"{path}: {missing} are required by {shape.name}"
        for key, item in value.items():
            _check_shape(item, shape.members[key], f"{path}.{key}")
    elif shape.type_name == "list":
        assert isinstance(value, list), path
        for index, item in enumerate(value):
            _check_shape(item, shape.member, f"{path}[{index}]")
    elif getattr(shape, "enum", None):
        assert value in shape.enum, f"{path}: {value!r} not in {shape.enum}"  # type: ignore[attr-defined]
    elif shape.type_name == "integer":
        assert isinstance(value, int), path
        low, high = shape.metadata.get("min"), shape.metadata.get("max")
        assert low is None or value >= low, f"{path}: {value} below the model's minimum {low}"
        assert high is None or value <= high, f"{path}: {value} above the model's maximum {high}"


def test_every_request_matches_the_service_model(tree: GovernanceTree) -> None:
    operation = SAGEMAKER.operation_model("CreateComputeQuota").input_shape
    checked = 0
    for cluster in _governed(tree):
        view = stack_view(tree, "cluster", cluster)
        assert isinstance(view, ClusterView) and view.hyperpod_arn
        for quota in view.quotas.values():
            _check_shape(quota.request(cluster_arn=view.hyperpod_arn), operation, quota.name)
            checked += 1
    assert checked > 0
