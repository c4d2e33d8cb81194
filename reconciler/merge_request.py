"""A merge request's plan: only the stacks the change affects (plus destroys for stacks whose
source left the tree), what the change means for governance and the head's validation results
(above the resource tables), and, when quotas or capacity change, the capacity impact of the
change simulated on a job trace (the same trace under the base and the head config)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capacity.adapter import cluster_capacities
from capacity.diff import CapacityDiff, diff_reports
from capacity.runner import run
from capacity.trace import read_trace
from hypergov.governance_diff import diff_governance
from hypergov.governance_markdown import governance_markdown
from hypergov.model.tree import GovernanceTree
from hypergov.validate import ValidationReport
from hypergov.validation_markdown import validation_markdown
from stacks.affected import AffectedStacks, affected_stacks

TERRAFORM_MAX_STACKS = 10  # a merge request affecting more: terraform's changes from the live scan
SAMPLE_TRACE = Path(__file__).resolve().parent.parent / "capacity" / "samples" / "example-trace.jsonl"


@dataclass(frozen=True)
class MergeRequestScope:
    affected: AffectedStacks
    capacity_changed: bool


def scope(base: GovernanceTree, head: GovernanceTree) -> MergeRequestScope:
    affected = affected_stacks(base, head)
    return MergeRequestScope(affected=affected, capacity_changed="cluster" in affected.touched_kinds)


def capacity_impact(base: GovernanceTree, head: GovernanceTree, *, trace: Path, base_ref: str,
                    head_ref: str) -> CapacityDiff:
    jobs = read_trace(trace)
    return diff_reports(run(cluster_capacities(base), jobs), run(cluster_capacities(head), jobs),
                        base_ref=base_ref, head_ref=head_ref, trace=trace.name, jobs=len(jobs))


def leading_sections(base: GovernanceTree, head: ValidationReport) -> list[str]:
    """The comment's sections above the resource tables: what the change means, then the
    changed tree's warnings and the rules that ran."""
    return [governance_markdown(diff_governance(base, head.tree)), validation_markdown(head.problems)]
