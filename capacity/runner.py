"""Run one trace on several clusters: route every job to the cluster it was submitted to (its
`cluster` field), or, when the trace does not say, to the first cluster (by name) where its
team has a guarantee of its instance type, else the first that has the instance type at all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from capacity.engine import simulate
from capacity.results import ClusterResult
from capacity.spec import ClusterCapacity, Job, SimulationSettings


@dataclass(frozen=True)
class CapacityReport:
    """The results of every simulated cluster, plus jobs no cluster could take."""

    clusters: tuple[ClusterResult, ...]
    unrouted: int = 0
    """Jobs whose cluster or instance type exists in none of the tree's clusters."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def cluster(self, name: str) -> ClusterResult | None:
        return next((c for c in self.clusters if c.cluster == name), None)


def route(jobs: Sequence[Job], capacities: Sequence[ClusterCapacity]) -> tuple[dict[str, list[Job]], int]:
    """Jobs per cluster name, and how many jobs fit no cluster."""
    ordered = sorted(capacities, key=lambda c: c.name)
    routed: dict[str, list[Job]] = {c.name: [] for c in ordered}
    by_guarantee: dict[tuple[str, str], str] = {}
    by_type: dict[str, str] = {}
    for cap in ordered:
        for itype in sorted(cap.capacity_gpus):
            by_type.setdefault(itype, cap.name)
        for team in cap.teams:
            for itype, gpus in sorted(team.guaranteed_gpus.items()):
                if gpus > 0:
                    by_guarantee.setdefault((team.name, itype), cap.name)
    unrouted = 0
    for job in jobs:
        target = job.cluster or by_guarantee.get((job.team, job.instance_type)) or by_type.get(job.instance_type)
        if target is None or target not in routed:
            unrouted += 1
        else:
            routed[target].append(job)
    return routed, unrouted


def run(capacities: Sequence[ClusterCapacity], jobs: Sequence[Job], *, settings: SimulationSettings | None = None,
        only: Sequence[str] = ()) -> CapacityReport:
    """Simulate every cluster (or those named in `only`) on its share of `jobs`."""
    routed, unrouted = route(jobs, capacities)
    results = tuple(simulate(cap, routed[cap.name], settings)
                    for cap in sorted(capacities, key=lambda c: c.name) if not only or cap.name in only)
    return CapacityReport(clusters=results, unrouted=unrouted)
