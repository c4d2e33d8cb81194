"""`diff_governance`: the values the merge-request summary is rendered from, checked directly.
GPUs per instance are AWS's (P5: 8 H100, G5.12xlarge: 4 A10G, Trn1.32xlarge: 16 Trainium chips);
the example tree's totals are worked out in tests/core/test_merge_request_golden.py."""

from __future__ import annotations

from collections.abc import Callable

from hypergov.governance_diff import (
    BudgetChange,
    Change,
    Entry,
    FieldChange,
    GovernanceDiff,
    PriorityClassChange,
    QuotaChange,
    SharingChange,
    capacity_gpus,
    diff_governance,
)
from hypergov.model.cluster import InstanceCapacity
from hypergov.validate import validate_files
from tests.core.merge_request_cases import NEW_PROJECT, Files, replace
from tests.example_tree import example_files

VISION = "projects/vision.yaml"


def diff_of(edit: Callable[[Files], None], *, base_edit: Callable[[Files], None] | None = None) -> GovernanceDiff:
    base_files = example_files()
    if base_edit is not None:
        base_edit(base_files)
    head_files = dict(base_files)
    edit(head_files)
    base, head = validate_files(base_files), validate_files(head_files)
    assert base.ok, base.problems
    assert head.ok, head.problems
    return diff_governance(base.tree, head.tree)


def test_the_same_tree_and_a_comment_are_no_change() -> None:
    assert diff_of(lambda files: None).empty
    assert diff_of(lambda f: replace(f, VISION, "# Project layer", "# The project layer")).empty


def test_a_value_left_out_equals_hyperpods_default_written_out() -> None:
    """vision writes sharing LendAndBorrow and borrow limit 50 (both HyperPod's defaults): leaving
    them out, and writing fair-share weight 0 and preemption true where they were left out, is no change."""
    def base_edit(files: Files) -> None:
        replace(files, VISION, "fair_share_weight: 30\npreempt_own_lower_priority: true\n", "")

    def edit(files: Files) -> None:
        replace(files, VISION, "    sharing: LendAndBorrow\n    borrow_limit_percent: 50\n", "")
        replace(files, VISION, "allowed_priority_classes:",
                "fair_share_weight: 0\npreempt_own_lower_priority: true\nallowed_priority_classes:")

    assert diff_of(edit, base_edit=base_edit).empty
    written_out = diff_of(lambda f: replace(f, "clusters/gpu-west.yaml", "    instances: 32\n",
                                            "    instances: 32\n    accelerators_per_instance: 8\n"))
    assert written_out.empty  # P5 has 8 GPUs, the table's figure


def test_a_quota_change_holds_instances_gpus_and_the_clusters_totals() -> None:
    diff = diff_of(lambda f: replace(f, VISION, "ml.p5.48xlarge: 12", "ml.p5.48xlarge: 16"))
    (project,) = diff.projects
    assert project.quotas == (QuotaChange("vision", "gpu-west", "ml.p5.48xlarge", Change(12, 16), Change(96, 128)),)
    (cluster,) = diff.clusters
    assert (cluster.name, cluster.status, cluster.only_guarantees) == ("gpu-west", "changed", True)
    # 28 -> 32 p5 x 8 + 12 g5.12xlarge x 4: 272 -> 304; capacity 32 x 8 + 16 x 4 = 320
    assert cluster.guaranteed_gpus == Change(272, 304)
    assert cluster.capacity_gpus == Change(320, 320)


def test_a_quota_on_a_new_instance_type_starts_from_zero() -> None:
    diff = diff_of(lambda f: replace(f, VISION, "      ml.p5.48xlarge: 12\n",
                                     "      ml.p5.48xlarge: 12\n      ml.g5.12xlarge: 2\n"))
    assert diff.projects[0].quotas == (QuotaChange("vision", "gpu-west", "ml.g5.12xlarge", Change(0, 2),
                                                   Change(0, 8)),)


