"""The merge-request governance diff shows the newer quota fields: an absolute borrow limit or a
finer-unit guarantee edited alone is a change of the project (field paths as the tree spells
them), not "nothing HyperPod applies changed"."""

from __future__ import annotations

from hypergov.governance_diff import FieldChange
from tests.core.merge_request_cases import Files, replace
from tests.core.test_governance_diff import VISION, diff_of

LIMIT = "    borrow_limit_percent: 50\n"


def with_limit(files: Files) -> None:
    replace(files, VISION, LIMIT, LIMIT + "    absolute_borrow_limits:\n      ml.p5.48xlarge: {accelerators: 16}\n")


def test_an_absolute_limit_added_is_a_field_change() -> None:
    (project,) = diff_of(with_limit).projects

    assert project.name == "vision"
    assert project.fields == (
        FieldChange("quotas.gpu-west.absolute_borrow_limits.ml.p5.48xlarge.accelerators", None, "16"),)
    assert project.quotas == () and project.sharing == ()


def test_an_absolute_limit_changed_shows_both_values() -> None:
    def edit(files: Files) -> None:
        replace(files, VISION, "{accelerators: 16}", "{accelerators: 24}")

    (project,) = diff_of(edit, base_edit=with_limit).projects

    assert project.fields == (
        FieldChange("quotas.gpu-west.absolute_borrow_limits.ml.p5.48xlarge.accelerators", "16", "24"),)


def test_a_guarantee_in_accelerators_changed_shows_both_values() -> None:
    def accelerators(count: int) -> str:
        return f"    resources:\n      ml.g5.12xlarge: {{accelerators: {count}}}\n"

    def base(files: Files) -> None:
        replace(files, VISION, "    sharing: LendAndBorrow\n", accelerators(4) + "    sharing: LendAndBorrow\n")

    def edit(files: Files) -> None:
        replace(files, VISION, accelerators(4), accelerators(6))

    (project,) = diff_of(edit, base_edit=base).projects

    assert project.fields == (FieldChange("quotas.gpu-west.resources.ml.g5.12xlarge.accelerators", "4", "6"),)


def test_guarantees_in_accelerators_count_in_the_clusters_guaranteed_gpus() -> None:
    # the example tree guarantees 272 GPUs on gpu-west (tests/core/test_governance_diff.py); vision's
    # 8 g5.12xlarge accelerators come on top
    def edit(files: Files) -> None:
        replace(files, VISION, "    sharing: LendAndBorrow\n",
                "    resources:\n      ml.g5.12xlarge: {accelerators: 8}\n    sharing: LendAndBorrow\n")

    (cluster,) = diff_of(edit).clusters

    assert cluster.guaranteed_gpus is not None
    assert (cluster.guaranteed_gpus.before, cluster.guaranteed_gpus.after) == (272, 280)
