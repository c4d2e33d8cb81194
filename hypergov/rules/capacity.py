"""Capacity: guarantees fit the hardware, lending choices are coherent, and every workload
class can actually be admitted somewhere."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction

from hypergov.model.cluster import Cluster
from hypergov.model.project import ClusterQuota, Project, QuotaAmount
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.problems import Problem, Severity, SourcePos
from hypergov.rules.base import problem
from hypergov.rules.clusters import capacity_pos
from hypergov.rules.quota_units import describe, instance_share


def check_capacity(tree: GovernanceTree) -> Iterator[Problem]:
    yield from _guarantees_fit(tree)
    yield from _sharing_coherent(tree)
    yield from _allowed_instance_types(tree)
    yield from _workload_admissible(tree)


def _guarantees_fit(tree: GovernanceTree) -> Iterator[Problem]:
    """Per cluster and instance type, the teams' guarantees (each as the instances' worth it
    takes, in whatever unit it is given) fit the instances the cluster has."""
    demand: dict[tuple[str, str], list[tuple[str, QuotaAmount]]] = defaultdict(list)
    for team, project in sorted(tree.projects.items()):
        for cluster, quota in project.model.quotas.items():
            for itype, amount in quota.guarantees().items():
                demand[(cluster, itype)].append((team, amount))
    for (cluster_name, itype), teams in sorted(demand.items()):
        found = tree.clusters.get(cluster_name)
        if found is None or itype not in found.model.capacity:
            continue  # reported by the reference rules
        capacity = found.model.capacity[itype].instances
        shares = [(t, a, instance_share(found.model, instance_type=itype, amount=a) or Fraction(0)) for t, a in teams]
        total = sum((s for _, _, s in shares), Fraction(0))
        if total <= capacity:
            continue
        where = ("its instance groups have" if found.model.declares_groups else "the cluster has")
        ordered = sorted(shares, key=lambda x: (-x[2], x[0]))
        if all(a.instances is not None for _, a, _ in shares):
            parts = ", ".join(f"{t} {a.instances}" for t, a, _ in ordered)
            yield problem(capacity_pos(found, itype), "CAP001",
                          f"{itype}: teams are guaranteed {total} instances ({parts}) but {where} {capacity}",
                          f"lower the teams' quotas by {total - capacity} in projects/*.yaml "
                          "or raise this capacity when hardware is added")
            continue
        parts = ", ".join(f"{t} {describe(a)}" + ("" if a.instances is not None else f" = {float(s):g}")
                          for t, a, s in ordered)
        yield problem(capacity_pos(found, itype), "CAP001",
                      f"{itype}: teams are guaranteed {float(total):g} instances' worth ({parts}) but {where} "
                      f"{capacity}",
                      f"lower the teams' quotas by {float(total - capacity):g} instances' worth in projects/*.yaml "
                      "or raise this capacity when hardware is added")


def _sharing_coherent(tree: GovernanceTree) -> Iterator[Problem]:
    lenders: dict[str, set[str]] = defaultdict(set)
    for team, project in tree.projects.items():
        for cluster, quota in project.model.quotas.items():
            if quota.sharing in ("Lend", "LendAndBorrow") and any(quota.instances.values()):
                lenders[cluster].add(team)
    for team, project in sorted(tree.projects.items()):
        for cluster_name, quota in sorted(project.model.quotas.items()):
            base = ("quotas", cluster_name)
            for field in ("borrow_limit_percent", "absolute_borrow_limits"):
                if getattr(quota, field) and quota.sharing != "LendAndBorrow":
                    yield problem(project.pos(*base, field, key=True), "CAP002",
                                  f"{field} is set but sharing is '{quota.sharing}', which never borrows",
                                  f"set 'sharing: LendAndBorrow' or remove {field}")
            if quota.sharing != "LendAndBorrow":
                continue
            target = tree.clusters.get(cluster_name)
            if target is not None and not target.model.scheduler.idle_resource_sharing:
                yield problem(_sharing_pos(project, base), "CAP003",
                              f"team borrows on '{cluster_name}', whose idle_resource_sharing is off: it can borrow "
                              "only quota other teams lend, never capacity nobody is guaranteed",
                              "nothing to fix if that is intended; enable idle_resource_sharing on the cluster to "
                              "let teams borrow its unallocated capacity too", Severity.WARNING)
            if target is not None and not (lenders[cluster_name] - {team}):
                yield problem(_sharing_pos(project, base), "CAP004",
                              f"team borrows on '{cluster_name}' but no other team there lends its quota",
                              "borrowing will never succeed; use 'sharing: Lend' or agree on lending with another team",
                              Severity.WARNING)


def _sharing_pos(project: Sourced[Project], base: tuple[str, str]) -> SourcePos:
    return project.pos(*base, "sharing")


def _allowed_instance_types(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    allowed = set(tree.org.model.allowed_instance_types)
    for _, cluster in sorted(tree.clusters.items()):
        if cluster.model.declares_groups:
            continue  # its groups' types are checked one by one (CLU001)
        for itype in cluster.model.capacity:
            if itype not in allowed:
                yield problem(cluster.pos("capacity", itype, key=True), "CAP005",
                              f"instance type {itype} is not in the org's allowed_instance_types",
                              "remove it here, or have a platform admin add it to org.yaml")


def max_job_gpus(cluster: Cluster, quota: ClusterQuota, instance_types: set[str]) -> int:
    """The most GPUs one gang job of a team can hold on a cluster: its guarantee plus what it
    may borrow (an absolute limit on the type, else the percentage), never more than the cluster
    has. MIG partitions, vCPU and memory are no whole GPUs."""
    borrows = quota.sharing == "LendAndBorrow"
    guarantees = quota.guarantees()
    limits = quota.absolute_borrow_limits if borrows else {}
    pct = quota.effective_borrow_limit_percent() if borrows else 0
    best = 0
    for itype in sorted({*guarantees, *limits}):
        cap = cluster.capacity.get(itype)
        if cap is None or (instance_types and itype not in instance_types):
            continue
        per = cluster.accelerators(itype) or 0
        own, limit = guarantees.get(itype), limits.get(itype)
        if own is not None and own.instances is not None and limit is None:
            # whole instances borrow whole instances
            reachable = min(own.instances + own.instances * pct // 100, cap.instances) * per
        else:
            mine = _whole_gpus(own, per)
            extra = mine * pct // 100 if limit is None else _whole_gpus(limit, per)
            reachable = min(mine + extra, cap.instances * per)
        best = max(best, reachable)
    return best


def _whole_gpus(amount: QuotaAmount | None, per_instance: int) -> int:
    if amount is None:
        return 0
    if amount.instances is not None:
        return amount.instances * per_instance
    return amount.accelerators or 0


def _workload_admissible(tree: GovernanceTree) -> Iterator[Problem]:
    for (team, cls), wl in sorted(tree.workloads.items()):
        project = tree.projects.get(team)
        if project is None or not project.model.quotas:
            continue
        reachable = 0
        for cluster_name, quota in project.model.quotas.items():
            cluster = tree.clusters.get(cluster_name)
            if cluster is None:
                break
            reachable = max(reachable, max_job_gpus(cluster.model, quota, set(wl.model.instance_types)))
        else:
            if wl.model.max_gpus_per_job > reachable:
                yield problem(wl.pos("max_gpus_per_job"), "CAP006",
                              f"a job of class '{cls}' may ask for {wl.model.max_gpus_per_job} GPUs, but team "
                              f"'{team}' can hold at most {reachable} on any one cluster",
                              f"lower max_gpus_per_job to {reachable} or raise the team's quota" if reachable else
                              "give the team a quota for the instance types this class runs on, "
                              "or change the class's instance_types")