def test_an_accelerator_override_changes_the_clusters_gpus() -> None:
    """A cluster that says its g5.12xlarge have 8 accelerators: 16 x 8 = 128 GPUs of that type,
    and recsys 4 + speech 8 = 12 guaranteed instances count 96 instead of 48."""
    diff = diff_of(lambda f: replace(f, "clusters/gpu-west.yaml", "    instances: 16\n",
                                     "    instances: 16\n    accelerators_per_instance: 8\n"))
    (cluster,) = diff.clusters
    assert cluster.capacity_gpus == Change(320, 384)
    assert cluster.guaranteed_gpus == Change(272, 320)
    assert [(c.instance_type, c.instances, c.gpus) for c in cluster.capacity] == [
        ("ml.g5.12xlarge", Change(16, 16), Change(64, 128))]
    assert cluster.fields == ()  # the override is part of the capacity change above


def test_gpus_are_unknown_where_no_table_or_override_says() -> None:
    from tests.example_tree import example_tree

    cluster = example_tree().clusters["gpu-west"].model
    assert capacity_gpus(cluster) == 320
    # a HyperPod instance type the accelerators table does not know (yet)
    unknown = cluster.model_copy(update={"capacity": {"ml.g7.12xlarge": InstanceCapacity(instances=2)}})
    assert capacity_gpus(unknown) is None
    assert capacity_gpus(None) == 0


def test_sharing_compares_the_borrow_limit_in_effect_and_only_where_the_team_borrows() -> None:
    def edit(files: Files) -> None:
        replace(files, "projects/recsys.yaml", "    borrow_limit_percent: 25\n", "")  # -> HyperPod's 50
        replace(files, VISION, "    sharing: LendAndBorrow\n    borrow_limit_percent: 50\n", "    sharing: Lend\n")
        replace(files, "projects/nlp.yaml", "fair_share_weight: 40", "fair_share_weight: 45")

    by_name = {p.name: p for p in diff_of(edit).projects}
    assert by_name["recsys"].sharing == (SharingChange("gpu-west", Change("LendAndBorrow", "LendAndBorrow"),
                                                       Change(25, 50)),)
    assert by_name["vision"].sharing == (SharingChange("gpu-west", Change("LendAndBorrow", "Lend"),
                                                       Change(50, None)),)
    assert by_name["nlp"].fair_share_weight == Change(40, 45)
    assert all(not p.quotas for p in by_name.values())


def test_members_and_permissions_per_persona() -> None:
    def edit(files: Files) -> None:  # alice moves from Engineer to Viewer; one action more, one less
        replace(files, VISION, "    - arn:aws:iam::111122223333:user/alice\n", "")
        replace(files, VISION, "    - identitycenter:group/finance-analysts\n",
                "    - identitycenter:group/finance-analysts\n    - arn:aws:iam::111122223333:user/alice\n")
        replace(files, VISION, "    - s3:ListBucket\n", "    - s3:DeleteObject\n")

    (project,) = diff_of(edit).projects
    alice = "arn:aws:iam::111122223333:user/alice"
    assert project.members == (Entry(alice, False, "Engineer"), Entry(alice, True, "Viewer"))
    assert project.permissions == (Entry("s3:ListBucket", False, "Engineer"),
                                   Entry("s3:DeleteObject", True, "Engineer"))


def test_budget_and_other_fields() -> None:
    def edit(files: Files) -> None:
        replace(files, "projects/speech.yaml", "monthly_usd: 120000", "monthly_usd: 90000")
        replace(files, "projects/speech.yaml", "cost_centre: CC-3110", "cost_centre: CC-3111")
        replace(files, "projects/speech.yaml", "  Owner: speech-team\n", "  Owner: voice-team\n  Team: voice\n")
        replace(files, "projects/speech.yaml", "allowed_priority_classes: [inference, training]",
                "allowed_priority_classes: [inference, training, experimentation]")

    (project,) = diff_of(edit).projects
    assert project.budget == BudgetChange(Change(120000, 90000), Change((50, 80, 100), (50, 80, 100)))
    assert project.fields == (FieldChange("cost_centre", "CC-3110", "CC-3111"),
                              FieldChange("tags.Owner", "speech-team", "voice-team"),
                              FieldChange("tags.Team", None, "voice"))
    assert project.allowed_priority_classes == (Entry("experimentation", True),)


