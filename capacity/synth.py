"""A seeded generator of realistic job traces, for when a team has no history to replay and for
the benchmark. Shapes taken from published GPU-cluster studies (Philly ATC'19, Alibaba PAI
NSDI'22): arrivals follow the working day and the week, run times are heavy-tailed (lognormal),
most jobs are small gangs with a long tail of large ones, and some teams arrive in bursts.
Pure: the same workloads, shape and seed always give the same trace.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate

from capacity.spec import InstanceTypeName, Job, JobId, TeamName

HOUR = 3600


@dataclass(frozen=True, slots=True)
class Workload:
    """What one team submits to one cluster."""

    team: TeamName
    cluster: str | None
    instance_types: tuple[tuple[InstanceTypeName, float, int], ...]
    """(instance type, relative frequency, largest gang in GPUs) per type the team uses."""
    priorities: tuple[tuple[str, float], ...]
    """(priority class, relative frequency)."""
    share: float
    """Relative arrival rate of this workload among all of them."""
    median_duration: int
    max_duration: int
    burstiness: float = 0.0
    """0: steady arrivals; 1: frequent bursts of many jobs at once."""


@dataclass(frozen=True, slots=True)
class TraceShape:
    jobs: int
    days: float
    diurnal_amplitude: float = 0.5
    """0: flat; 1: no arrivals at the quietest hour."""
    peak_hour: int = 14
    weekend_factor: float = 0.5
    duration_sigma: float = 1.2
    """Sigma of the lognormal run time: 1.2 puts the 99th percentile ~16x above the median."""
    size_exponent: float = 0.6
    """P(gang of 2^k GPUs) is proportional to 2^(-k * size_exponent)."""
    bursts_per_week: float = 3.0
    burst_multiplier: float = 6.0
    burst_hours: tuple[int, int] = (2, 10)


def generate(workloads: list[Workload], shape: TraceShape, *, seed: int) -> list[Job]:
    """`shape.jobs` jobs over `shape.days` days, sorted by submit time, ids j000000, j000001, ..."""
    if not workloads or shape.jobs <= 0:
        return []
    rng = random.Random(seed)
    hours = max(1, math.ceil(shape.days * 24))
    bursts = [_bursts(rng, w.burstiness, hours, shape) for w in workloads]
    team_cum: list[list[float]] = []
    hour_weight: list[float] = []
    for h in range(hours):
        weights = [w.share * (shape.burst_multiplier if h in bursts[k] else 1.0) for k, w in enumerate(workloads)]
        cum = list(accumulate(weights))
        team_cum.append(cum)
        hour_weight.append(_hour_factor(h, shape) * cum[-1])
    chosen_hours = sorted(rng.choices(range(hours), cum_weights=list(accumulate(hour_weight)), k=shape.jobs))
    drafts: list[tuple[int, int, Job]] = []
    for n, h in enumerate(chosen_hours):
        cum = team_cum[h]
        k = bisect_left(cum, rng.random() * cum[-1])
        drafts.append((h * HOUR + rng.randrange(HOUR), n, _job(rng, workloads[min(k, len(workloads) - 1)], shape)))
    drafts.sort(key=lambda d: (d[0], d[1]))
    return [Job(id=JobId(f"j{n:06d}"), submit=t, team=job.team, instance_type=job.instance_type, gpus=job.gpus,
                duration=job.duration, priority=job.priority, cluster=job.cluster)
            for n, (t, _, job) in enumerate(drafts)]


def _hour_factor(h: int, shape: TraceShape) -> float:
    daily = 1.0 + shape.diurnal_amplitude * math.cos(2 * math.pi * ((h % 24) - shape.peak_hour) / 24)
    weekend = (h // 24) % 7 in (5, 6)
    return daily * (shape.weekend_factor if weekend else 1.0)


def _bursts(rng: random.Random, burstiness: float, hours: int, shape: TraceShape) -> set[int]:
    expected = shape.bursts_per_week * burstiness * hours / (24 * 7)
    count = _poisson(rng, expected)
    burst: set[int] = set()
    for _ in range(count):
        start = rng.randrange(hours)
        burst.update(range(start, min(hours, start + rng.randint(*shape.burst_hours))))
    return burst


def _poisson(rng: random.Random, mean: float) -> int:
    if mean <= 0:
        return 0
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _job(rng: random.Random, w: Workload, shape: TraceShape) -> Job:
    itype, _, max_gpus = rng.choices(w.instance_types, weights=[t[1] for t in w.instance_types])[0]
    sizes = gang_sizes(max_gpus)
    gpus = rng.choices(sizes, weights=[_size_weight(s, shape) for s in sizes])[0]
    duration = int(rng.lognormvariate(math.log(max(1, w.median_duration)), shape.duration_sigma))
    priority = rng.choices([p for p, _ in w.priorities], weights=[f for _, f in w.priorities])[0]
    return Job(id=JobId(""), submit=0, team=w.team, instance_type=itype, gpus=gpus,
               duration=min(max(60, duration), w.max_duration), priority=priority, cluster=w.cluster)


def gang_sizes(max_gpus: int) -> list[int]:
    """Powers of two up to `max_gpus` (at least [1])."""
    sizes = [1]
    while sizes[-1] * 2 <= max_gpus:
        sizes.append(sizes[-1] * 2)
    return sizes


def mean_gang(max_gpus: int, shape: TraceShape) -> float:
    sizes = gang_sizes(max_gpus)
    weights = [_size_weight(s, shape) for s in sizes]
    return sum(s * w for s, w in zip(sizes, weights, strict=True)) / sum(weights)


def _size_weight(size: int, shape: TraceShape) -> float:
    return math.pow(size, -shape.size_exponent)


def median_for_load(*, workloads: list[Workload], total_share: float, shape: TraceShape, capacity_gpus: int,
                    load: float) -> int:
    """The median run time at which `workloads` (whose share of all arrivals is their share over
    `total_share`) ask for `load` x the GPU-seconds `capacity_gpus` offer over the trace
    (clipping at the maximum run time ignored)."""
    gpu_jobs = 0.0
    for w in workloads:
        freq = sum(f for _, f, _ in w.instance_types) or 1.0
        gang = sum(f * mean_gang(m, shape) for _, f, m in w.instance_types) / freq
        gpu_jobs += shape.jobs * w.share / (total_share or 1.0) * gang
    if gpu_jobs <= 0:
        return HOUR
    target = load * capacity_gpus * shape.days * 86400
    return max(60, int(target / (gpu_jobs * math.exp(shape.duration_sigma ** 2 / 2))))
