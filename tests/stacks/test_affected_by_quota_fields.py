"""An edit of the newer quota fields replans the cluster stack that sends them (and the team's
project stack, which reads its whole project): an absolute borrow limit or a guarantee in
accelerators added to vision's gpu-west quota."""

from __future__ import annotations

import pytest

from stacks.affected import affected_stacks
from tests.example_tree import edited_example as _edit
from tests.example_tree import example_files
from tests.example_tree import valid_tree as _tree

LIMIT = b"    borrow_limit_percent: 50\n"


@pytest.mark.parametrize(("files", "changed"), [
    pytest.param(_edit("projects/vision.yaml", LIMIT, LIMIT + b"    absolute_borrow_limits:\n"
                                                           b"      ml.g5.12xlarge: {instances: 1}\n"),
                 ("cluster-gpu-west", "project-vision"), id="absolute-limit"),
    pytest.param(_edit("projects/vision.yaml", LIMIT, LIMIT + b"    resources:\n"
                                                           b"      ml.g5.12xlarge: {accelerators: 4}\n"),
                 ("cluster-gpu-west", "project-vision"), id="guarantee-in-accelerators"),
])
def test_quota_field_edits_replan_the_cluster(files: dict[str, bytes], changed: tuple[str, ...]) -> None:
    result = affected_stacks(_tree(example_files()), _tree(files))

    assert result.changed == changed
