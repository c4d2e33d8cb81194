"""Capacity simulator throughput and how it scales, in one table (issue 15):

- light load: 100,000 jobs over 30 days on 1,024 GPUs and 50 teams;
- 10x load: the same jobs over 3 days (queues grow): events/s should stay within 1.5x of light;
- large: 1,000,000 jobs over 30 days on 10,000 GPUs and 500 teams: target under 60 s.

Reports wall time and simulated events per second (submissions, admissions, preemptions and
completions), and the CPU seconds the simulation used (on a shared machine the wall time includes
waiting for a core; the CPU time is what the run costs). The load average is printed too.
Run: `python -m benchmarks.bench_capacity` (`--big-jobs 0` skips the large run).
"""

from __future__ import annotations

import argparse
import os
import time

from benchmarks.common import print_table, write_results
from capacity.engine import simulate
from capacity.spec import (
    ClusterCapacity,
    InstanceTypeName,
    Job,
    PriorityClass,
    SharingStrategy,
    TeamName,
    TeamQuota,
)
from capacity.synth import TraceShape, Workload, generate, median_for_load

TARGET_S = 60.0
"""The large run's target (issue 15)."""
SCALING_TARGET = 1.5
"""Light-load events/s over 10x-load events/s must stay below this (issue 15)."""
P5 = InstanceTypeName("ml.p5.48xlarge")
G5 = InstanceTypeName("ml.g5.48xlarge")
CAPACITY = {P5: 768, G5: 256}  # 96 + 32 instances of 8 GPUs = 1,024 GPUs
LARGE_CAPACITY = {P5: 7504, G5: 2496}  # 938 + 312 instances of 8 GPUs = 10,000 GPUs
STRATEGIES: tuple[SharingStrategy, ...] = ("LendAndBorrow", "Lend", "LendAndBorrow", "DontLend", "LendAndBorrow")
PRIORITIES = (PriorityClass("inference", 100), PriorityClass("training", 60), PriorityClass("experimentation", 20))


def cluster(teams: int, capacity: dict[InstanceTypeName, int] | None = None) -> ClusterCapacity:
    """`teams` teams sharing 90% of the cluster as guarantees, with every sharing strategy."""
    capacity = capacity or CAPACITY
    quotas = []
    for n in range(teams):
        share = 0.9 / teams
        quotas.append(TeamQuota(
            name=TeamName(f"team-{n:03d}"),
            guaranteed_gpus={P5: int(capacity[P5] * share), G5: int(capacity[G5] * share)},
            sharing=STRATEGIES[n % len(STRATEGIES)], borrow_limit_percent=(None, 100, 200)[n % 3],
            fair_share_weight=1 + n % 4, preempt_own_lower_priority=n % 2 == 0))
    return ClusterCapacity(name="bench", capacity_gpus=dict(capacity), teams=tuple(quotas),
                           priority_classes=PRIORITIES)


def trace(cap: ClusterCapacity, *, jobs: int, days: float, seed: int) -> list[Job]:
    shape = TraceShape(jobs=jobs, days=days)
    workloads = [Workload(team=t.name, cluster=None,
                          instance_types=((P5, 3.0, 16), (G5, 1.0, 4)),
                          priorities=(("inference", 1.0), ("training", 4.0), ("experimentation", 3.0)),
                          share=1.0 + n % 5, median_duration=3600, max_duration=7 * 86400,
                          burstiness=(0.0, 0.5, 1.0)[n % 3]) for n, t in enumerate(cap.teams)]
    median = median_for_load(workloads=workloads, total_share=sum(w.share for w in workloads), shape=shape,
                             capacity_gpus=sum(cap.capacity_gpus.values()), load=0.85)
    workloads = [Workload(team=w.team, cluster=None, instance_types=w.instance_types, priorities=w.priorities,
                          share=w.share, median_duration=median, max_duration=w.max_duration,
                          burstiness=w.burstiness) for w in workloads]
    return generate(workloads, shape, seed=seed)


def measure(label: str, *, jobs: int, days: float, teams: int,
            capacity: dict[InstanceTypeName, int]) -> dict[str, float | int | str]:
    cap = cluster(teams, capacity)
    start = time.perf_counter()
    job_list = trace(cap, jobs=jobs, days=days, seed=11)
    generated = time.perf_counter()
    cpu_start = time.process_time()
    result = simulate(cap, job_list)
    done = time.perf_counter()
    cpu_s = time.process_time() - cpu_start
    sim_s = done - generated
    return {"run": label, "jobs": jobs, "days": days, "teams": teams, "gpus": sum(capacity.values()),
            "generate_s": round(generated - start, 3), "simulate_s": round(sim_s, 3),
            "simulate_cpu_s": round(cpu_s, 3), "events": result.events,
            "events_per_s": round(result.events / sim_s), "events_per_cpu_s": round(result.events / cpu_s),
            "preemptions": result.preemptions,
            "utilisation": round(result.utilisation, 4), "horizon_days": round(result.horizon_s / 86400, 2),
            "cutoffs": result.scheduler_cutoffs, "load_average": round(os.getloadavg()[0], 2)}


COLUMNS = ("run", "jobs", "days", "teams", "gpus", "generate_s", "simulate_s", "simulate_cpu_s", "events",
           "events_per_s", "events_per_cpu_s", "preemptions", "utilisation", "horizon_days", "cutoffs", "load_average")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100_000, help="jobs of the light and 10x-load runs")
    parser.add_argument("--big-jobs", type=int, default=1_000_000, help="jobs of the large run (0: skip it)")
    args = parser.parse_args()
    rows = [measure("light", jobs=args.jobs, days=30.0, teams=50, capacity=CAPACITY),
            measure("10x load", jobs=args.jobs, days=3.0, teams=50, capacity=CAPACITY)]
    if args.big_jobs:
        rows.append(measure("large", jobs=args.big_jobs, days=30.0, teams=500, capacity=LARGE_CAPACITY))
    print_table("capacity simulation (one run each)",
                ["run", "jobs", "days", "teams", "GPUs", "generate s", "simulate s", "CPU s", "events", "events/s",
                 "events/CPU s", "preemptions", "utilisation", "horizon d", "cutoffs", "load avg"],
                [[r[k] for k in COLUMNS] for r in rows])
    ratio = int(rows[0]["events_per_s"]) / max(1, int(rows[1]["events_per_s"]))
    cpu_ratio = int(rows[0]["events_per_cpu_s"]) / max(1, int(rows[1]["events_per_cpu_s"]))
    scaling = "meets" if ratio <= SCALING_TARGET else "MISSES"
    print(f"\nevents/s light / 10x load: {ratio:.2f} ({scaling} the {SCALING_TARGET}x target); "
          f"per CPU second: {cpu_ratio:.2f}")
    payload: dict[str, object] = {"rows": rows, "scaling_ratio": round(ratio, 3),
                                  "scaling_ratio_cpu": round(cpu_ratio, 3), "scaling_target": SCALING_TARGET,
                                  "meets_scaling_target": scaling == "meets", "target_s": TARGET_S}
    if args.big_jobs:
        big = rows[-1]
        verdict = "meets" if float(big["simulate_s"]) < TARGET_S else "MISSES"
        print(f"{int(big['jobs']):,} jobs on {int(big['gpus']):,} GPUs: {float(big['simulate_s']):.2f} s "
              f"({float(big['simulate_cpu_s']):.2f} CPU s), {int(big['events_per_s']):,} events/s "
              f"({verdict} the {TARGET_S:.0f} s target)")
        payload["meets_target"] = verdict == "meets"
    write_results("capacity", payload)


if __name__ == "__main__":
    main()
