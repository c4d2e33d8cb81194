"""`plan_cluster` decides without I/O: each case builds the live cluster as DescribeCluster
describes it and the tree's CreateCluster request, and says by hand what must happen."""

from __future__ import annotations

from typing import Any

from engines.hyperpod.cluster_driver import OWNER_TAG, LiveCluster, LiveGroup, plan_cluster

ROLE = "arn:aws:iam::444455556666:role/nodes"
LIFECYCLE = {"SourceS3Uri": "s3://b/lc/", "OnCreate": "on_create.sh"}
GPUS = {"ml.p4d.24xlarge": 8, "ml.trn1.32xlarge": 16}  # AWS: 8 A100 per p4d.24xlarge, 16 Trainium per trn1.32xlarge


def _spec(name: str, instance_type: str, count: int) -> dict[str, Any]:
    return {"InstanceGroupName": name, "InstanceType": instance_type, "InstanceCount": count,
            "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE}


def _desired(*groups: tuple[str, str, int]) -> dict[str, Any]:
    return {"ClusterName": "c", "InstanceGroups": [_spec(*g) for g in groups],
            "Orchestrator": {"Eks": {"ClusterArn": "arn:aws:eks:us-east-1:444455556666:cluster/e"}}}


def _live(*groups: tuple[str, str, int], status: str = "InService", owned: bool = True,
          failure: str | None = None) -> LiveCluster:
    return LiveCluster(arn="arn:aws:sagemaker:us-east-1:444455556666:cluster/abcdefabcdef", status=status,
                       failure_message=failure, groups={n: LiveGroup(n, t, c) for n, t, c in groups},
                       specs={n: _spec(n, t, c) for n, t, c in groups}, settings={},
                       tags={OWNER_TAG: "true"} if owned else {})


def _plan(desired: dict[str, Any], live: LiveCluster | None, *, adopt: bool = False,
          decommission: bool = False) -> Any:
    return plan_cluster(desired=desired, adopt=adopt, decommission=decommission, observed=live,
                        gpus=lambda t: GPUS.get(t, 0))


def test_a_missing_cluster_is_created_with_all_its_gpus() -> None:
    """2 p4d x 8 + 1 trn1 x 16 = 32."""
    plan = _plan(_desired(("a", "ml.p4d.24xlarge", 2), ("b", "ml.trn1.32xlarge", 1)), None)
    assert (plan.action, plan.gpu_delta) == ("create", 32)


def test_a_scale_names_only_the_changed_group() -> None:
    plan = _plan(_desired(("a", "ml.p4d.24xlarge", 8), ("b", "ml.trn1.32xlarge", 1)),
                 _live(("a", "ml.p4d.24xlarge", 4), ("b", "ml.trn1.32xlarge", 1)))
    assert plan.action == "scale" and plan.request == {"ClusterName": "c",
                                                       "InstanceGroups": [_spec("a", "ml.p4d.24xlarge", 8)]}
    assert plan.gpu_delta == 4 * 8 and plan.changed == ("InstanceGroups.a.InstanceCount",)


def test_a_group_left_out_of_the_tree_is_deleted() -> None:
    plan = _plan(_desired(("a", "ml.p4d.24xlarge", 4)),
                 _live(("a", "ml.p4d.24xlarge", 4), ("b", "ml.trn1.32xlarge", 2)))
    assert plan.request == {"ClusterName": "c", "InstanceGroupsToDelete": ["b"]} and plan.gpu_delta == -2 * 16


def test_a_changed_instance_type_is_refused() -> None:
    """AWS: a group's instance type cannot change; a new group is needed."""
    plan = _plan(_desired(("a", "ml.trn1.32xlarge", 4)), _live(("a", "ml.p4d.24xlarge", 4)))
    assert plan.action == "none" and "cannot change" in (plan.refusal or "")


def test_a_failed_cluster_says_aws_failure_message() -> None:
    plan = _plan(_desired(("a", "ml.p4d.24xlarge", 8)),
                 _live(("a", "ml.p4d.24xlarge", 4), status="Failed", failure="InsufficientCapacity in us-east-1a"))
    assert plan.action == "none" and "Failed: InsufficientCapacity in us-east-1a" in (plan.refusal or "")
    assert (plan.live_status, plan.failure_message) == ("Failed", "InsufficientCapacity in us-east-1a")


def test_an_unowned_cluster_shows_the_diff_but_is_left_alone_until_adopted() -> None:
    desired, live = _desired(("a", "ml.p4d.24xlarge", 6)), _live(("a", "ml.p4d.24xlarge", 4), owned=False)
    shown = _plan(desired, live)
    assert shown.action == "none" and shown.request == {} and shown.changed == ("InstanceGroups.a.InstanceCount",)
    adopted = _plan(desired, live, adopt=True)
    assert adopted.action == "adopt" and adopted.gpu_delta == 2 * 8


def test_decommission_removes_every_gpu_and_nothing_when_gone() -> None:
    live = _live(("a", "ml.p4d.24xlarge", 4), ("b", "ml.trn1.32xlarge", 2))
    assert _plan(_desired(("a", "ml.p4d.24xlarge", 4)), live, decommission=True).gpu_delta == -(4 * 8 + 2 * 16)
    assert _plan(_desired(("a", "ml.p4d.24xlarge", 4)), None, decommission=True).action == "none"


def test_a_create_on_an_eks_cluster_without_access_entries_is_refused_before_anything() -> None:
    """EKS's accessConfig.authenticationMode: CONFIG_MAP | API | API_AND_CONFIG_MAP; HyperPod needs
    one of the two that serve access entries. A missing EKS cluster is refused as well; a scale of
    a live cluster is never touched by the check."""
    from engines.hyperpod.cluster_driver import orchestrator_refusal

    eks = "arn:aws:eks:us-east-1:444455556666:cluster/e"
    create = _plan(_desired(("g", "ml.p4d.24xlarge", 2)), None)
    for mode in ("API", "API_AND_CONFIG_MAP"):
        assert orchestrator_refusal(create, eks_cluster_arn=eks, mode=mode) == create
    refused = orchestrator_refusal(create, eks_cluster_arn=eks, mode="CONFIG_MAP")
    assert (refused.action, refused.request) == ("none", {})
    assert "'e' uses authentication mode CONFIG_MAP" in (refused.refusal or "")
    missing = orchestrator_refusal(create, eks_cluster_arn=eks, mode=None)
    assert "'e' does not exist" in (missing.refusal or "")
    scale = _plan(_desired(("g", "ml.p4d.24xlarge", 4)), _live(("g", "ml.p4d.24xlarge", 2)))
    assert orchestrator_refusal(scale, eks_cluster_arn=eks, mode="CONFIG_MAP") == scale
