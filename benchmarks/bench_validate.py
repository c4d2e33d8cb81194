"""Load + validate a synthetic organisation of growing size.

Target (foundation issue): 1,000 projects on 20 clusters in under 1 s on a 2-core machine.
Baseline in the same run: the 100-project org, so the table shows how cost per project scales.
Run: `python -m benchmarks.bench_validate` (or `make bench` for every benchmark).
"""

from __future__ import annotations

import argparse
import tempfile

from benchmarks.common import best_of, print_table, write_results
from benchmarks.synthetic import generate_org
from hypergov.loader import load_tree
from hypergov.rules import run_rules
from hypergov.tree_files import write_tree_dir
from hypergov.validate import gc_paused, validate_dir, validate_files

SIZES = ((100, 4), (1000, 20), (3000, 20))
TARGET_S = 1.0


def measure(projects: int, clusters: int, repeat: int) -> dict[str, float | int | bool]:
    files = generate_org(projects=projects, clusters=clusters, seed=7)
    report = validate_files(files)
    assert report.ok, f"synthetic org must be valid: {report.problems[:3]}"
    tree, _ = load_tree(files)
    total = best_of(lambda: validate_files(files), repeat=repeat)
    with gc_paused():
        load = best_of(lambda: load_tree(files), repeat=repeat)
        rules = best_of(lambda: run_rules(tree), repeat=repeat)
    with tempfile.TemporaryDirectory() as tmp:
        write_tree_dir(files, tmp)
        from_disk = best_of(lambda: validate_dir(tmp), repeat=repeat)
    return {"projects": projects, "clusters": clusters, "files": len(files), "total_s": total,
            "load_s": load, "rules_s": rules, "from_disk_s": from_disk, "us_per_project": total / projects * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = [measure(p, c, args.repeat) for p, c in SIZES]
    base = rows[0]["us_per_project"]
    for row in rows:
        row["per_project_vs_100"] = float(row["us_per_project"]) / float(base)
    print_table(f"load + validate (best of {args.repeat})",
                ["projects", "clusters", "files", "total s", "load s", "rules s", "from disk s", "us/project",
                 "x per-project vs 100"],
                [[r["projects"], r["clusters"], r["files"], r["total_s"], r["load_s"], r["rules_s"], r["from_disk_s"],
                  r["us_per_project"], r["per_project_vs_100"]] for r in rows])
    thousand = next(r for r in rows if r["projects"] == 1000)
    verdict = "meets" if float(thousand["total_s"]) < TARGET_S else "MISSES"
    print(f"\n1,000 projects: {float(thousand['total_s']):.3f} s ({verdict} the {TARGET_S:.0f} s target)")
    write_results("validate", {"rows": rows, "target_s": TARGET_S, "meets_target": verdict == "meets"})


if __name__ == "__main__":
    main()
