"""Containment of IAM action patterns: the worst patterns the schema allows, one decision at a
time and one file of the size limit at a time (issue 10 item 5: no pattern may stall the gate).

Baseline in the same run: the example tree's own patterns (what a real org asks), so the table
shows how much more the worst inputs cost. Every decision ends decided or as PERM005 within its
bound; the target is a worst decision under 0.5 s and a worst 1 MB file under 1 s.
Run: `python -m benchmarks.bench_containment` (or `make bench` for every benchmark).
"""

from __future__ import annotations

import argparse
import time

from benchmarks.common import print_table, write_results
from hypergov.rules.aws_actions import line_regex
from hypergov.rules.escalation import escalation_matches
from hypergov.rules.iam_automata import union_of
from hypergov.rules.iam_patterns import _OVERLAPS, _RESULTS, decide_containment, decide_overlap, glob_regex
from hypergov.source import MAX_FILE_BYTES
from hypergov.validate import validate_files
from tests.core.test_containment_bounds import (
    EXAMPLE_ALLOW,
    _fill,
    _hard_allows,
    _hostile_grants,
    _worst_patterns,
)
from tests.validation.corpus_overlay import example_tree

DECISION_TARGET_S = 0.5
FILE_TARGET_S = 1.0
EXAMPLE_GRANTS = ("sagemaker:Describe*", "sagemaker:List*", "s3:GetObject", "logs:GetLogEvents", "s3:Get*", "ec2:*")


def _clear() -> None:
    """Clear every per-pattern cache, so each measurement pays for its own work."""
    _RESULTS.clear()
    _OVERLAPS.clear()
    for cached in (escalation_matches, line_regex, glob_regex, union_of):
        cached.cache_clear()


def _decisions(patterns: tuple[str, ...] | list[str], allows: list[tuple[str, ...]]) -> dict[str, float | int]:
    worst, total, count, undecided = 0.0, 0.0, 0, 0
    for allow in allows:
        for pattern in patterns:
            for run in [lambda p=pattern, a=allow: decide_containment(p, a)] + [
                    lambda p=pattern, o=o: decide_overlap(p, o) for o in allow]:
                _clear()
                start = time.perf_counter()
                result = run()
                elapsed = time.perf_counter() - start
                worst, total, count = max(worst, elapsed), total + elapsed, count + 1
                undecided += not result.decided
    return {"decisions": count, "worst_s": worst, "mean_s": total / count, "undecided": undecided}


def _file(kind: str) -> dict[str, float | int]:
    files = example_tree()
    if kind == "project":
        hard = ["s3:*" + c + "?" * 30 for c in "abcdefgh"] + ["*:*" + c + "?" * 200 for c in "ab"]
        org = files["org.yaml"].decode().replace(
            "    - sts:GetCallerIdentity\n",
            "    - sts:GetCallerIdentity\n" + "".join(f'    - "{h}"\n' for h in hard), 1)
        files["org.yaml"] = org.encode()
        files["projects/vision.yaml"] = _fill(files["projects/vision.yaml"].decode(), _hostile_grants(5000),
                                              "    ").encode()
        size = len(files["projects/vision.yaml"])
    else:
        org = files["org.yaml"].decode()
        marker = "  Viewer:\n    actions:\n"
        head, tail = org.split(marker)
        room = MAX_FILE_BYTES - 200 - len(head) - len(tail)
        files["org.yaml"] = (head + _fill(marker, _hostile_grants(5000), "      ", room=room) + tail).encode()
        size = len(files["org.yaml"])
    validate_files(files)  # the catalogue and the escalation set load once per process
    _clear()
    start = time.perf_counter()
    report = validate_files(files)
    elapsed = time.perf_counter() - start
    return {"bytes": size, "seconds": elapsed, "problems": len(report.problems)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args()
    baseline = _decisions(EXAMPLE_GRANTS, [EXAMPLE_ALLOW])
    worst = _decisions(_worst_patterns(), _hard_allows())
    rows = [("example tree's patterns (baseline)", baseline), ("worst schema-valid patterns", worst)]
    print_table("single decisions (containment + overlap, caches cleared before each)",
                ["inputs", "decisions", "worst s", "mean s", "undecided (PERM005)"],
                [[name, r["decisions"], r["worst_s"], r["mean_s"], r["undecided"]] for name, r in rows])
    files = [("project file of worst grants", _file("project")), ("org file of worst persona patterns", _file("org"))]
    print_table("one file of the 1 MB size limit, validated with its tree",
                ["file", "bytes", "seconds", "problems"],
                [[name, r["bytes"], r["seconds"], r["problems"]] for name, r in files])
    ratio = float(worst["worst_s"]) / max(float(baseline["worst_s"]), 1e-9)
    worst_file = max(float(r["seconds"]) for _, r in files)
    ok = float(worst["worst_s"]) < DECISION_TARGET_S and worst_file < FILE_TARGET_S
    print(f"\nworst decision {float(worst['worst_s']) * 1000:.1f} ms ({ratio:.0f}x the example's worst); "
          f"worst 1 MB file {worst_file:.2f} s ({'meets' if ok else 'MISSES'} the {DECISION_TARGET_S} s / "
          f"{FILE_TARGET_S:.0f} s targets)")
    write_results("containment", {"baseline": baseline, "worst": worst, "files": dict(files),
                                  "worst_vs_baseline": ratio, "meets_target": ok})


if __name__ == "__main__":
    main()
