"""Usage end to end (issue 30): one month of Kueue Workloads across 500 teams and 20 clusters,
ingested from the collector's store (read, parsed, accounted per 5-minute interval, written to
the Parquet warehouse) and reported (the month's DuckDB queries); 100,000 and 1,000,000
workloads and the ratio between them (linear cost: about 10x).

The stores are generated once per size (untimed) in the collector's own format (`CollectorStore`:
a checkpoint covering the month and the finished segments: per deleted workload a line with its
last body and a line with its attempt as the collector reads it once when it retires it
(`collector_state.retired`); each a finished or preempted Workload as the API server returns it:
admission on `ml.p5.48xlarge` with GPUs and CPU, the
QuotaReserved / Admitted / Finished or Evicted conditions), under benchmarks/.cache/ (reused; delete
it to regenerate). Timed: `usage.ingest.account_clusters` (the clusters in parallel processes, as
`hypergov usage report` runs it) and `Warehouse.period` for the month. Run:
`python -m benchmarks.bench_usage` (`--big 0` skips the 1,000,000 run).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.common import print_table, write_results
from usage.accounting import Pool
from usage.collector_state import Checkpoint, KeptWorkload, retired
from usage.collector_store import ATTEMPTS, BODIES, FINISHED_DIR, CollectorStore, attempts_line, body_line
from usage.coverage import CoveredRange
from usage.ingest import ClusterJob, account_clusters
from usage.resources import GPU_UNITS, MILLICORES, ResourceKind
from usage.spans import iso
from usage.warehouse import Warehouse, month_window

MONTH = "2026-03"
TEAMS, CLUSTERS = 500, 20
INSTANCE_TYPE = "ml.p5.48xlarge"
GPUS_PER_CLUSTER = 512  # 64 instances of 8 GPUs and 192 vCPUs
VCPUS_PER_GPU = 24
GUARANTEE_GPUS = 18  # each of a cluster's 25 teams: 450 of 512 GPUs guaranteed in all
STRATEGIES = ("LendAndBorrow", "Lend", "LendAndBorrow", "DontLend")
PRIORITIES = ("inference", "training", "experimentation")
CACHE = Path(__file__).resolve().parent / ".cache"


def cluster_name(c: int) -> str:
    return f"cluster-{c:02d}"


def cluster_teams(c: int) -> list[str]:
    per = TEAMS // CLUSTERS
    return [f"team-{c * per + n:03d}" for n in range(per)]


def pools(c: int) -> tuple[Pool, ...]:
    teams = cluster_teams(c)
    sharing = {t: STRATEGIES[n % len(STRATEGIES)] for n, t in enumerate(teams)}
    gpu = Pool(cluster_name(c), INSTANCE_TYPE, ResourceKind.GPU, GPUS_PER_CLUSTER * GPU_UNITS,
               {t: GUARANTEE_GPUS * GPU_UNITS for t in teams}, sharing)  # type: ignore[arg-type]
    vcpu = Pool(cluster_name(c), INSTANCE_TYPE, ResourceKind.VCPU, GPUS_PER_CLUSTER * VCPUS_PER_GPU * MILLICORES,
                {t: GUARANTEE_GPUS * VCPUS_PER_GPU * MILLICORES for t in teams}, sharing)  # type: ignore[arg-type]
    return gpu, vcpu


def _condition(kind: str, at: int, reason: str = "") -> dict[str, str]:
    return {"type": kind, "status": "True", "lastTransitionTime": iso(at), "reason": reason or kind,
            "message": ""}


def workload(team: str, uid: str, priority: str, gpus: int, start: int, end: int, preempted: bool) -> dict[str, object]:
    """A finished (or preempted) Workload of one pod asking `gpus` GPUs, shaped like Kueue's."""
    ending = _condition("Evicted", end, "Preempted") if preempted else _condition("Finished", end, "Succeeded")
    cpu = str(gpus * VCPUS_PER_GPU)
    container = {"name": "trainer", "image": "registry.example/train:1",
                 "resources": {"requests": {"cpu": cpu, "nvidia.com/gpu": str(gpus)}}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
        "metadata": {"name": f"job-{uid}", "namespace": f"hyperpod-ns-{team}", "uid": uid, "resourceVersion": "1"},
        "spec": {"queueName": f"hyperpod-ns-{team}-localqueue", "priorityClassName": f"{priority}-priority",
                 "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass", "priority": 100,
                 "podSets": [{"name": "main", "count": 1, "template": {"spec": {"restartPolicy": "Never",
                                                                               "containers": [container]}}}]},
        "status": {
            "admission": {"clusterQueue": f"hyperpod-ns-{team}-clusterqueue", "podSetAssignments": [{
                "name": "main", "count": 1, "flavors": {"cpu": INSTANCE_TYPE, "nvidia.com/gpu": INSTANCE_TYPE},
                "resourceUsage": {"cpu": cpu, "nvidia.com/gpu": str(gpus)}}]},
            "conditions": [_condition("QuotaReserved", start), _condition("Admitted", start), ending]}}


