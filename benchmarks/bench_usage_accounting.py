"""Usage accounting throughput (issue 30): synthetic admission spans over 30 days, 500 teams and
20 clusters of one GPU instance type each, accounted per 5-minute interval; 100,000 and 1,000,000
spans and the ratio between them (an O(events log events) sweep should stay near 10x).

Reports wall and CPU seconds of `usage.accounting.account` (building the spans is not timed;
storage is not part of this benchmark). Run: `python -m benchmarks.bench_usage_accounting`
(`--big 0` skips the 1,000,000 run).
"""

from __future__ import annotations

import argparse
import random
import time

from benchmarks.common import print_table, write_results
from usage.accounting import INTERVAL_SECONDS, Pool, account
from usage.resources import GPU_UNITS, ResourceKind
from usage.spans import Span

START = 1772323200  # 2026-03-01T00:00:00Z
DAYS = 30
TEAMS, CLUSTERS = 500, 20
GPUS_PER_CLUSTER = 512
STRATEGIES = ("LendAndBorrow", "Lend", "LendAndBorrow", "DontLend")
PRIORITIES = ("inference", "training", "experimentation")


def pools() -> list[Pool]:
    """Each cluster: its 25 teams guaranteed 90 % of 512 GPUs between them (18 GPUs each)."""
    per_cluster = TEAMS // CLUSTERS
    made = []
    for c in range(CLUSTERS):
        teams = [f"team-{c * per_cluster + n:03d}" for n in range(per_cluster)]
        made.append(Pool(f"cluster-{c:02d}", "ml.p5.48xlarge", ResourceKind.GPU, GPUS_PER_CLUSTER * GPU_UNITS,
                         {t: 18 * GPU_UNITS for t in teams},
                         {t: STRATEGIES[n % len(STRATEGIES)] for n, t in enumerate(teams)}))  # type: ignore[misc]
    return made


def spans(count: int, *, seed: int) -> list[Span]:
    """`count` spans of 1-8 GPUs, each team's within its guarantee (so every instant is accountable),
    back to back per team and priority class, durations scaled so they fill the month."""
    rng = random.Random(seed)
    per_cluster = TEAMS // CLUSTERS
    lanes = TEAMS * len(PRIORITIES)
    per_lane = max(1, count // lanes)
    mean = DAYS * 86400 // per_lane
    made: list[Span] = []
    for n in range(TEAMS):
        cluster = f"cluster-{n // per_cluster:02d}"
        for priority in PRIORITIES:
            now = START
            for _ in range(per_lane):
                length = rng.randint(mean // 2, mean * 3 // 2)
                made.append(Span(f"team-{n:03d}", cluster, "ml.p5.48xlarge", ResourceKind.GPU, priority,
                                 rng.randint(1, 6) * GPU_UNITS, now, now + length, rng.random() < 0.05))
                now += length
    return made


def measure(count: int) -> dict[str, float]:
    given = spans(count, seed=count)
    wall, cpu = time.perf_counter(), time.process_time()
    result = account(given, pools(), start=START, end=START + DAYS * 86400,
                     coverage={p.cluster: [(START, START + DAYS * 86400)] for p in pools()})
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    intervals = sum(len(r.interval_starts) * len(r.teams) for r in result)
    return {"spans": len(given), "wall_s": wall, "cpu_s": cpu, "team_intervals": intervals,
            "spans_per_s": len(given) / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    args = parser.parse_args()
    runs = [measure(args.small)] + ([measure(args.big)] if args.big else [])
    rows = [[r["spans"], r["wall_s"], r["cpu_s"], r["team_intervals"], round(r["spans_per_s"])] for r in runs]
    print_table(f"usage accounting: {DAYS} days, {TEAMS} teams, {CLUSTERS} clusters, "
                f"{INTERVAL_SECONDS // 60}-minute intervals", ["spans", "wall s", "cpu s", "team x intervals",
                                                              "spans/s"], rows)
    payload: dict[str, object] = {"runs": runs}
    if len(runs) == 2:
        payload["wall_ratio"] = runs[1]["wall_s"] / runs[0]["wall_s"]
        print(f"\n1M / 100k wall-time ratio: {payload['wall_ratio']:.1f} (10 would be linear)")
    write_results("usage_accounting", payload)


if __name__ == "__main__":
    main()
