"""From a validated governance tree to the simulator's inputs: one `ClusterCapacity` per cluster
(quotas in the tree are instances; the simulator counts GPUs) and synthetic workloads shaped by
the teams' quotas and workload classes. The only module of the package that knows the config
models, so the simulator core stays independent of them."""

from __future__ import annotations

from dataclasses import replace

from capacity.spec import ClusterCapacity, InstanceTypeName, PriorityClass, TeamName, TeamQuota
from capacity.synth import TraceShape, Workload, generate, median_for_load
from hypergov.model.cluster import Cluster
from hypergov.model.common import duration_seconds
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import effective_quota

DEFAULT_MAX_RUN = 7 * 86400


class AdapterError(Exception):
    """The tree lacks something the simulation needs (reported to the user as is)."""


def gpus_per_instance(cluster: Cluster, instance_type: str) -> int:
    per = cluster.accelerators(instance_type)
    if per is None:
        raise AdapterError(f"GPUs per instance of {instance_type} are unknown; set "
                           f"capacity.{instance_type}.accelerators_per_instance in the cluster file")
    return per


def cluster_capacity(tree: GovernanceTree, cluster_name: str) -> ClusterCapacity:
    """The simulator's view of one cluster of a validated tree."""
    sourced = tree.clusters.get(cluster_name)
    if sourced is None:
        raise AdapterError(f"cluster '{cluster_name}' is not in the tree; clusters: {', '.join(sorted(tree.clusters))}")
    cluster = sourced.model
    capacity = {InstanceTypeName(it): cap.instances * gpus_per_instance(cluster, it)
                for it, cap in sorted(cluster.capacity.items())}
    teams: list[TeamQuota] = []
    for team, project in sorted(tree.projects.items()):
        quota = project.model.quotas.get(cluster_name)
        if quota is None:
            continue
        effective = effective_quota(team, project.model, cluster_name, cluster)
        for it in effective.reachable_types:
            if it in cluster.capacity:
                gpus_per_instance(cluster, it)  # a clear error when the type's accelerators are unknown
        # Whole accelerators only: a guarantee or limit in vCPU, memory or MIG partitions holds none
        # (MIG partitions are not simulated yet, SEMANTICS.md "Not modelled").
        guaranteed = {InstanceTypeName(it): effective.gpus(it) for it in effective.instance_types
                      if it in cluster.capacity}
        absolute = {InstanceTypeName(it): effective.borrowable_gpus(it) for it in effective.absolute_borrow_limits
                    if it in cluster.capacity}
        teams.append(TeamQuota(name=TeamName(team), guaranteed_gpus=guaranteed, sharing=effective.sharing,
                               borrow_limit_percent=quota.effective_borrow_limit_percent(),
                               absolute_borrow_gpus=absolute, fair_share_weight=effective.fair_share_weight,
                               preempt_own_lower_priority=effective.preempt_team_tasks == "LowerPriority"))
    return ClusterCapacity(
        name=cluster_name, capacity_gpus=capacity, teams=tuple(teams),
        priority_classes=tuple(PriorityClass(pc.name, pc.weight) for pc in cluster.scheduler.priority_classes),
        fair_share=cluster.scheduler.fair_share, idle_resource_sharing=cluster.scheduler.idle_resource_sharing)


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
