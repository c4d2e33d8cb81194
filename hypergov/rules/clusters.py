"""Clusters declared in the tree (`hyperpod.managed`): the instance types the org allows per
instance group, decommissioning only once no project holds quota there, and (base against head)
a managed cluster leaves the tree only after its decommission was applied.

The capacity a declared cluster has is derived from its groups (`Cluster._capacity_from_groups`),
so the CAP rules check the teams' guarantees against the groups: a scale-down below them is
CAP001 before anything is planned."""

from __future__ import annotations

from collections.abc import Iterator

from hypergov.model.cluster import Cluster
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.problems import Problem, SourcePos
from hypergov.rules.base import problem


def check_clusters(tree: GovernanceTree) -> Iterator[Problem]:
    yield from _group_instance_types(tree)
    yield from _decommission_without_quotas(tree)


def capacity_pos(cluster: Sourced[Cluster], instance_type: str, *, key: bool = False) -> SourcePos:
    """Where a cluster file states its capacity of `instance_type`: the capacity mapping, or the
    first instance group of that type when the capacity is derived."""
    groups = cluster.model.hyperpod.instance_groups
    if not groups:
        return cluster.pos("capacity", instance_type, key=key) if key else cluster.pos(
            "capacity", instance_type, "instances")
    index = next((i for i, g in enumerate(groups) if g.instance_type == instance_type), 0)
    return cluster.pos("hyperpod", "instance_groups", index, "instance_count")


def _group_instance_types(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    allowed = set(tree.org.model.allowed_instance_types)
    for _, cluster in sorted(tree.clusters.items()):
        for index, group in enumerate(cluster.model.hyperpod.instance_groups or []):
            if group.instance_type not in allowed:
                yield problem(cluster.pos("hyperpod", "instance_groups", index, "instance_type"), "CLU001",
                              f"instance group '{group.name}' runs {group.instance_type}, which is not in the "
                              "org's allowed_instance_types",
                              "choose an allowed type, or have a platform admin add it to org.yaml")


def _decommission_without_quotas(tree: GovernanceTree) -> Iterator[Problem]:
    for name, cluster in sorted(tree.clusters.items()):
        if not cluster.model.hyperpod.decommission:
            continue
        # Any quota is a live ComputeQuota on the cluster, even one of zero instances.
        holders = sorted(team for team, project in tree.projects.items() if name in project.model.quotas)
        if holders:
            yield problem(cluster.pos("hyperpod", "decommission"), "CLU002",
                          f"cluster '{name}' cannot be decommissioned while projects hold quota there: "
                          f"{', '.join(holders)}",
                          f"first remove the quotas on '{name}' from projects/{{{','.join(holders)}}}.yaml "
                          "and apply that change")


def removed_managed_clusters(base: GovernanceTree, head: GovernanceTree) -> Iterator[Problem]:
    """A managed cluster file deleted before its decommission was applied would leave the cluster,
    its quotas and its scheduler config running ungoverned: refused (CLU003). The base must carry
    `decommission: true`, i.e. the decommission was merged (and so applied) first."""
    for name, cluster in sorted(base.clusters.items()):
        ref = cluster.model.hyperpod
        if name in head.clusters or not ref.managed or ref.decommission:
            continue
        yield problem(SourcePos(f"clusters/{name}.yaml", 1, 1), "CLU003",
                      f"managed cluster '{name}' is removed from the tree without being decommissioned",
                      f"keep clusters/{name}.yaml, set 'hyperpod.decommission: true' and merge that first; "
                      "remove the file once the decommission was applied")
