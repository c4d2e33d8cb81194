"""Benchmark: resource-graph capture of every stack of a 1,000-project synthetic organization,
on a process pool using both cores (Pulumi's runtime is global per process, so one capture at a
time per process). Prints a table and writes benchmarks/results/bench_graph.json.

Run: .venv/bin/python -m benchmarks.bench_graph [--projects 1000] [--clusters 10] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.synthetic import generate_org

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_SECONDS = 60.0
_TREE = None


def _init(projects: int, clusters: int, seed: int) -> None:
    global _TREE
    from hypergov.validate import validate_files

    _TREE = validate_files(generate_org(projects=projects, clusters=clusters, seed=seed)).tree


def _capture(names: list[str]) -> list[tuple[str, int, float]]:
    from stacks.graph import capture_graph

    assert _TREE is not None
    out = []
    for name in names:
        start = time.perf_counter()
        graph = capture_graph(_TREE, name)
        out.append((name, len(graph.resources), time.perf_counter() - start))
    return out


def run(*, projects: int, clusters: int, workers: int, seed: int = 1) -> dict[str, object]:
    from hypergov.validate import validate_files
    from stacks.spec import plan_stacks

    started = time.perf_counter()
    tree = validate_files(generate_org(projects=projects, clusters=clusters, seed=seed)).tree
    names = [s.name for s in plan_stacks(tree)]
    chunks = [names[i::workers * 8] for i in range(workers * 8)]
    with ProcessPoolExecutor(max_workers=workers, initializer=_init, initargs=(projects, clusters, seed)) as pool:
        results = [r for chunk in pool.map(_capture, chunks) for r in chunk]
    total = time.perf_counter() - started
    capture_cpu = sum(r[2] for r in results)
    by_kind: dict[str, list[tuple[int, float]]] = {}
    for name, count, secs in results:
        by_kind.setdefault(name.split("-")[0], []).append((count, secs))
    return {
        "projects": projects, "clusters": clusters, "workers": workers, "cpus": os.cpu_count(),
        "stacks": len(results), "resources": sum(r[1] for r in results),
        "wall_seconds": round(total, 2), "target_seconds": TARGET_SECONDS,
        "capture_seconds_summed": round(capture_cpu, 2),
        "per_stack_ms": round(1000 * capture_cpu / len(results), 1),
        "per_kind": {k: {"stacks": len(v), "resources_avg": round(sum(c for c, _ in v) / len(v), 1),
                         "ms_avg": round(1000 * sum(s for _, s in v) / len(v), 1)} for k, v in sorted(by_kind.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    result = run(projects=args.projects, clusters=args.clusters, workers=args.workers)
    print(f"{'stacks':>8} {'resources':>10} {'wall s':>8} {'per stack ms':>13} {'target s':>9}")
    print(f"{result['stacks']:>8} {result['resources']:>10} {result['wall_seconds']:>8} "
          f"{result['per_stack_ms']:>13} {TARGET_SECONDS:>9}")
    for kind, row in result["per_kind"].items():  # type: ignore[attr-defined]
        print(f"  {kind:<8} {row['stacks']:>6} stacks, {row['resources_avg']:>6} resources avg, "
              f"{row['ms_avg']:>7} ms avg")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_graph.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
