"""From a validated governance tree to the simulator's inputs: one `ClusterCapacity` per cluster
(quotas in the tree are instances; the simulator counts GPUs) and synthetic workloads shaped by
the teams' quotas and workload classes. The only module of the package that knows the config
models, so the simulator core stays independent of them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from capacity.spec import (
    ClusterCapacity,
    InstanceTypeName,
    PriorityClass,
    TeamName,
    TeamQuota,
    partition_resource,
)
from capacity.synth import TraceShape, Workload, generate, median_for_load
from hypergov.model import partitions
from hypergov.model.cluster import Cluster, UnknownAccelerators
from hypergov.model.common import duration_seconds
from hypergov.model.project import QuotaAmount
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import EffectiveQuota, effective_quota

DEFAULT_MAX_RUN = 7 * 86400


class AdapterError(Exception):
    """The tree lacks something the simulation needs (reported to the user as is)."""


def gpus_per_instance(cluster: Cluster, instance_type: str) -> int:
    try:
        return cluster.known_accelerators(instance_type)
    except UnknownAccelerators as error:
        raise AdapterError(str(error)) from error


def cluster_capacity(tree: GovernanceTree, cluster_name: str) -> ClusterCapacity:
    """The simulator's view of one cluster of a validated tree."""
    sourced = tree.clusters.get(cluster_name)
    if sourced is None:
        raise AdapterError(f"cluster '{cluster_name}' is not in the tree; clusters: {', '.join(sorted(tree.clusters))}")
    cluster = sourced.model
    capacity = {InstanceTypeName(it): cap.instances * gpus_per_instance(cluster, it)
                for it, cap in sorted(cluster.capacity.items())}
    quotas = {team: effective_quota(team, project.model, cluster_name, cluster)
              for team, project in sorted(tree.projects.items()) if cluster_name in project.model.quotas}
    slices_per_instance = _split_partitioned(cluster, quotas.values(), capacity, cluster_name=cluster_name)
    teams: list[TeamQuota] = []
    for team, effective in quotas.items():
        quota = tree.projects[team].model.quotas[cluster_name]
        for it in effective.reachable_types:
            if it in cluster.capacity:
                gpus_per_instance(cluster, it)  # a clear error when the type's accelerators are unknown
        # Whole accelerators only: a guarantee or limit in vCPU, memory or MIG partitions holds none
        # (MIG partitions are not simulated yet, SEMANTICS.md "Not modelled").
        guaranteed = {InstanceTypeName(it): effective.gpus(it) for it in effective.instance_types
                      if it in cluster.capacity}
        guaranteed.update(_slices(effective.resources, cluster))
        absolute = {InstanceTypeName(it): effective.borrowable_gpus(it) for it in effective.absolute_borrow_limits
                    if it in cluster.capacity}
        absolute.update(_slices(effective.absolute_borrow_limits, cluster))
        teams.append(TeamQuota(name=TeamName(team), guaranteed_gpus=guaranteed, sharing=effective.sharing,
                               borrow_limit_percent=quota.effective_borrow_limit_percent(),
                               absolute_borrow_gpus=absolute, fair_share_weight=effective.fair_share_weight,
                               preempt_own_lower_priority=effective.preempt_team_tasks == "LowerPriority"))
    return ClusterCapacity(
        name=cluster_name, capacity_gpus=capacity, teams=tuple(teams),
        priority_classes=tuple(PriorityClass(pc.name, pc.weight) for pc in cluster.scheduler.priority_classes),
        fair_share=cluster.scheduler.fair_share, idle_resource_sharing=cluster.scheduler.idle_resource_sharing,
        slices_per_instance=slices_per_instance)


def _slices(amounts: Mapping[str, QuotaAmount], cluster: Cluster) -> dict[InstanceTypeName, int]:
    """The MIG partitions among `amounts`, as slices of their partition resource."""
    return {partition_resource(it, a.partition.profile): a.partition.count for it, a in sorted(amounts.items())
            if a.partition is not None and it in cluster.capacity}


