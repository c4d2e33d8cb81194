"""The synthetic generator: deterministic for a seed, exactly the asked number of jobs, and the
shapes it promises (diurnal arrivals, heavy-tailed run times, mostly small gangs, bursts)."""

from __future__ import annotations

import statistics

from capacity.spec import InstanceTypeName, TeamName
from capacity.synth import TraceShape, Workload, gang_sizes, generate

P5 = InstanceTypeName("ml.p5.48xlarge")


def _workloads(burstiness: float = 0.0) -> list[Workload]:
    return [Workload(team=TeamName(name), cluster="c", instance_types=((P5, 1.0, 64),),
                     priorities=(("training", 3.0), ("experimentation", 1.0)), share=share, median_duration=3600,
                     max_duration=7 * 86400, burstiness=burstiness)
            for name, share in (("a", 1.0), ("b", 3.0))]


def test_same_seed_same_trace_other_seed_other_trace() -> None:
    shape = TraceShape(jobs=2000, days=7)
    assert generate(_workloads(), shape, seed=1) == generate(_workloads(), shape, seed=1)
    assert generate(_workloads(), shape, seed=1) != generate(_workloads(), shape, seed=2)


def test_shapes() -> None:
    jobs = generate(_workloads(), TraceShape(jobs=20_000, days=14, diurnal_amplitude=0.6), seed=3)
    assert len(jobs) == 20_000
    assert [j.submit for j in jobs] == sorted(j.submit for j in jobs)
    assert all(0 <= j.submit < 14 * 86400 for j in jobs)
    by_hour = [0] * 24
    for j in jobs:
        by_hour[j.submit // 3600 % 24] += 1
    assert by_hour[14] > 2 * by_hour[2]  # afternoon peak, night trough
    durations = sorted(j.duration for j in jobs)
    median, p99 = statistics.median(durations), durations[int(0.99 * len(durations))]
    assert 2500 < median < 5000 and p99 > 10 * median  # heavy tail
    gpus = [j.gpus for j in jobs]
    assert set(gpus) <= set(gang_sizes(64)) and gpus.count(1) > gpus.count(64) * 3
    shares = {t: sum(1 for j in jobs if j.team == t) / len(jobs) for t in ("a", "b")}
    assert 0.2 < shares["a"] < 0.3  # team b asks three times as often


def test_bursty_teams_have_busier_peak_hours() -> None:
    def peak_ratio(burstiness: float) -> float:
        jobs = generate(_workloads(burstiness), TraceShape(jobs=20_000, days=28, diurnal_amplitude=0.0,
                                                            weekend_factor=1.0), seed=5)
        hours = [0] * (28 * 24)
        for j in jobs:
            hours[j.submit // 3600] += 1
        return max(hours) / statistics.mean(hours)

    assert peak_ratio(1.0) > 1.5 * peak_ratio(0.0)
