"""Quotas in finer units than whole instances, and absolute borrow limits: each amount is checked
in the unit it is given in, against what the cluster's instances of that type hold in that unit.

- CAP007: an amount in a unit the instance type does not have (a MIG profile its GPU does not
  offer, partitions or accelerators on a type without GPUs).
- CAP008: the MIG partitions the teams are guaranteed on an instance type do not fit its GPUs
  (per profile NVIDIA's instances per GPU; all profiles together the GPU's 7 compute and 8
  memory slices).
- CAP009: absolute borrow limits inconsistent with the percentage limit (a written
  borrow_limit_percent that no guaranteed type uses any more) or with the capacity (a limit
  larger than all the cluster has of that type besides the team's own guarantee).
- CAP010: MIG partitions, vCPU or memory on a plain-EKS cluster, whose Kueue queues hypergov
  declares in accelerators (whole instances, accelerators and absolute limits in those map to
  nominalQuota and borrowingLimit).

`instance_share` is also how CAP001 adds teams' guarantees given in different units: each as
the instances' worth it takes (its dominant share of one instance).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction

from hypergov.model import partitions
from hypergov.model.cluster import Cluster
from hypergov.model.instance_specs import instance_spec
from hypergov.model.project import AcceleratorPartition, ClusterQuota, Project, QuotaAmount
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.problems import Problem, Severity
from hypergov.rules.base import problem
from hypergov.rules.clusters import capacity_pos


def check_quota_units(tree: GovernanceTree) -> Iterator[Problem]:
    yield from _units_exist(tree)
    yield from _partitions_fit(tree)
    yield from _absolute_limits_consistent(tree)
    yield from _plain_eks_whole_instances(tree)


def describe(amount: QuotaAmount) -> str:
    """The amount as the user wrote it, e.g. '8 accelerators', '14 x mig-1g.10gb'."""
    parts = []
    if amount.instances is not None:
        parts.append(f"{amount.instances} instances")
    if amount.accelerators is not None:
        parts.append(f"{amount.accelerators} accelerators")
    if amount.partition is not None:
        parts.append(f"{amount.partition.count} x {amount.partition.profile}")
    if amount.vcpu is not None:
        parts.append(f"{amount.vcpu:g} vCPUs")
    if amount.memory_gib is not None:
        parts.append(f"{amount.memory_gib:g} GiB")
    return " + ".join(parts)


def instance_share(cluster: Cluster, *, instance_type: str, amount: QuotaAmount) -> Fraction | None:
    """How many instances of `instance_type` the amount takes: the largest of its parts, each
    divided by what one instance has (a partition: its share of a GPU); None when no part can be
    measured (the type's vCPUs, memory or accelerators unknown)."""
    if amount.instances is not None:
        return Fraction(amount.instances)
    per_gpu = cluster.accelerators(instance_type) or 0
    spec = instance_spec(instance_type)
    shares: list[Fraction] = []
    if amount.accelerators is not None and per_gpu:
        shares.append(Fraction(amount.accelerators, per_gpu))
    if amount.partition is not None and per_gpu:
        found = partitions.profile(instance_type, amount.partition.profile)
        if found is not None:
            shares.append(amount.partition.count * partitions.gpu_share(found) / per_gpu)
    if amount.vcpu is not None and spec is not None:
        shares.append(Fraction(amount.vcpu) / spec.vcpu)
    if amount.memory_gib is not None and spec is not None:
        shares.append(Fraction(amount.memory_gib) / Fraction(spec.memory_gib))
    return max(shares) if shares else None


def _amounts(quota: ClusterQuota) -> Iterator[tuple[str, str, QuotaAmount]]:
    """(field, instance type, amount) of every guarantee given in finer units and every limit."""
    for itype, amount in sorted(quota.resources.items()):
        yield "resources", itype, amount
    for itype, amount in sorted(quota.absolute_borrow_limits.items()):
        yield "absolute_borrow_limits", itype, amount


def _units_exist(tree: GovernanceTree) -> Iterator[Problem]:
    for _team, project in sorted(tree.projects.items()):
        for cluster_name, quota in sorted(project.model.quotas.items()):
            cluster = tree.clusters.get(cluster_name)
            for field, itype, amount in _amounts(quota):
                if cluster is None or itype not in cluster.model.capacity:
                    continue  # REF001 / REF002
                per_gpu = cluster.model.accelerators(itype)
                at = ("quotas", cluster_name, field, itype)
                if amount.partition is not None:
                    offered = partitions.profiles(itype)
                    if amount.partition.profile not in offered:
                        yield problem(project.pos(*at, "partition", "profile"), "CAP007",
                                      f"{itype} offers no MIG profile {amount.partition.profile}"
                                      + ("" if offered else ": its GPUs cannot be partitioned"),
                                      f"use one of: {', '.join(offered)}" if offered else
                                      "give accelerators, vcpu or memory_gib, or partitions on a MIG-capable type "
                                      f"({', '.join(sorted(partitions.PROFILES_BY_TYPE))})")
                if amount.accelerators is not None and per_gpu == 0:
                    yield problem(project.pos(*at, "accelerators"), "CAP007",
                                  f"{itype} has no accelerators",
                                  "give vcpu or memory_gib (or whole instances) for this instance type")


def _partitions_fit(tree: GovernanceTree) -> Iterator[Problem]:
    demand: dict[tuple[str, str], list[tuple[str, QuotaAmount]]] = defaultdict(list)
    for team, project in sorted(tree.projects.items()):
        for cluster_name, quota in project.model.quotas.items():
            for itype, amount in quota.resources.items():
                if amount.partition is not None:
                    demand[(cluster_name, itype)].append((team, amount))
    for (cluster_name, itype), teams in sorted(demand.items()):
        found = tree.clusters.get(cluster_name)
        if found is None or itype not in found.model.capacity:
            continue
        gpus = found.model.capacity[itype].instances * (found.model.accelerators(itype) or 0)
        offered = partitions.profiles(itype)
        known = [(t, a.partition, offered[a.partition.profile]) for t, a in teams
                 if a.partition is not None and a.partition.profile in offered]
        if not known or not gpus:
            continue
        over = _partition_overflow(known, gpus)
        if over:
            parts = ", ".join(f"{t} {p.count} x {p.profile}" for t, p, _ in known)
            yield problem(capacity_pos(found, itype), "CAP008",
                          f"{itype}: teams are guaranteed MIG partitions ({parts}) that its {gpus} GPUs cannot "
                          f"hold: {over}",
                          "lower the teams' partition counts in projects/*.yaml, use fewer or smaller profiles, "
                          "or add instances of this type")


def _partition_overflow(known: list[tuple[str, AcceleratorPartition, partitions.Profile]], gpus: int) -> str:
    by_profile: dict[str, int] = defaultdict(int)
    for _, given, _ in known:
        by_profile[given.profile] += given.count
    profiles = {p.name: p for _, _, p in known}
    for name, count in sorted(by_profile.items()):
        most = gpus * profiles[name].per_gpu
        if count > most:
            return f"at most {most} x {name} ({profiles[name].per_gpu} per GPU)"
    compute = sum(c * profiles[n].compute_slices for n, c in by_profile.items())
    memory = sum(c * profiles[n].memory_slices for n, c in by_profile.items())
    if compute > gpus * partitions.COMPUTE_SLICES:
        return f"{compute} compute slices of {gpus * partitions.COMPUTE_SLICES}"
    if memory > gpus * partitions.MEMORY_SLICES:
        return f"{memory} memory slices of {gpus * partitions.MEMORY_SLICES}"
    return ""


def _absolute_limits_consistent(tree: GovernanceTree) -> Iterator[Problem]:
    for _team, project in sorted(tree.projects.items()):
        for cluster_name, quota in sorted(project.model.quotas.items()):
            limits = quota.absolute_borrow_limits
            if not limits or quota.sharing != "LendAndBorrow":
                continue  # CAP002 says they are ignored
            base = ("quotas", cluster_name)
            guaranteed = quota.instance_types()
            if quota.borrow_limit_percent is not None and all(t in limits for t in guaranteed):
                yield problem(project.pos(*base, "borrow_limit_percent"), "CAP009",
                              f"borrow_limit_percent {quota.borrow_limit_percent} applies to no instance type: "
                              "absolute_borrow_limits cap every type the team is guaranteed, regardless of it",
                              "remove borrow_limit_percent, or the absolute limit of a type it should govern",
                              Severity.WARNING)
            cluster = tree.clusters.get(cluster_name)
            if cluster is None:
                continue
            yield from _limits_within_capacity(project, cluster.model, quota=quota, base=base)


def _limits_within_capacity(project: Sourced[Project], cluster: Cluster, *, quota: ClusterQuota,
                            base: tuple[str, str]) -> Iterator[Problem]:
    own = quota.guarantees()
    for itype, limit in sorted(quota.absolute_borrow_limits.items()):
        capacity = cluster.capacity.get(itype)
        share = instance_share(cluster, instance_type=itype, amount=limit)
        if capacity is None or share is None:
            continue
        mine = instance_share(cluster, instance_type=itype, amount=own[itype]) if itype in own else Fraction(0)
        others = Fraction(capacity.instances) - (mine or Fraction(0))
        if share > others:
            yield problem(project.pos(*base, "absolute_borrow_limits", itype), "CAP009",
                          f"absolute borrow limit {describe(limit)} of {itype} is {float(share):g} instances' worth, "
                          f"but besides the team's own guarantee the cluster has {float(others):g}",
                          "lower the limit to what other teams can lend, or remove it", Severity.WARNING)


def _plain_eks_whole_instances(tree: GovernanceTree) -> Iterator[Problem]:
    for _team, project in sorted(tree.projects.items()):
        for cluster_name, quota in sorted(project.model.quotas.items()):
            cluster = tree.clusters.get(cluster_name)
            if cluster is None or cluster.model.task_governance:
                continue
            for field, itype, amount in _amounts(quota):
                units = [u for u in ("partition", "vcpu", "memory_gib") if getattr(amount, u) is not None]
                if units:
                    yield problem(project.pos("quotas", cluster_name, field, itype, units[0]), "CAP010",
                                  f"{itype}: {', '.join(units)} cannot be declared on '{cluster_name}', a plain-EKS "
                                  "cluster (task_governance: false), whose Kueue queues hypergov declares in "
                                  "accelerators",
                                  "give instances or accelerators here, or enable task governance on the cluster")