def _split_partitioned(cluster: Cluster, quotas: Iterable[EffectiveQuota], capacity: dict[InstanceTypeName, int],
                       *, cluster_name: str) -> dict[InstanceTypeName, int]:
    """Split the instances of every type whose quotas name a MIG profile into that profile, and
    return each partition resource's slices per instance (`capacity` is updated in place). The tree
    does not say how many instances are partitioned: every instance that the whole-GPU guarantees
    of the type do not need is taken as split (SEMANTICS.md R7)."""
    named: dict[str, set[str]] = {}
    whole: dict[str, int] = {}
    for effective in quotas:
        for it in effective.instance_types:
            whole[it] = whole.get(it, 0) + effective.gpus(it)
        for it, amount in [*effective.resources.items(), *effective.absolute_borrow_limits.items()]:
            if amount.partition is not None and it in cluster.capacity:
                named.setdefault(it, set()).add(amount.partition.profile)
    found: dict[InstanceTypeName, int] = {}
    for it, profiles in sorted(named.items()):
        if len(profiles) > 1:
            raise AdapterError(f"the quotas on cluster {cluster_name} give {it} partitions of several MIG profiles "
                               f"({', '.join(sorted(profiles))}); the simulator splits an instance type into one "
                               "profile: give the partitions of one profile per instance type")
        (name,) = profiles
        gpus = gpus_per_instance(cluster, it)
        profile = partitions.profile(it, name)
        if profile is None:
            raise AdapterError(f"{it} offers no MIG profile {name} (hypergov/model/partitions.py)")
        kept_whole = -(-whole.get(it, 0) // gpus)  # instances the whole-GPU guarantees need
        split = max(0, cluster.capacity[it].instances - kept_whole)
        resource = partition_resource(it, name)
        found[resource] = gpus * profile.per_gpu
        capacity[InstanceTypeName(it)] = (cluster.capacity[it].instances - split) * gpus
        capacity[resource] = split * found[resource]
    return found


def cluster_capacities(tree: GovernanceTree) -> list[ClusterCapacity]:
    return [cluster_capacity(tree, name) for name in sorted(tree.clusters)]


def workloads_for_tree(tree: GovernanceTree) -> list[Workload]:
    """One workload per team and cluster it has a guarantee on: instance types in proportion to
    the guarantee, gangs up to what the team may hold (and its workload classes allow), its
    workload classes' priorities (else the priorities it may use), arrivals in proportion to its
    guaranteed GPUs. Borrowing teams are the bursty ones: that is why they borrow."""
    workloads: list[Workload] = []
    for cluster_name in sorted(tree.clusters):
        capacity = cluster_capacity(tree, cluster_name)
        cluster = tree.clusters[cluster_name].model
        for quota in capacity.teams:
            project = tree.projects[quota.name].model
            classes = [wl.model for (team, _), wl in sorted(tree.workloads.items()) if team == quota.name]
            types: list[tuple[InstanceTypeName, float, int]] = []
            for itype, gpus in sorted(quota.guaranteed_gpus.items()):
                reachable = min(gpus + quota.borrow_limit_gpus(itype), capacity.capacity_gpus[itype])
                fitting = [c.max_gpus_per_job for c in classes if not c.instance_types or itype in c.instance_types]
                largest = min(reachable, max(fitting)) if fitting else reachable
                largest = min(largest, capacity.slices_per_instance.get(itype, largest))  # one pod per job
                if gpus > 0 and largest > 0:
                    types.append((itype, float(gpus), largest))
            if not types:
                continue
            cluster_classes = cluster.priority_class_names()
            names = [c.priority_class for c in classes] or list(project.allowed_priority_classes)
            priorities = sorted({n for n in names if n in cluster_classes})
            if not priorities:
                continue
            max_run = max((duration_seconds(c.max_run_time) for c in classes), default=DEFAULT_MAX_RUN)
            workloads.append(Workload(
                team=quota.name, cluster=cluster_name, instance_types=tuple(types),
                priorities=tuple((p, 1.0) for p in priorities), share=float(sum(quota.guaranteed_gpus.values())),
                median_duration=3600, max_duration=max_run,
                burstiness=1.0 if quota.sharing == "LendAndBorrow" else 0.3))
    return workloads


def generate_for_tree(tree: GovernanceTree, *, shape: TraceShape, seed: int, load: float = 0.8) -> list:  # type: ignore[type-arg]
    """A synthetic trace for every cluster of the tree, sized so each cluster is offered about
    `load` x its GPU capacity over the trace."""
    workloads = workloads_for_tree(tree)
    total_share = sum(w.share for w in workloads)
    calibrated: list[Workload] = []
    for cluster_name in sorted(tree.clusters):
        mine = [w for w in workloads if w.cluster == cluster_name]
        if not mine:
            continue
        capacity = sum(cluster_capacity(tree, cluster_name).capacity_gpus.values())
        median = median_for_load(workloads=mine, total_share=total_share, shape=shape, capacity_gpus=capacity,
                                 load=load)
        calibrated.extend(replace(w, median_duration=min(median, w.max_duration)) for w in mine)
    return generate(calibrated, shape, seed=seed)
