"""Required approvals from org.yaml's change_control, resolved against the base tree."""

from __future__ import annotations

import pytest

from hypergov.change_control import changed_paths, glob_pattern, required_approvals
from tests.example_tree import example_files, example_tree

ADMINS = ("arn:aws:iam::111122223333:role/PlatformAdministrator", "identitycenter:group/ml-platform-admins")
VISION_LEAD = "arn:aws:iam::111122223333:role/vision-lead"


@pytest.mark.parametrize(("glob", "path", "project"), [
    ("projects/<project>.yaml", "projects/vision.yaml", "vision"),
    ("workloads/<project>/*.yaml", "workloads/vision/notebook.yaml", "vision"),
    ("clusters/*.yaml", "clusters/gpu-west.yaml", None),
    ("**/*.yaml", "workloads/a/b.yaml", None),
    ("clusters/{gpu,trn}-*.yaml", "clusters/trn-east.yaml", None),
])
def test_globs_match(glob: str, path: str, project: str | None) -> None:
    match = glob_pattern(glob).match(path)
    assert match is not None and match.groupdict().get("project") == project


@pytest.mark.parametrize(("glob", "path"), [
    ("clusters/*.yaml", "clusters/a/b.yaml"),  # * stays in its segment
    ("projects/<project>.yaml", "projects/a/b.yaml"),
    ("org.yaml", "org.yml"),
    ("org.yaml", "xorg.yaml"),
    ("clusters/{gpu,trn}-*.yaml", "clusters/cpu-east.yaml"),
])
def test_globs_do_not_match(glob: str, path: str) -> None:
    assert glob_pattern(glob).match(path) is None


def _edit(files: dict[str, bytes], path: str, old: bytes, new: bytes) -> dict[str, bytes]:
    assert old in files[path]
    return {**files, path: files[path].replace(old, new)}


def test_each_changed_path_gets_the_owners_of_the_last_matching_rule() -> None:
    base = example_files()
    head = _edit(base, "projects/vision.yaml", b"monthly_usd: 250000", b"monthly_usd: 1")
    head = _edit(head, "clusters/gpu-west.yaml", b"gpu-west", b"gpu-west")  # unchanged bytes: not listed
    head = {k: v for k, v in head.items() if k != "workloads/vision/notebook.yaml"}
    approvals = {a.path: a for a in required_approvals(base, head, example_tree())}
    assert set(approvals) == {"projects/vision.yaml", "workloads/vision/notebook.yaml"}
    project = approvals["projects/vision.yaml"]
    assert project.change == "modified" and project.owners == (VISION_LEAD, *ADMINS)
    assert project.because == "change_control rule 2 (projects/<project>.yaml)"
    notebook = approvals["workloads/vision/notebook.yaml"]
    assert notebook.change == "deleted" and VISION_LEAD in notebook.owners and ADMINS[0] not in notebook.owners
    assert "identitycenter:group/vision-engineers" in notebook.owners  # project-members: every persona


def test_people_come_from_the_base_tree_not_from_the_change() -> None:
    base = example_files()
    head = _edit(base, "projects/vision.yaml", VISION_LEAD.encode(), b"arn:aws:iam::111122223333:user/mallory")
    (approval,) = required_approvals(base, head, example_tree())
    assert VISION_LEAD in approval.owners and "arn:aws:iam::111122223333:user/mallory" not in approval.owners


def test_a_new_project_and_an_unmatched_path_fall_back_to_the_platform_admins() -> None:
    base = example_files()
    head = {**base, "projects/newteam.yaml": base["projects/vision.yaml"], "README.md": b"notes\n"}
    approvals = {a.path: a for a in required_approvals(base, head, example_tree())}
    assert approvals["projects/newteam.yaml"].owners == ADMINS
    assert "project 'newteam' is new" in approvals["projects/newteam.yaml"].because
    assert approvals["README.md"].owners == ADMINS and "no change_control rule" in approvals["README.md"].because


def test_changed_paths_lists_adds_edits_and_deletes_once_in_order() -> None:
    assert changed_paths({"a": b"1", "b": b"2", "c": b"3"}, {"a": b"1", "b": b"x", "d": b"4"}) == [
        ("b", "modified"), ("c", "deleted"), ("d", "added")]
