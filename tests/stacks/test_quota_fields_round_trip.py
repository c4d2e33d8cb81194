"""The newer quota fields survive the Pulumi declaration: a tree whose quotas give absolute
borrow limits, accelerators and MIG partitions is captured as pulumi-aws-native
`sagemaker.ComputeQuota` resources (whose SDK has `absolute_borrow_limits`,
`accelerator_partition`, `accelerators`, `v_cpu`, `memory_in_gi_b`), and the terraform engine
reads back exactly the view's CreateComputeQuota requests; each request passes the embedded
endpoint's check against botocore's service model (types, enums, ranges, lengths)."""

from __future__ import annotations

from dataclasses import replace

import botocore.session

from embedded_aws.modelcheck import check_input
from engines.hyperpod.executor import desired_objects
from hypergov.stack_views import ClusterView, stack_view
from stacks.graph import capture_graph
from tests.quota_fields_tree import tree_with_new_fields

SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")


def test_the_engine_reads_back_the_new_fields_exactly() -> None:
    tree = tree_with_new_fields()
    view = stack_view(tree, "cluster", "gpu-west")
    assert isinstance(view, ClusterView) and view.hyperpod_arn
    graph = capture_graph(tree, "cluster-gpu-west")

    read_back = {o.name: o.request for o in desired_objects(graph.resources) if o.kind.noun == "ComputeQuota"}

    vision, recsys = read_back["vision-on-gpu-west"], read_back["recsys-on-gpu-west"]
    assert read_back == {q.name: q.request(cluster_arn=view.hyperpod_arn) for q in view.quotas.values()}
    # by hand from tests/quota_fields_tree.py, resources and limits sorted by instance type
    assert vision["ComputeQuotaConfig"]["ComputeQuotaResources"] == [
        {"InstanceType": "ml.g5.12xlarge", "Accelerators": 8}, {"InstanceType": "ml.p5.48xlarge", "Count": 10}]
    assert vision["ComputeQuotaConfig"]["ResourceSharingConfig"] == {
        "Strategy": "LendAndBorrow", "BorrowLimit": 50,
        "AbsoluteBorrowLimits": [{"InstanceType": "ml.g5.12xlarge", "Count": 1},
                                 {"InstanceType": "ml.p5.48xlarge", "Accelerators": 16}]}
    assert recsys["ComputeQuotaConfig"]["ComputeQuotaResources"][1] == {
        "InstanceType": "ml.p5.48xlarge", "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 14}}


def test_every_request_passes_the_service_model() -> None:
    tree = tree_with_new_fields()
    view = stack_view(tree, "cluster", "gpu-west")
    assert isinstance(view, ClusterView) and view.hyperpod_arn
    shape = SAGEMAKER.operation_model("CreateComputeQuota").input_shape

    violations = {q.name: check_input(shape, q.request(cluster_arn=view.hyperpod_arn)) for q in view.quotas.values()}

    assert violations == {name: [] for name in violations}


def test_a_cluster_with_idle_resource_sharing_off_writes_disabled_and_keeps_each_teams_sharing() -> None:
    tree = tree_with_new_fields()
    cluster = tree.clusters["gpu-west"].model
    scheduler = cluster.scheduler.model_copy(update={"idle_resource_sharing": False})
    tree.clusters["gpu-west"] = replace(tree.clusters["gpu-west"], model=cluster.model_copy(
        update={"scheduler": scheduler}))
    view = stack_view(tree, "cluster", "gpu-west")
    assert isinstance(view, ClusterView)

    config = view.scheduler_config_request(cluster_arn="arn")["SchedulerConfig"]
    off = view.quotas["vision"].request(cluster_arn="arn")["ComputeQuotaConfig"]["ResourceSharingConfig"]
    on = stack_view(tree_with_new_fields(), "cluster", "gpu-west")
    assert isinstance(on, ClusterView)

    assert config["IdleResourceSharing"] == "Disabled"
    # SchedulerConfig.IdleResourceSharing (SageMaker API reference): "When enabled, unallocated
    # resources are automatically calculated and made available for entities to borrow". It says
    # nothing of a team's own strategy, so the quota is sent as written, limits and all.
    assert off == on.quotas["vision"].request(cluster_arn="arn")["ComputeQuotaConfig"]["ResourceSharingConfig"]
    assert off["Strategy"] == "LendAndBorrow"


def test_vcpu_and_memory_are_sent_as_given() -> None:
    tree = tree_with_new_fields()
    view = stack_view(tree, "cluster", "gpu-west")
    assert isinstance(view, ClusterView)

    speech = view.quotas["speech"].request(cluster_arn="arn")["ComputeQuotaConfig"]["ComputeQuotaResources"]

    assert speech == [{"InstanceType": "ml.g5.12xlarge", "VCpu": 96, "MemoryInGiB": 384}]
