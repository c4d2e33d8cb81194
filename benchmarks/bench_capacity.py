"""Capacity simulator throughput: 100,000 jobs over 30 days on a 1,024-GPU cluster with 50 teams.

Target (capacity-planner issue): under 10 s on this machine. Reports wall time and simulated
events per second (submissions, admissions, preemptions and completions). A smaller run in the
same table shows how the cost scales with the trace.
Run: `python -m benchmarks.bench_capacity`.
"""

from __future__ import annotations

import argparse
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

TARGET_S = 10.0
P5 = InstanceTypeName("ml.p5.48xlarge")
G5 = InstanceTypeName("ml.g5.48xlarge")
CAPACITY = {P5: 768, G5: 256}  # 96 + 32 instances of 8 GPUs = 1,024 GPUs
STRATEGIES: tuple[SharingStrategy, ...] = ("LendAndBorrow", "Lend", "LendAndBorrow", "DontLend", "LendAndBorrow")
PRIORITIES = (PriorityClass("inference", 100), PriorityClass("training", 60), PriorityClass("experimentation", 20))


def cluster(teams: int) -> ClusterCapacity:
    """`teams` teams sharing 90% of the cluster as guarantees, with every sharing strategy."""
    quotas = []
    for n in range(teams):
        share = 0.9 / teams
        quotas.append(TeamQuota(
            name=TeamName(f"team-{n:02d}"),
            guaranteed_gpus={P5: int(CAPACITY[P5] * share), G5: int(CAPACITY[G5] * share)},
            sharing=STRATEGIES[n % len(STRATEGIES)], borrow_limit_percent=(None, 100, 200)[n % 3],
            fair_share_weight=1 + n % 4, preempt_own_lower_priority=n % 2 == 0))
    return ClusterCapacity(name="bench", capacity_gpus=dict(CAPACITY), teams=tuple(quotas),
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


def measure(jobs: int, days: float, teams: int) -> dict[str, float | int]:
    cap = cluster(teams)
    start = time.perf_counter()
    job_list = trace(cap, jobs=jobs, days=days, seed=11)
    generated = time.perf_counter()
    result = simulate(cap, job_list)
    done = time.perf_counter()
    sim_s = done - generated
    return {"jobs": jobs, "days": days, "teams": teams, "gpus": sum(CAPACITY.values()),
            "generate_s": round(generated - start, 3), "simulate_s": round(sim_s, 3), "events": result.events,
            "events_per_s": round(result.events / sim_s), "preemptions": result.preemptions,
            "utilisation": round(result.utilisation, 4), "horizon_days": round(result.horizon_s / 86400, 2),
            "cutoffs": result.scheduler_cutoffs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100_000)
    args = parser.parse_args()
    rows = [measure(args.jobs // 10, 3.0, 50), measure(args.jobs, 30.0, 50)]
    print_table("capacity simulation (one run each)",
                ["jobs", "days", "teams", "GPUs", "generate s", "simulate s", "events", "events/s", "preemptions",
                 "utilisation", "horizon d", "cutoffs"],
                [[r[k] for k in ("jobs", "days", "teams", "gpus", "generate_s", "simulate_s", "events", "events_per_s",
                                 "preemptions", "utilisation", "horizon_days", "cutoffs")] for r in rows])
    big = rows[-1]
    verdict = "meets" if float(big["simulate_s"]) < TARGET_S else "MISSES"
    print(f"\n{big['jobs']:,} jobs: {float(big['simulate_s']):.2f} s, {int(big['events_per_s']):,} events/s "
          f"({verdict} the {TARGET_S:.0f} s target)")
    write_results("capacity", {"rows": rows, "target_s": TARGET_S, "meets_target": verdict == "meets"})


if __name__ == "__main__":
    main()
