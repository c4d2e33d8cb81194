"""Which stacks a change to the tree affects (pure).

A stack is affected when the fingerprint of its input view (`hypergov.stack_views`) differs
between two trees. The components are declared from that same view and nothing else, so a change
the components see cannot be missed, and a change only validation reads replans nothing.
Planning only affected stacks is what keeps a merge request's plan fast: terraform costs seconds
per stack, hashing a view costs microseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hypergov.model.project import Project
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.stack_views import StackKind, fingerprint, org_stack_project, stack_view, team_on_cluster
from stacks.spec import StackName, StackSpec, plan_stacks

K = TypeVar("K")


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


def _changed(before: Mapping[K, Sourced[Any]], after: Mapping[K, Sourced[Any]]) -> set[K]:
    """The names of objects added, removed or changed (model equality: microseconds each)."""
    return {k for k in before.keys() | after.keys()
            if k not in before or k not in after or before[k].model != after[k].model}


def _candidates(base: GovernanceTree, head: GovernanceTree, specs: Iterable[StackSpec]) -> list[StackSpec]:
    """The stacks whose view may differ: those built from an object, or the slice of one, that
    changed. It reads the changed objects only (with the views' own slices), never builds the views
    of the rest, which keeps a merge request's cost independent of org size; it never misses one
    (the property test checks)."""
    assert base.org is not None and head.org is not None
    if base.org.model != head.org.model:
        return list(specs)  # every view holds (a slice of) the org
    clusters = _changed(base.clusters, head.clusters)
    projects = _changed(base.projects, head.projects)
    teams = projects | {team for team, _ in _changed(base.workloads, head.workloads)}
    org_stack = bool(clusters) or any(_sliced(base, t, org_stack_project) != _sliced(head, t, org_stack_project)
                                      for t in projects)
    touched = set(clusters)
    for t in projects:
        quotas = {c for tree in (base, head) if t in tree.projects for c in tree.projects[t].model.quotas}
        touched |= {c for c in quotas if _sliced(base, t, _on(c)) != _sliced(head, t, _on(c))}
    return [s for s in specs if (s.kind == "org" and org_stack) or (s.kind == "cluster" and s.subject in touched)
            or (s.kind == "project" and (s.subject in teams or not clusters.isdisjoint(
                head.projects[s.subject].model.quotas)))]


def _sliced(tree: GovernanceTree, team: str, slice_of: Callable[[Project], Project | None]) -> Project | None:
    """What a view reads of `team` in `tree` (None: the team, or that part of it, is not there)."""
    return slice_of(tree.projects[team].model) if team in tree.projects else None


def _on(cluster: str) -> Callable[[Project], Project | None]:
    return lambda project: team_on_cluster(project, cluster) if cluster in project.quotas else None


def affected_stacks(base: GovernanceTree, head: GovernanceTree) -> AffectedStacks:
    before = {s.name: s for s in plan_stacks(base)}
    after = {s.name: s for s in plan_stacks(head)}
    order = list(after)  # dependency order: dicts keep plan_stacks' order
    maybe = {s.name for s in _candidates(base, head, (s for n, s in after.items() if n in before))}
    changed = tuple(n for n in order if n in maybe and stack_inputs(base, before[n]) != stack_inputs(head, after[n]))
    added = tuple(n for n in order if n not in before)
    removed = tuple(sorted(n for n in before if n not in after))
    kinds = frozenset({*(after[n].kind for n in (*changed, *added)), *(before[n].kind for n in removed)})
    return AffectedStacks(changed=changed, added=added, removed=removed,
                          unchanged=len(after) - len(changed) - len(added), touched_kinds=kinds)
