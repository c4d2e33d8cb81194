"""Only the stacks whose inputs changed are planned."""

from __future__ import annotations

import pytest

from stacks.affected import affected_stacks
from tests.example_tree import edited_example as _edit
from tests.example_tree import example_files
from tests.example_tree import valid_tree as _tree

BASE = example_files()


@pytest.mark.parametrize(("files", "changed"), [
    pytest.param(BASE, (), id="no-change"),
    pytest.param(_edit("projects/vision.yaml", b"monthly_usd: 250000", b"monthly_usd: 1"),
                 ("project-vision",), id="budget-touches-only-its-project"),
    pytest.param(_edit("projects/vision.yaml", b"ml.p5.48xlarge: 12", b"ml.p5.48xlarge: 10"),
                 ("cluster-gpu-west", "project-vision"), id="quota-touches-cluster-and-project"),
    pytest.param(_edit("workloads/vision/notebook.yaml", b"max_gpus_per_job: 8", b"max_gpus_per_job: 4"),
                 ("project-vision",), id="workload-class-touches-only-its-project"),
    pytest.param(_edit("projects/research.yaml", b"cost_centre: CC-5005", b"cost_centre: CC-5006"),
                 ("org", "cluster-trn-east", "project-research"), id="cost-centre-touches-tag-policy"),
    pytest.param(_edit("clusters/trn-east.yaml", b"weight: 20", b"weight: 30"),
                 ("cluster-trn-east", "project-nlp", "project-research"), id="cluster-touches-its-teams"),
    pytest.param(_edit("org.yaml", b"deny: [s3:Put*, s3:Delete*]", b"deny: [s3:Put*]"),
                 (), id="ceiling-is-validation-only"),
    pytest.param(_edit("org.yaml", b"      - fsx:*\n", b""), ("org",), id="platform-admin-policy-touches-only-org"),
    # Every project's view holds the personas' policies (recsys, with no Viewer, is planned and
    # shows nothing); neither the org component nor a cluster's reads a Viewer's policy.
    pytest.param(_edit("org.yaml", b"  Viewer:\n    actions:\n",
                       b"  Viewer:\n    actions:\n      - sagemaker:ListTags\n"),
                 ("project-nlp", "project-recsys", "project-research", "project-speech", "project-vision"),
                 id="persona-policy-touches-projects-not-clusters"),
    pytest.param(_edit("clusters/trn-east.yaml", b"cluster_name: trn-east-eks", b"cluster_name: trn-east-eks2"),
                 ("org", "cluster-trn-east", "project-nlp", "project-research"),
                 id="eks-name-touches-platform-admin-access"),
    # Who approves on the Git host is `hypergov codeowners`' only: no stack reads it.
    pytest.param(_edit("org.yaml", b"['@acme/ml-platform']", b"['@acme/platform-team']"),
                 (), id="platform-admins-git-host-touches-no-stack"),
    pytest.param(_edit("projects/vision.yaml", b"['@acme/vision-leads']", b"['@acme/vision-owners']"),
                 (), id="members-git-host-touches-no-stack"),
])
def test_changed_stacks(files: dict[str, bytes], changed: tuple[str, ...]) -> None:
    result = affected_stacks(_tree(BASE), _tree(files))
    assert result.changed == changed
    assert result.added == () and result.removed == ()


def test_added_and_removed_projects() -> None:
    files = {k: v for k, v in BASE.items() if k != "projects/recsys.yaml"}
    result = affected_stacks(_tree(BASE), _tree(files))
    assert result.removed == ("project-recsys",)
    assert "cluster-gpu-west" in result.changed and "org" in result.changed
    back = affected_stacks(_tree(files), _tree(BASE))
    assert back.added == ("project-recsys",) and back.to_plan[-1] == "project-recsys"
