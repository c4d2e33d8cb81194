"""Plan cost with the real terraform against the embedded endpoint: one changed project stack
(only the affected stacks are planned) vs every stack of the org, measured in the same run.

Default: a 200-project synthetic org on 4 clusters (the issue's size); `--projects N` for a
quicker look. Reports the per-stack overhead (terraform's fixed start-up cost dominates) and the
ratio full / incremental. Run: `python -m benchmarks.bench_plan [--projects 200]`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from benchmarks.common import print_table, write_results
from benchmarks.synthetic import generate_org, one_budget_changed
from embedded_aws import EmbeddedAwsProcess
from engines.factory import terraform_engine
from engines.plan import Plan, StackName
from engines.settings import load_settings
from hypergov.tree_files import write_tree_dir
from hypergov.validate import validate_files
from stacks.affected import affected_stacks
from stacks.spec import plan_stacks

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-west-2"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args()
    os.environ.update(CREDENTIALS)
    files = generate_org(projects=args.projects, clusters=args.clusters, seed=11)
    base = validate_files(files)
    assert base.ok, base.problems[:3]
    with tempfile.TemporaryDirectory() as tmp:
        write_tree_dir(files, Path(tmp) / "config")
        endpoint = EmbeddedAwsProcess(seed_config=Path(tmp) / "config").start()
        try:
            settings = load_settings(environ={"HYPERGOV_SETTINGS": str(Path(tmp) / "absent.yaml")}, overrides={
                "aws.endpoint_url": endpoint.endpoint_url, "aws.max_retries": 3, "state_dir": str(Path(tmp) / "state"),
                "terraform.parallelism": args.parallelism})
            engine = terraform_engine(settings, base.tree, environ={**os.environ, **CREDENTIALS})
            stacks = [StackName(s.name) for s in plan_stacks(base.tree)]
            start = time.perf_counter()
            outcomes = engine.plan_many(stacks)
            full_s = time.perf_counter() - start
            errors = [o for o in outcomes.values() if not isinstance(o, Plan)]
            if errors:
                raise SystemExit(f"{len(errors)} stack(s) failed to plan: {errors[:3]}")

            head = validate_files(one_budget_changed(files)[0])
            start = time.perf_counter()
            affected = affected_stacks(base.tree, head.tree)
            detect_s = time.perf_counter() - start
            incremental = terraform_engine(settings, head.tree, environ={**os.environ, **CREDENTIALS})
            start = time.perf_counter()
            inc_outcomes = incremental.plan_many(list(affected.to_plan))
            inc_s = time.perf_counter() - start + detect_s
            assert all(isinstance(o, Plan) for o in inc_outcomes.values())
        finally:
            endpoint.stop()
    per_stack = full_s * args.parallelism / len(stacks)
    planned = max(1, len(affected.to_plan))
    rows = [["all stacks (baseline)", len(stacks), full_s, per_stack],
            ["affected stacks, one project changed", len(affected.to_plan), inc_s,
             inc_s * min(args.parallelism, planned) / planned]]  # one stack keeps one worker busy
    print_table(f"plan with terraform against the embedded endpoint ({args.projects} projects, "
                f"{args.clusters} clusters, {args.parallelism} at a time)",
                ["what", "stacks", "wall s", "s per stack per worker"], rows)
    ratio = full_s / inc_s
    print(f"\nincremental plan is {ratio:.0f}x faster than planning every stack "
          f"(affected-stack detection: {detect_s * 1000:.1f} ms)")
    write_results("plan", {"projects": args.projects, "clusters": args.clusters, "parallelism": args.parallelism,
                           "stacks": len(stacks), "full_s": full_s, "per_stack_overhead_s": per_stack,
                           "affected": list(affected.to_plan), "incremental_s": inc_s, "detect_s": detect_s,
                           "ratio_full_over_incremental": ratio})


if __name__ == "__main__":
    main()
