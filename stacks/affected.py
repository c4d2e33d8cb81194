"""Which stacks a change to the tree affects (pure).

Each stack reads a known part of the tree: the org stack the org, every project's name and
cost centre (its tag policy lists them) and every cluster's account, region and EKS cluster (the
Platform Administrator's access entries); a cluster stack the org, the cluster and the projects
with quota on it; a project stack the org, the project, its workload classes and its clusters.
A stack is affected when the fingerprint of what it reads differs between two trees. Planning
only affected stacks is what keeps a merge request's plan fast: terraform costs seconds per
stack, hashing costs microseconds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from hypergov.model.project import Project
from hypergov.model.tree import GovernanceTree
from stacks.spec import StackName, StackSpec, plan_stacks


@dataclass(frozen=True)
class AffectedStacks:
    changed: tuple[StackName, ...]  # in both trees, inputs differ: plan
    added: tuple[StackName, ...]  # only in head: plan (creates)
    removed: tuple[StackName, ...]  # only in base: plan a destroy
    unchanged: int

    @property
    def to_plan(self) -> tuple[StackName, ...]:
        return self.changed + self.added


# Parts of org.yaml that only validation and the org stack read: a change to the Platform
# Administrator, to a persona's ceiling or to the trusted accounts replans no cluster or project.
ORG_ONLY: dict[str, Any] = {"trusted_external_accounts": True, "personas": {
    "PlatformAdministrator": True, "ProjectLead": {"ceiling"}, "Engineer": {"ceiling"}, "Viewer": {"ceiling"}}}


def stack_inputs(tree: GovernanceTree, spec: StackSpec) -> str:
    """A fingerprint of everything in `tree` that stack `spec` is declared from."""
    assert tree.org is not None
    parts: list[str] = [tree.org.model.model_dump_json(exclude=None if spec.kind == "org" else ORG_ONLY)]
    if spec.kind == "org":
        parts += [f"{t}={p.model.cost_centre}" for t, p in sorted(tree.projects.items())]
        parts += [f"{c}@{m.model.account}/{m.model.region}/{m.model.eks.cluster_name}"
                  for c, m in sorted(tree.clusters.items())]
    elif spec.kind == "cluster":
        parts.append(tree.clusters[spec.subject].model.model_dump_json())
        parts += [_team_on_cluster(t, p.model, spec.subject) for t, p in sorted(tree.projects.items())
                  if spec.subject in p.model.quotas]
    else:
        project = tree.projects[spec.subject].model
        parts.append(project.model_dump_json())
        parts += [f"{c}:{tree.clusters[c].model.model_dump_json()}" for c in sorted(project.quotas)
                  if c in tree.clusters]
        parts += [f"{cls}:{wl.model.model_dump_json()}" for (team, cls), wl in sorted(tree.workloads.items())
                  if team == spec.subject]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _team_on_cluster(team: str, project: Project, cluster: str) -> str:
    """What a cluster stack declares from a team: its compute quota there, and its cost tags."""
    return "|".join([team, project.quotas[cluster].model_dump_json(), str(project.fair_share_weight),
                     str(project.preempt_own_lower_priority), str(project.cost_centre),
                     json.dumps(project.tags, sort_keys=True)])


def affected_stacks(base: GovernanceTree, head: GovernanceTree) -> AffectedStacks:
    before = {s.name: s for s in plan_stacks(base)}
    after = {s.name: s for s in plan_stacks(head)}
    order = [s.name for s in plan_stacks(head)]
    changed = tuple(n for n in order if n in before and stack_inputs(base, before[n]) != stack_inputs(head, after[n]))
    added = tuple(n for n in order if n not in before)
    removed = tuple(sorted(n for n in before if n not in after))
    return AffectedStacks(changed=changed, added=added, removed=removed,
                          unchanged=len(after) - len(changed) - len(added))