def generate_cluster(args: tuple[Path, int, int, int]) -> int:
    """One cluster's store: its teams' workloads back to back per (team, class) lane over the month,
    1-6 GPUs each (3 lanes of at most 6 stay within the team's 18-GPU guarantee)."""
    state_dir, c, count, seed = args
    rng = random.Random(seed * 1000 + c)
    start, end = month_window(MONTH)
    store = CollectorStore.of(state_dir, cluster_name(c))
    segments: dict[str, list[str]] = {}
    written = 0
    for t, team in enumerate(cluster_teams(c)):
        for p, priority in enumerate(PRIORITIES):
            now = start
            per_lane = lane_count(count, (c * len(cluster_teams(c)) + t) * len(PRIORITIES) + p)
            mean = (end - start) // per_lane
            for n in range(per_lane):
                length = rng.randint(mean // 2, mean * 3 // 2)
                uid = f"{team}-{priority[:3]}-{n:06d}"
                finished = min(now + length, end - 1)
                body = workload(team, uid, priority, rng.randint(1, 6), now, finished, rng.random() < 0.05)
                # deleted when it finished: retired on that day, in the store's own format
                day = _utc(finished).strftime("%Y-%m-%d")
                record = retired(KeptWorkload(uid=uid, body=body, deleted=True), (), cluster_name(c), now=finished)
                segments.setdefault(f"{BODIES}-{day}", []).append(body_line(uid, body))
                segments.setdefault(f"{ATTEMPTS}-{day}", []).append(attempts_line(record))
                written += 1
                now += length
    directory = store.root / FINISHED_DIR
    directory.mkdir(parents=True, exist_ok=True)
    for name, lines in segments.items():
        (directory / f"{name}.jsonl").write_text("".join(lines))
    store.save(Checkpoint(resource_version="1", coverage=(CoveredRange(
        start=_utc(start), end=_utc(end), began="list"),)))
    return written


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def lane_count(count: int, lane: int) -> int:
    """Workloads of one (team, class) lane: `count` spread over every lane, the first lanes one more
    where it does not divide, so the month holds exactly `count` (at least one per lane)."""
    lanes = TEAMS * len(PRIORITIES)
    return max(1, count // lanes + (1 if lane < count % lanes else 0))


def stores(count: int, seed: int) -> Path:
    """The generated stores for `count` workloads (made once, reused)."""
    total = sum(lane_count(count, lane) for lane in range(TEAMS * len(PRIORITIES)))
    root = CACHE / f"usage-workloads-{total}-{seed}"
    if (root / "complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    print(f"generating {total:,} workloads under {root} (once)", flush=True)
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(generate_cluster, [(root / "state", c, count, seed) for c in range(CLUSTERS)]))
    (root / "complete").write_text("")
    return root


def measure(count: int, *, seed: int) -> dict[str, float]:
    root = stores(count, seed)
    workloads = sum(len(CollectorStore.of(root / "state", cluster_name(c)).retired()) for c in range(CLUSTERS))
    warehouse = root / "warehouse"
    shutil.rmtree(warehouse, ignore_errors=True)
    start, end = month_window(MONTH)
    jobs = [ClusterJob(cluster_name(c), pools(c), root / "state", warehouse, now=end + 3600, months=(MONTH,))
            for c in range(CLUSTERS)]
    wall, cpu, children = time.perf_counter(), time.process_time(), os.times()
    account_clusters(jobs)
    ingest = time.perf_counter() - wall
    period = Warehouse(warehouse).period(start, end)
    report = time.perf_counter() - wall - ingest
    after = os.times()
    cpu_s = time.process_time() - cpu + (after.children_user - children.children_user) + \
        (after.children_system - children.children_system)
    used = sum(t.used for t in period.teams if t.kind is ResourceKind.GPU)
    size = sum(f.stat().st_size for f in warehouse.rglob("*.parquet"))
    return {"workloads": workloads, "ingest_s": ingest, "report_s": report, "wall_s": ingest + report,
            "cpu_s": cpu_s, "gpu_hours": used, "parquet_mb": size / 1e6,
            "workloads_per_s": workloads / (ingest + report)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    runs = [measure(args.small, seed=args.seed)] + ([measure(args.big, seed=args.seed)] if args.big else [])
    rows = [[r["workloads"], r["ingest_s"], r["report_s"], r["wall_s"], r["cpu_s"], round(r["gpu_hours"]),
             r["parquet_mb"], round(r["workloads_per_s"])] for r in runs]
    print_table(f"usage: one month ({MONTH}), {TEAMS} teams, {CLUSTERS} clusters, {os.cpu_count()} cores",
                ["workloads", "ingest s", "report s", "wall s", "cpu s", "GPU-hours", "Parquet MB", "workloads/s"],
                rows)
    payload: dict[str, object] = {"month": MONTH, "teams": TEAMS, "clusters": CLUSTERS, "runs": runs}
    if len(runs) == 2:
        payload["wall_ratio"] = runs[1]["wall_s"] / runs[0]["wall_s"]
        print(f"\n{runs[1]['workloads']:,} / {runs[0]['workloads']:,} wall-time ratio: {payload['wall_ratio']:.1f} "
              "(10 would be linear)")
    write_results("usage", payload)


if __name__ == "__main__":
    main()
