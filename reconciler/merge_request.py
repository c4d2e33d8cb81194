"""A merge request's plan: only the stacks the change affects (plus destroys for stacks whose
source left the tree), and, when quotas or capacity change, the capacity impact of the change
simulated on a job trace (the same trace under the base and the head config)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capacity.adapter import cluster_capacities
from capacity.diff import CapacityDiff, diff_reports
from capacity.runner import run
from capacity.trace import read_trace
from hypergov.model.tree import GovernanceTree
from stacks.affected import AffectedStacks, affected_stacks

SAMPLE_TRACE = Path(__file__).resolve().parent.parent / "capacity" / "samples" / "example-trace.jsonl"


@dataclass(frozen=True)
class MergeRequestScope:
    affected: AffectedStacks
    capacity_changed: bool


def scope(base: GovernanceTree, head: GovernanceTree) -> MergeRequestScope:
    affected = affected_stacks(base, head)
    touched = (*affected.changed, *affected.added, *affected.removed)
    return MergeRequestScope(affected=affected, capacity_changed=any(s.startswith("cluster-") for s in touched))


def capacity_impact(base: GovernanceTree, head: GovernanceTree, *, trace: Path, base_ref: str,
                    head_ref: str) -> CapacityDiff:
    jobs = read_trace(trace)
    return diff_reports(run(cluster_capacities(base), jobs), run(cluster_capacities(head), jobs),
                        base_ref=base_ref, head_ref=head_ref, trace=trace.name, jobs=len(jobs))
