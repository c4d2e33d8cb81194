"""Representative changes to the example tree (config/), each made on a copy of its files, for
the golden files of the merge-request comment's sections above the resource tables (the
governance summary and the validation results, or the invalid-tree comment). Shared by the
golden test (tests/core/test_merge_request_golden.py) and the regenerator
(`python -m tests.core.regen_governance_golden`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypergov.validate import validate_files
from hypergov.validation_markdown import invalid_tree_markdown
from reconciler.merge_request import leading_sections
from tests.example_tree import example_files

GOLDEN = Path(__file__).resolve().parent / "golden" / "merge_request"
Files = dict[str, bytes]


def replace(files: Files, path: str, old: str, new: str) -> None:
    """One exact edit; a case whose text is not in the file fails instead of testing nothing."""
    text = files[path].decode()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path}"
    files[path] = text.replace(old, new).encode()


def _quota_increase(files: Files) -> None:
    replace(files, "projects/vision.yaml", "ml.p5.48xlarge: 12", "ml.p5.48xlarge: 16")


def _members(files: Files) -> None:
    replace(files, "projects/vision.yaml", "    - arn:aws:iam::111122223333:user/alice\n",
            "    - arn:aws:iam::111122223333:user/alice\n    - arn:aws:iam::111122223333:user/dan\n")
    replace(files, "projects/vision.yaml", "  Viewer:\n    - identitycenter:group/finance-analysts\n", "  Viewer: []\n")


def _permission(files: Files) -> None:
    replace(files, "projects/vision.yaml", "    - s3:ListBucket\n", "    - s3:ListBucket\n    - s3:DeleteObject\n")


def _budget(files: Files) -> None:
    replace(files, "projects/speech.yaml", "monthly_usd: 120000\n  alert_at_percent: [50, 80, 100]",
            "monthly_usd: 90000\n  alert_at_percent: [80, 100]")


def _workload_class(files: Files) -> None:
    replace(files, "workloads/vision/large-training.yaml", "max_gpus_per_job: 96\nmax_run_time: 7d",
            "max_gpus_per_job: 128\nmax_run_time: 10d")
    files["workloads/recsys/ranking.yaml"] = (
        b"description: Nightly ranking-model retraining\npriority_class: training\nmax_gpus_per_job: 16\n"
        b"max_run_time: 12h\nrequired_labels: [experiment]\ninstance_types: [ml.g5.12xlarge]\n")


def _sharing(files: Files) -> None:
    replace(files, "projects/recsys.yaml", "borrow_limit_percent: 25", "borrow_limit_percent: 100")
    replace(files, "projects/vision.yaml", "    sharing: LendAndBorrow\n    borrow_limit_percent: 50\n",
            "    sharing: Lend\n")
    replace(files, "projects/nlp.yaml", "fair_share_weight: 40", "fair_share_weight: 50")


NEW_PROJECT = b"""description: Audio generation research
members:
  ProjectLead:
    - arn:aws:iam::111122223333:role/audio-lead
  Engineer:
    - identitycenter:group/audio-engineers
cost_centre: CC-6001
budget:
  monthly_usd: 50000
tags:
  Owner: audio-team
  Environment: production
quotas:
  gpu-west:
    instances:
      ml.p5.48xlarge: 2
      ml.g5.12xlarge: 4
    sharing: Lend
allowed_priority_classes: [training]
"""


def _new_project(files: Files) -> None:
    files["projects/audio.yaml"] = NEW_PROJECT


def _removed_project(files: Files) -> None:
    del files["projects/speech.yaml"], files["workloads/speech/serving.yaml"]


def _cluster(files: Files) -> None:
    replace(files, "clusters/gpu-west.yaml", "  ml.p5.48xlarge:\n    instances: 32",
            "  ml.p5.48xlarge:\n    instances: 40")
    replace(files, "clusters/gpu-west.yaml", "    - name: training\n      weight: 60\n",
            "    - name: urgent\n      weight: 90\n    - name: training\n      weight: 70\n")
    replace(files, "clusters/gpu-west.yaml", "  fair_share: true", "  fair_share: false")


def _org(files: Files) -> None:
    replace(files, "org.yaml", "    - sts:GetCallerIdentity\n", "    - sts:GetCallerIdentity\n    - logs:StartQuery\n")
    replace(files, "org.yaml", "      - eks:DescribeCluster\n      - cloudwatch:GetMetricData\n    ceiling:",
            "      - eks:DescribeCluster\n      - cloudwatch:GetMetricData\n      - logs:GetLogEvents\n    ceiling:")
    replace(files, "org.yaml", "  - identitycenter:group/ml-platform-admins\n",
            "  - identitycenter:group/ml-platform-admins\n  - identitycenter:user/erin\n")


def _lending_stopped(files: Files) -> None:
    replace(files, "projects/research.yaml", "    sharing: Lend\n", "    sharing: DontLend\n")


def _comment_only(files: Files) -> None:
    replace(files, "projects/vision.yaml", "# Project layer: owned by the project lead.",
            "# Project layer: owned by the vision project lead.")


def _over_capacity(files: Files) -> None:
    replace(files, "projects/vision.yaml", "ml.p5.48xlarge: 12", "ml.p5.48xlarge: 20")


@dataclass(frozen=True)
class Case:
    name: str
    edit: Callable[[Files], None]

    @property
    def golden(self) -> Path:
        return GOLDEN / f"{self.name}.md"


CASES = (
    Case("quota-increase", _quota_increase),
    Case("members-added-and-removed", _members),
    Case("permission-added", _permission),
    Case("budget-change", _budget),
    Case("workload-class-change", _workload_class),
    Case("sharing-and-borrow-limit", _sharing),
    Case("new-project", _new_project),
    Case("removed-project", _removed_project),
    Case("cluster-capacity-and-priorities", _cluster),
    Case("org-boundary-and-personas", _org),
    Case("lending-stopped-warning", _lending_stopped),
    Case("comment-only", _comment_only),
    Case("invalid-over-capacity", _over_capacity),
)


def trees(case: Case) -> tuple[Files, Files]:
    base = example_files()
    head = dict(base)
    case.edit(head)
    return base, head


def comment_sections(case: Case) -> str:
    """What `plan --base` puts above the resource tables for this change, or, for an invalid
    head, the whole comment it writes."""
    base_files, head_files = trees(case)
    base, head = validate_files(base_files), validate_files(head_files)
    assert base.ok, base.problems
    if not head.ok:
        return invalid_tree_markdown(head.problems)
    return "\n\n".join(leading_sections(base.tree, head)) + "\n"
