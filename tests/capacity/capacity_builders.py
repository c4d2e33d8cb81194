"""Small builders for hand-made clusters and jobs in the capacity tests (one instance type
named 'gpu' unless a test says otherwise)."""

from __future__ import annotations

from capacity.spec import (
    ClusterCapacity,
    InstanceTypeName,
    Job,
    JobId,
    PriorityClass,
    SharingStrategy,
    TeamName,
    TeamQuota,
)

GPU = InstanceTypeName("gpu")
PRIORITIES = (PriorityClass("high", 100), PriorityClass("low", 10))


def team(name: str, gpus: int | dict[str, int], *, sharing: SharingStrategy = "Lend", borrow: int | None = None,
         weight: int = 1, preempt_own: bool = True, absolute: dict[str, int] | None = None) -> TeamQuota:
    guaranteed = {GPU: gpus} if isinstance(gpus, int) else {InstanceTypeName(k): v for k, v in gpus.items()}
    return TeamQuota(name=TeamName(name), guaranteed_gpus=guaranteed, sharing=sharing, borrow_limit_percent=borrow,
                     fair_share_weight=weight, preempt_own_lower_priority=preempt_own,
                     absolute_borrow_gpus={InstanceTypeName(k): v for k, v in (absolute or {}).items()})


def cluster(*teams: TeamQuota, capacity: int | dict[str, int] = 16, fair_share: bool = True,
            idle_sharing: bool = True, slices: dict[str, int] | None = None) -> ClusterCapacity:
    gpus = {GPU: capacity} if isinstance(capacity, int) else {InstanceTypeName(k): v for k, v in capacity.items()}
    return ClusterCapacity(name="test", capacity_gpus=gpus, teams=tuple(teams), priority_classes=PRIORITIES,
                           fair_share=fair_share, idle_resource_sharing=idle_sharing,
                           slices_per_instance={InstanceTypeName(k): v for k, v in (slices or {}).items()})


def job(job_id: str, *, at: int, team: str, gpus: int, duration: int, priority: str = "low",
        itype: str = "gpu", pods: int = 1) -> Job:
    return Job(id=JobId(job_id), submit=at, team=TeamName(team), instance_type=InstanceTypeName(itype), gpus=gpus,
               duration=duration, priority=priority, pods=pods)
