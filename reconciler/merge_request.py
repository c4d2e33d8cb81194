"""A merge request's plan: only the stacks the change affects (plus destroys for stacks whose
source left the tree), what the change means for governance (with the people behind the
Identity Center members it adds or removes, read from the identity store) and the head's
validation results (above the resource tables), and, when quotas or capacity change, the capacity
impact of the change simulated on a job trace (the same trace under the base and the head config)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from capacity.adapter import cluster_capacities
from capacity.diff import CapacityDiff, diff_reports
from capacity.runner import run
from capacity.trace import read_trace
from engines.identity_store import member_people
from engines.settings import AwsSettings
from hypergov.governance_diff import diff_governance
from hypergov.governance_markdown import governance_markdown
from hypergov.identity_people import People
from hypergov.model.org import Organization
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


# The Identity Center principals a change names -> what the identity store says of each.
PeopleOf = Callable[[Sequence[str]], People]


def leading_sections(base: GovernanceTree, head: ValidationReport, *, people_of: PeopleOf | None = None) -> list[str]:
    """The comment's sections above the resource tables: what the change means, then the
    changed tree's warnings and the rules that ran. `people_of` is asked once, for exactly the
    Identity Center members the change adds or removes (none: not asked)."""
    diff = diff_governance(base, head.tree)
    named = diff.identity_center_members
    people = people_of(named) if people_of is not None and named else None
    return [governance_markdown(diff, people), validation_markdown(head.problems)]


def identity_store_people(aws: AwsSettings, base: GovernanceTree, head: GovernanceTree) -> PeopleOf:
    """The identity store org.yaml's `identity_center` names (the head's; the base's when the
    change drops it), read with `aws`'s endpoint and credentials; without them, or when it cannot
    be read, each member is "not checked" with the reason, and the plan goes on."""
    def org(tree: GovernanceTree) -> Organization | None:
        return tree.org.model if tree.org is not None else None

    head_org, base_org = org(head), org(base)
    store_org = head_org if head_org is not None and head_org.identity_center is not None else base_org
    return lambda principals: member_people(aws, store_org, principals)
