"""First pass of a synthetic org with 1, 2 and 3 reconcilers sharing it through leases: real
`hypergov reconcile --watch` processes (each its own state directory and clone of one bare remote),
real terraform with the S3 state backend, one embedded endpoint process per run and one bucket.

A run starts its replicas together and ends when the bucket's applied-commit record names the
head (the leader records it once every project stack is done by some replica). The baseline is
one replica, measured in the same invocation; each replica applies `--parallelism` stacks at a
time (default 1: one replica stands for one machine's worth of terraform).

This machine has 2 cores shared by every replica, terraform and the endpoint, so the speed-up is
bounded by the cores here; on N machines each replica has its own cores and the project phase
scales with N (the org and cluster stacks stay with the leader).

Run: `python -m benchmarks.bench_replicas [--projects 200] [--replicas 1 2 3]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import git

from benchmarks.common import print_table, stop_processes, write_results
from benchmarks.synthetic import generate_org
from embedded_aws import EmbeddedAwsProcess
from hypergov.tree_files import write_tree_dir
from hypergov.validate import validate_files
from stacks.spec import plan_stacks

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-west-2"}
BUCKET = "bench-hypergov-state"
ACCOUNT = "123456789012"
SOURCE = Path(__file__).resolve().parents[1]


def _remote(root: Path, files: dict[str, bytes]) -> tuple[Path, str]:
    seed = root / "seed"
    write_tree_dir(files, seed / "config")
    repo = git.Repo.init(seed, initial_branch="main")
    repo.index.add([str(p.relative_to(seed)) for p in (seed / "config").rglob("*") if p.is_file()])
    actor = git.Actor("bench", "bench@example.com")
    head = str(repo.index.commit("synthetic org", author=actor, committer=actor).hexsha)
    remote = root / "remote.git"
    git.Repo.init(remote, bare=True, initial_branch="main")
    repo.git.push(str(remote), "main")
    return remote, head


def _applied(s3: Any) -> str | None:
    try:
        body = s3.get_object(Bucket=BUCKET, Key="prod/reconciler/reconciler.json")["Body"].read()
    except s3.exceptions.NoSuchKey:
        return None
    entry = json.loads(body).get("branches", {}).get("main", {})
    return str(entry.get("applied_commit")) if entry.get("applied_commit") else None


def first_pass(*, root: Path, config: Path, remote: Path, head: str, replicas: int, parallelism: int,
               timeout_s: float) -> dict[str, Any]:
    """Seconds from starting `replicas` daemons to the head recorded as applied; who applied what."""
    with EmbeddedAwsProcess(seed_config=config) as endpoint:
        s3 = endpoint.client("s3", account=ACCOUNT, region="us-west-2")
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        processes = []
        start = time.perf_counter()
        for i in range(replicas):
            where = root / f"run{replicas}" / f"r{i}"
            where.mkdir(parents=True)
            env = {**os.environ, **CREDENTIALS, "HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url,
                   "HYPERGOV_STATE_DIR": str(where / "state"), "HYPERGOV_SETTINGS": str(where / "none.yaml"),
                   "HYPERGOV_AWS_MAX_RETRIES": "3", "HYPERGOV_CONFIG_DIR": "config",
                   "HYPERGOV_TERRAFORM_PARALLELISM": str(parallelism),
                   "HYPERGOV_STATE_BACKEND": f"s3://{BUCKET}/prod", "PYTHONPATH": str(SOURCE)}
            with open(where / "daemon.log", "w") as err:
                processes.append(subprocess.Popen(
                    [sys.executable, "-m", "cli.main", "reconcile", "--repo", f"file://{remote}", "--watch", "1",
                     "--log-format", "json"], env=env, cwd=where, stdout=subprocess.DEVNULL, stderr=err,
                    start_new_session=True))
        try:
            while _applied(s3) != head:
                if time.perf_counter() - start > timeout_s:
                    raise SystemExit(f"{replicas} replica(s): the pass did not complete in {timeout_s:.0f} s; see "
                                     f"{root / f'run{replicas}'}/*/daemon.log")
                time.sleep(0.5)
            seconds = time.perf_counter() - start
        finally:
            stop_processes(processes)
        applied: dict[str, int] = {}
        for i in range(replicas):
            for line in (root / f"run{replicas}" / f"r{i}" / "daemon.log").read_text().splitlines():
                event = json.loads(line) if line.startswith("{") else {}
                if event.get("event") == "stack.applied" and event.get("changes"):
                    applied[f"r{i}"] = applied.get(f"r{i}", 0) + 1
    return {"replicas": replicas, "seconds": round(seconds, 1), "stacks_applied_by": applied}


def _write(args: argparse.Namespace, stacks: int, runs: list[dict[str, Any]]) -> None:
    """The results so far (after each configuration: a run cut short still leaves what it measured)."""
    baseline = next((r["seconds"] for r in runs if r["replicas"] == 1), runs[0]["seconds"])
    write_results("replicas", {"projects": args.projects, "clusters": args.clusters, "stacks": stacks,
                               "parallelism": args.parallelism, "runs": runs,
                               "speedup": {str(r["replicas"]): round(baseline / r["seconds"], 2) for r in runs}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--clusters", type=int, default=2)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parallelism", type=int, default=1, help="stacks each replica applies at once")
    parser.add_argument("--timeout", type=float, default=7200.0)
    args = parser.parse_args()
    os.environ.update(CREDENTIALS)
    files = generate_org(projects=args.projects, clusters=args.clusters, seed=11)
    report = validate_files(files)
    assert report.ok and report.tree is not None, report.problems[:3]
    stacks = len(plan_stacks(report.tree))
    runs = []
    with tempfile.TemporaryDirectory(prefix="hypergov-bench-replicas-") as tmp:
        root = Path(tmp)
        remote, head = _remote(root, files)
        for replicas in sorted(set(args.replicas)):
            load_before = os.getloadavg()[0]
            runs.append(first_pass(root=root, config=root / "seed" / "config", remote=remote, head=head,
                                   replicas=replicas, parallelism=args.parallelism, timeout_s=args.timeout))
            runs[-1]["load_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]  # before, after
            print(f"{replicas} replica(s): {runs[-1]['seconds']} s ({runs[-1]['stacks_applied_by']}; 1-min load "
                  f"before/after {runs[-1]['load_1min']})", flush=True)
            _write(args, stacks, runs)
    baseline = next((r["seconds"] for r in runs if r["replicas"] == 1), runs[0]["seconds"])
    rows = [[r["replicas"], r["seconds"], baseline / r["seconds"],
             ", ".join(f"{k}: {v}" for k, v in sorted(r["stacks_applied_by"].items()))] for r in runs]
    print_table(f"first pass, {args.projects} projects + {args.clusters} clusters ({stacks} stacks), "
                f"{args.parallelism} stack(s) at a time per replica, {os.cpu_count()} cores shared",
                ["replicas", "wall s", "speed-up vs 1", "stacks applied with changes, per replica"], rows)


if __name__ == "__main__":
    main()
