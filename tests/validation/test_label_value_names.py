"""Names the cluster cannot carry do not validate: a job names its team's queue and its priority
class in label values, so a team or priority class whose derived name does not fit a label value
is refused, at its file and line, with the label, the limit and the longest name that fits.

Expected bounds are typed from the documents, never read from hypergov:
- Kubernetes, https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set:
  "Valid label value: must be 63 characters or less (can be empty)".
- The queue a job names: `kueue.x-k8s.io/queue-name: hyperpod-ns-<team>-localqueue`
  (aws-samples/awsome-distributed-training, 1.architectures/7.sagemaker-hyperpod-eks/task-governance/
  1-imagenet-gpu-team-a.yaml: "kueue.x-k8s.io/queue-name: hyperpod-ns-team-a-localqueue").
- The priority class a job names on a task-governance cluster: `<priority class>-priority` (the same
  walkthrough makes priority class `training` with "--scheduler-config PriorityClasses=[...{Name=training,
  Weight=70}]" and its jobs carry "kueue.x-k8s.io/priority-class: training-priority"); on plain EKS
  hypergov names the WorkloadPriorityClass as the class itself.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from corpus_overlay import example_tree

from hypergov.problems import Problem
from hypergov.tree_files import TreeEntry
from hypergov.validate import validate_files

EXAMPLE = example_tree()
LABEL_VALUE_MAX = 63  # Kubernetes docs, above
TEAM_MAX = LABEL_VALUE_MAX - len("hyperpod-ns-") - len("-localqueue")  # 40
PRIORITY_MAX_WITH_TASK_GOVERNANCE = LABEL_VALUE_MAX - len("-priority")  # 54
PRIORITY_MAX_ON_PLAIN_EKS = LABEL_VALUE_MAX - len("-priority")  # hypergov names its own classes alike


def _with_team(team: str) -> dict[str, TreeEntry]:
    """The example tree plus project `team` (a copy of recsys: a quota on gpu-west)."""
    return {**EXAMPLE, f"projects/{team}.yaml": EXAMPLE["projects/recsys.yaml"]}


def _with_priority_class(cluster: str, name: str) -> dict[str, TreeEntry]:
    """The example tree with one more priority class on `cluster`, as the file's last entry."""
    entry = EXAMPLE[f"clusters/{cluster}.yaml"]
    assert isinstance(entry, bytes)
    doc: dict[str, Any] = yaml.safe_load(entry)
    doc["scheduler"]["priority_classes"].append({"name": name, "weight": 5})
    return {**EXAMPLE, f"clusters/{cluster}.yaml": yaml.safe_dump(doc, sort_keys=False).encode()}


def _problems_in(files: dict[str, TreeEntry], rel: str) -> list[Problem]:
    return [p for p in validate_files(files, display_root="config").problems if p.pos.file == f"config/{rel}"]


def test_a_team_whose_queue_name_is_63_characters_validates() -> None:
    team = "t" * TEAM_MAX
    assert len(f"hyperpod-ns-{team}-localqueue") == LABEL_VALUE_MAX
    report = validate_files(_with_team(team), display_root="config")
    assert report.ok and report.problems == [], report.problems


def test_a_team_one_character_longer_is_refused_naming_the_label_and_the_limit() -> None:
    team = "t" * (TEAM_MAX + 1)
    found = _problems_in(_with_team(team), f"projects/{team}.yaml")
    assert [(p.rule, p.pos.line, p.pos.column) for p in found] == [("IDN001", 1, 1)]
    (refused,) = found
    assert "kueue.x-k8s.io/queue-name" in refused.message
    assert f"'hyperpod-ns-{team}-localqueue' would be 64 characters" in refused.message
    assert "at most 63" in refused.message
    assert f"at most {TEAM_MAX} characters" in refused.hint and "shorten it by 1" in refused.hint


@pytest.mark.parametrize(("cluster", "longest", "label"), [
    pytest.param("gpu-west", PRIORITY_MAX_WITH_TASK_GOVERNANCE, "{}-priority", id="task-governance"),
    pytest.param("trn-east", PRIORITY_MAX_ON_PLAIN_EKS, "{}-priority", id="plain-eks"),
])
def test_a_priority_class_fits_the_priority_class_label_of_its_cluster(cluster: str, longest: int,
                                                                        label: str) -> None:
    rel = f"clusters/{cluster}.yaml"
    assert _problems_in(_with_priority_class(cluster, "p" * longest), rel) == []
    name = "p" * (longest + 1)
    found = _problems_in(_with_priority_class(cluster, name), rel)
    assert [p.rule for p in found] == ["IDN001"], found
    (refused,) = found
    written = _with_priority_class(cluster, name)[rel]
    assert isinstance(written, bytes)
    line = next(i for i, text in enumerate(written.decode().splitlines(), 1) if f"name: {name}" in text)
    assert refused.pos.line == line  # the priority class's own line
    assert "kueue.x-k8s.io/priority-class" in refused.message
    assert f"'{label.format(name)}' would be {len(label.format(name))} characters" in refused.message
    assert "at most 63" in refused.message
    assert f"at most {longest} characters" in refused.hint
