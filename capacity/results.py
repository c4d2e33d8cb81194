"""What one simulation measured, per team and for the cluster, as frozen values that the
terminal table, the JSON output, the plots and the diff all read."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


def percentile(sorted_values: Sequence[int], pct: float) -> int | None:
    """Nearest-rank percentile of ascending values; None when there are none."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One admission of a job: held its GPUs from `start` to `end` (trace seconds); `preempted`:
    evicted then (its work since the last checkpoint lost), else finished or still running."""

    job: str
    start: int
    end: int
    preempted: bool


@dataclass(frozen=True, slots=True)
class TeamResult:
    team: str
    sharing: str
    fair_share_weight: int
    guaranteed_gpus: dict[str, int]
    borrow_limit_gpus: dict[str, int]
    jobs: int
    completed: int
    never_admitted: int
    gpu_hours_own: float
    gpu_hours_borrowed: float
    lost_gpu_hours: float
    """GPU-hours of work thrown away by preemption (since the last checkpoint, or all of it)."""
    admitted_immediately_within_guarantee: int
    """Jobs that started the moment they were submitted, on the team's own guaranteed GPUs."""
    fit_guarantee_at_submit: int
    """Jobs that fit in the team's unused guarantee when they were submitted..."""
    guarantee_honoured: int
    """...and how many of those started at once (the guarantee held)."""
    preemptions_suffered: int
    preemptions_caused: int
    waits: tuple[int, ...] = field(repr=False)
    """Seconds from submission to first admission of every admitted job, ascending."""

    @property
    def guaranteed_total(self) -> int:
        return sum(self.guaranteed_gpus.values())

    @property
    def immediate_share(self) -> float | None:
        return self.admitted_immediately_within_guarantee / self.jobs if self.jobs else None

    @property
    def honoured_share(self) -> float | None:
        return self.guarantee_honoured / self.fit_guarantee_at_submit if self.fit_guarantee_at_submit else None

    def wait(self, pct: float) -> int | None:
        return percentile(self.waits, pct)

    @property
    def wait_mean(self) -> float | None:
        return sum(self.waits) / len(self.waits) if self.waits else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "team": self.team, "sharing": self.sharing, "fair_share_weight": self.fair_share_weight,
            "guaranteed_gpus": dict(self.guaranteed_gpus), "borrow_limit_gpus": dict(self.borrow_limit_gpus),
            "jobs": self.jobs, "completed": self.completed, "never_admitted": self.never_admitted,
            "gpu_hours_own": round(self.gpu_hours_own, 3), "gpu_hours_borrowed": round(self.gpu_hours_borrowed, 3),
            "lost_gpu_hours": round(self.lost_gpu_hours, 3),
            "wait_s": {"p50": self.wait(50), "p90": self.wait(90), "p99": self.wait(99),
                       "mean": None if self.wait_mean is None else round(self.wait_mean, 1),
                       "max": self.waits[-1] if self.waits else None},
            "admitted_immediately_within_guarantee": self.admitted_immediately_within_guarantee,
            "immediate_share": _round(self.immediate_share),
            "fit_guarantee_at_submit": self.fit_guarantee_at_submit, "guarantee_honoured": self.guarantee_honoured,
            "honoured_share": _round(self.honoured_share),
            "preemptions_suffered": self.preemptions_suffered, "preemptions_caused": self.preemptions_caused,
        }


@dataclass(frozen=True, slots=True)
class UtilisationSeries:
    """GPUs in use per team, sampled at fixed times (the state after that second's events)."""

    times: tuple[int, ...]
    teams: tuple[str, ...]
    used: tuple[tuple[int, ...], ...]
    """One row per sample time, one column per team (in `teams` order)."""


@dataclass(frozen=True, slots=True)
class ClusterResult:
    cluster: str
    capacity_gpus: dict[str, int]
    teams: tuple[TeamResult, ...]
    start: int
    end: int
    used_gpu_hours: float
    jobs: int
    unroutable: dict[str, int]
    """Jobs per team the cluster cannot run at all (unknown team or instance type, no GPUs)."""
    events: int
    preemptions: int
    scheduler_cutoffs: int
    """Instants at which preemptions kept enabling each other and scheduling was cut short (0 expected)."""
    series: UtilisationSeries = field(repr=False)
    first_admission: dict[str, int] = field(default_factory=dict, repr=False)
    """Job id -> the time it first started, for every job that ever ran."""
    settings: dict[str, Any] = field(default_factory=dict)
    attempts: tuple[Attempt, ...] = field(default=(), repr=False)
    """With `SimulationSettings.record_attempts`: every admission attempt, in the order they ended
    (attempts still running at the end end there, not preempted)."""

    @property
    def capacity_total(self) -> int:
        return sum(self.capacity_gpus.values())

    @property
    def horizon_s(self) -> int:
        return self.end - self.start

    @property
    def idle_gpu_hours(self) -> float:
        return max(0.0, self.capacity_total * self.horizon_s / 3600 - self.used_gpu_hours)

    @property
    def utilisation(self) -> float:
        possible = self.capacity_total * self.horizon_s / 3600
        return self.used_gpu_hours / possible if possible else 0.0

    def team(self, name: str) -> TeamResult | None:
        return next((t for t in self.teams if t.team == name), None)

    def as_dict(self, *, series: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cluster": self.cluster, "capacity_gpus": dict(self.capacity_gpus), "start_s": self.start,
            "end_s": self.end, "horizon_h": round(self.horizon_s / 3600, 3), "jobs": self.jobs,
            "events": self.events, "preemptions": self.preemptions, "scheduler_cutoffs": self.scheduler_cutoffs,
            "used_gpu_hours": round(self.used_gpu_hours, 3), "idle_gpu_hours": round(self.idle_gpu_hours, 3),
            "utilisation": round(self.utilisation, 4), "unroutable_jobs": dict(self.unroutable),
            "settings": dict(self.settings), "teams": [t.as_dict() for t in self.teams],
        }
        if series:
            out["utilisation_series"] = {"times_s": list(self.series.times), "teams": list(self.series.teams),
                                         "gpus_in_use": [list(row) for row in self.series.used]}
        return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
