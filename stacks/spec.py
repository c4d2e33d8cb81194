"""Stack planning: which stacks a tree needs and in which order, as pure data.

One stack for the organization, one per cluster, one per project. A cluster stack needs the org
stack (the boundary policy and budget topics exist before any role or quota refers to them); a
project stack needs the org stack and the stacks of the clusters it has quota on (HyperPod creates
the team namespace with the team's compute quota, and the project's RBAC lives in that namespace).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

from hypergov import naming
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import StackKind

StackName = NewType("StackName", str)


@dataclass(frozen=True)
class StackSpec:
    name: StackName
    kind: StackKind
    subject: str  # the org, cluster or team name
    depends_on: tuple[StackName, ...]


class UnknownStackError(LookupError):
    def __init__(self, name: str, known: list[StackSpec]) -> None:
        listed = ", ".join(s.name for s in known[:12]) + (" ..." if len(known) > 12 else "")
        super().__init__(f"no stack '{name}' in this tree; stacks are: {listed}")


def plan_stacks(tree: GovernanceTree) -> list[StackSpec]:
    """Every stack of the tree, dependencies first (org, clusters, projects; each sorted by name)."""
    if tree.org is None:
        return []
    org = StackName(naming.org_stack())
    specs = [StackSpec(org, "org", tree.org.model.name, ())]
    specs += [StackSpec(StackName(naming.cluster_stack(name)), "cluster", name, (org,))
              for name in sorted(tree.clusters)]
    for team, project in sorted(tree.projects.items()):
        clusters = tuple(StackName(naming.cluster_stack(c)) for c in sorted(project.model.quotas) if c in tree.clusters)
        specs.append(StackSpec(StackName(naming.project_stack(team)), "project", team, (org, *clusters)))
    return specs


def find_stack(tree: GovernanceTree, name: str) -> StackSpec:
    specs = plan_stacks(tree)
    for spec in specs:
        if spec.name == name:
            return spec
    raise UnknownStackError(name, specs)