def test_a_new_project_is_diffed_from_nothing() -> None:
    diff = diff_of(lambda f: f.__setitem__("projects/audio.yaml", NEW_PROJECT))
    (project,) = diff.projects
    assert (project.name, project.status) == ("audio", "added")
    assert project.quotas == (QuotaChange("audio", "gpu-west", "ml.g5.12xlarge", Change(0, 4), Change(0, 16)),
                              QuotaChange("audio", "gpu-west", "ml.p5.48xlarge", Change(0, 2), Change(0, 16)))
    assert project.members == (Entry("arn:aws:iam::111122223333:role/audio-lead", True, "ProjectLead"),
                               Entry("identitycenter:group/audio-engineers", True, "Engineer"))
    assert project.fair_share_weight == Change(None, 0)
    assert project.budget == BudgetChange(Change(None, 50000), Change((), (80, 100)))
    assert diff.clusters[0].guaranteed_gpus == Change(272, 304)


def test_a_removed_project_takes_its_workload_classes_and_frees_its_gpus() -> None:
    def edit(files: Files) -> None:
        del files["projects/speech.yaml"], files["workloads/speech/serving.yaml"]

    diff = diff_of(edit)
    (project,) = diff.projects
    assert (project.name, project.status) == ("speech", "removed")
    assert [(w.name, w.status) for w in project.workload_classes] == [("serving", "removed")]
    assert project.quotas == (QuotaChange("speech", "gpu-west", "ml.g5.12xlarge", Change(8, 0), Change(32, 0)),)
    assert diff.clusters[0].guaranteed_gpus == Change(272, 240)


def test_a_workload_class_change_alone_names_its_project() -> None:
    diff = diff_of(lambda f: replace(f, "workloads/vision/large-training.yaml", "required_labels: [experiment, owner]",
                                     "required_labels: [experiment]"))
    (project,) = diff.projects
    assert (project.name, project.status, project.quotas, project.fields) == ("vision", "changed", (), ())
    (workload,) = project.workload_classes
    assert workload.fields == (FieldChange("required_labels", "[experiment, owner]", "[experiment]"),)
    assert diff.clusters == ()


def test_cluster_priorities_and_scheduler() -> None:
    def edit(files: Files) -> None:
        replace(files, "clusters/gpu-west.yaml", "      weight: 100", "      weight: 90")
        replace(files, "clusters/gpu-west.yaml", "    - name: experimentation\n      weight: 20\n",
                "    - name: experimentation\n      weight: 20\n    - name: best-effort\n      weight: 5\n")
        replace(files, "clusters/gpu-west.yaml", "  idle_resource_sharing: true", "  idle_resource_sharing: false")
        for team in ("recsys", "vision"):  # with idle sharing off nobody borrows there (CAP003)
            replace(files, f"projects/{team}.yaml", "    sharing: LendAndBorrow\n", "    sharing: Lend\n")
        replace(files, "projects/recsys.yaml", "    borrow_limit_percent: 25\n", "")
        replace(files, VISION, "    borrow_limit_percent: 50\n", "")

    diff = diff_of(edit)
    (cluster,) = diff.clusters
    assert cluster.priority_classes == (PriorityClassChange("inference", Change(100, 90)),
                                        PriorityClassChange("best-effort", Change(None, 5)))
    assert cluster.fields == (FieldChange("scheduler.idle_resource_sharing", "true", "false"),)
    assert cluster.guaranteed_gpus == Change(272, 272) and not cluster.capacity
    assert {p.name for p in diff.projects} == {"recsys", "vision"}


def test_org_boundary_personas_admins_and_ceilings() -> None:
    def edit(files: Files) -> None:
        replace(files, "org.yaml", "    - s3:PutBucketPolicy\n", "    - s3:PutBucketPolicy\n    - s3:DeleteBucket\n")
        replace(files, "org.yaml", "      deny: [s3:Put*, s3:Delete*]", "      deny: [s3:Put*]")
        replace(files, "org.yaml", "      - iam:PassRole              # HyperPod clusters run with an execution role\n",
                "")

    org = diff_of(edit).org
    assert org is not None
    assert org.permission_boundary == (Entry("s3:DeleteBucket", True, "deny"),)
    assert org.persona_actions == (Entry("iam:PassRole", False, "PlatformAdministrator"),)
    assert org.platform_admins == ()
    assert org.fields == (FieldChange("personas.Viewer.ceiling.deny", "[s3:Put*, s3:Delete*]", "[s3:Put*]"),)
