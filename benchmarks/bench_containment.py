"""Containment of IAM action patterns: the worst patterns the schema allows, one decision at a
time and one file of the size limit at a time (issue 10 item 5: no pattern may stall the gate).
These are the inputs of tests/core/test_containment_bounds.py, which proves the bounds by counting the
checker's work; the wall time is measured here, never asserted in a test.

Baselines in the same run: the example tree's own patterns (what a real org asks) for single
decisions, and the example tree itself for whole files, so the tables show how much more the worst
inputs cost. Every measurement starts with every per-pattern cache cleared (as a gate run starts);
the catalogue and the escalation set load once per process, before any. Every decision ends
decided or as PERM005 within its bound; the target is a worst decision under 0.5 s and a worst
1 MB file under 1 s.
Run: `python -m benchmarks.bench_containment [--repeat 3]` (or `make bench` for every benchmark).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from benchmarks.common import print_table, write_results
from hypergov.rules.iam_patterns import decide_containment, decide_overlap
from hypergov.tree_files import TreeEntry
from hypergov.validate import validate_files
from tests.core.test_containment_bounds import (
    EXAMPLE_ALLOW,
    MAX_PATTERN,
    _hard_allows,
    _worst_patterns,
    clear_caches,
    org_file_of_worst_persona_patterns,
    org_file_with_a_boundary_beyond_an_scp,
    project_file_of_worst_grants,
)
from tests.validation.corpus_overlay import example_tree

DECISION_TARGET_S = 0.5
FILE_TARGET_S = 1.0
EXAMPLE_GRANTS = ("sagemaker:Describe*", "sagemaker:List*", "s3:GetObject", "logs:GetLogEvents", "s3:Get*", "ec2:*")
RANDOM_CASES = 200  # as many as the fuzz test draws
T = TypeVar("T")


def _cold(run: Callable[[], T], repeat: int) -> tuple[float, T]:
    """Best wall time of `repeat` runs, every per-pattern cache cleared before each; the last result."""
    times = []
    for _ in range(repeat):
        clear_caches()
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def _decisions(cases: Sequence[tuple[str, Sequence[str]]], repeat: int) -> dict[str, float | int]:
    """Each case's containment decision, and its overlap with each allowed pattern, one at a time."""
    worst, total, count, undecided = 0.0, 0.0, 0, 0
    for pattern, allow in cases:
        runs = [lambda p=pattern, a=tuple(allow): decide_containment(p, a)]
        runs += [lambda p=pattern, o=other: decide_overlap(p, o) for other in allow]
        for run in runs:
            elapsed, result = _cold(run, repeat)
            worst, total, count = max(worst, elapsed), total + elapsed, count + 1
            undecided += not result.decided
    return {"decisions": count, "worst_s": worst, "mean_s": total / count, "undecided": undecided}


def _random_cases(count: int, seed: int = 10) -> list[tuple[str, list[str]]]:
    """Schema-valid patterns shaped as the fuzz test draws them: `*`, or a service of 1-40 of
    `ab-*?` and an action of 1-200 of `abAB-*?`; each against 1-8 such patterns (overlaps with the
    first 3, as the test decides)."""
    rnd = random.Random(seed)

    def pattern() -> str:
        if rnd.random() < 0.1:
            return "*"
        service = "".join(rnd.choice("ab-*?") for _ in range(rnd.randint(1, 40)))
        action = "".join(rnd.choice("abAB-*?") for _ in range(rnd.randint(1, 200)))
        return f"{service}:{action}"[:MAX_PATTERN]

    return [(pattern(), [pattern() for _ in range(rnd.randint(1, 8))]) for _ in range(count)]


def _file(files: dict[str, TreeEntry], repeat: int) -> dict[str, float | int]:
    seconds, report = _cold(lambda: validate_files(files), repeat)
    return {"bytes": max(len(v) for v in files.values() if isinstance(v, bytes)), "seconds": seconds,
            "problems": len(report.problems)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (the best is kept)")
    args = parser.parse_args()
    validate_files(example_tree())  # the catalogue and the escalation set load once per process

    decisions = [
        ("example tree's patterns (baseline)", _decisions([(g, EXAMPLE_ALLOW) for g in EXAMPLE_GRANTS], args.repeat)),
        ("worst schema-valid patterns", _decisions(
            [(p, allow) for allow in _hard_allows() for p in _worst_patterns()], args.repeat)),
        (f"random schema-valid patterns ({RANDOM_CASES}, the fuzz test's shapes)",
         _decisions([(p, allow[:3]) for p, allow in _random_cases(RANDOM_CASES)], args.repeat)),
    ]
    base_decision = max(float(decisions[0][1]["worst_s"]), 1e-9)
    print_table(f"single decisions (containment + overlap, caches cleared, best of {args.repeat})",
                ["inputs", "decisions", "worst s", "mean s", "worst x baseline", "undecided (PERM005)"],
                [[name, r["decisions"], r["worst_s"], r["mean_s"], float(r["worst_s"]) / base_decision,
                  r["undecided"]] for name, r in decisions])

    files = [
        ("example tree (baseline)", _file(example_tree(), args.repeat)),
        ("project file of worst grants", _file(project_file_of_worst_grants(), args.repeat)),
        ("org file of worst persona patterns", _file(org_file_of_worst_persona_patterns(), args.repeat)),
        ("org file whose boundary is beyond an SCP", _file(org_file_with_a_boundary_beyond_an_scp(), args.repeat)),
    ]
    base_file = max(float(files[0][1]["seconds"]), 1e-9)
    print_table(f"one file of up to the 1 MB size limit, validated with its tree (caches cleared, best of "
                f"{args.repeat})", ["file", "largest file bytes", "seconds", "x baseline", "problems"],
                [[name, r["bytes"], r["seconds"], float(r["seconds"]) / base_file, r["problems"]]
                 for name, r in files])

    worst_decision = max(float(r["worst_s"]) for _, r in decisions[1:])
    worst_file = max(float(r["seconds"]) for _, r in files[1:])
    ok = worst_decision < DECISION_TARGET_S and worst_file < FILE_TARGET_S
    print(f"\nworst decision {worst_decision * 1000:.1f} ms ({worst_decision / base_decision:.0f}x the example's "
          f"worst); worst 1 MB file {worst_file:.2f} s ({worst_file / base_file:.1f}x the example tree) "
          f"({'meets' if ok else 'MISSES'} the {DECISION_TARGET_S} s / {FILE_TARGET_S:.0f} s targets)")
    write_results("containment", {
        "repeat": args.repeat, "baseline": decisions[0][1], "worst": decisions[1][1], "random": decisions[2][1],
        "files": dict(files), "worst_vs_baseline": worst_decision / base_decision,
        "worst_file_vs_example_tree": worst_file / base_file, "meets_target": ok})


if __name__ == "__main__":
    main()
