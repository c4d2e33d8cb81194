"""Which stacks a change to the tree affects (pure).

A stack is affected when the fingerprint of its input view (`hypergov.stack_views`) differs
between two trees. The components are declared from that same view and nothing else, so a change
the components see cannot be missed, and a change only validation reads replans nothing.
Planning only affected stacks is what keeps a merge request's plan fast: terraform costs seconds
per stack, hashing a view costs microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import StackKind, fingerprint, stack_view
from stacks.spec import StackName, StackSpec, plan_stacks


@dataclass(frozen=True)
class AffectedStacks:
    changed: tuple[StackName, ...]  # in both trees, inputs differ: plan
    added: tuple[StackName, ...]  # only in head: plan (creates)
    removed: tuple[StackName, ...]  # only in base: plan a destroy
    unchanged: int
    touched_kinds: frozenset[StackKind] = frozenset()  # the kinds of the changed, added and removed stacks

    @property
    def to_plan(self) -> tuple[StackName, ...]:
        return self.changed + self.added


def stack_inputs(tree: GovernanceTree, spec: StackSpec) -> str:
    """A fingerprint of everything in `tree` that stack `spec` is declared from: its view."""
    return fingerprint(stack_view(tree, spec.kind, spec.subject))


def affected_stacks(base: GovernanceTree, head: GovernanceTree) -> AffectedStacks:
    before = {s.name: s for s in plan_stacks(base)}
    after = {s.name: s for s in plan_stacks(head)}
    order = [s.name for s in plan_stacks(head)]
    changed = tuple(n for n in order if n in before and stack_inputs(base, before[n]) != stack_inputs(head, after[n]))
    added = tuple(n for n in order if n not in before)
    removed = tuple(sorted(n for n in before if n not in after))
    kinds = frozenset({*(after[n].kind for n in (*changed, *added)), *(before[n].kind for n in removed)})
    return AffectedStacks(changed=changed, added=added, removed=removed,
                          unchanged=len(after) - len(changed) - len(added), touched_kinds=kinds)
