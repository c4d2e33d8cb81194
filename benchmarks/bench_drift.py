"""The live drift scan of a whole synthetic org (1,000 projects on 20 HyperPod task-governance
clusters by default) against the embedded endpoint, vs the per-stack terraform refresh
(`hypergov drift --deep`) measured on a sample of applied stacks and extrapolated.

The org's live state is created directly with boto3 from its desired state (`benchmarks.live_seed`:
hours of terraform applies otherwise), on the embedded endpoint run as a separate server process
as `make demo` runs it, seeded with the org's accounts, OU and clusters. Then: the scan of the
untouched org must report nothing (anything it reports is a false positive, listed); a few
drifts are injected out of band (`benchmarks.drift_inject`) and the next scan must report each,
as its kind, and nothing else. Timed: graph capture cold (no cache) and warm (the cache reused),
the seeding, each scan with its API calls (in total, per project, per service) and where its time
goes (the endpoint process's CPU, this process's CPU, the round trips per operation). The
baseline applies `--sample` project stacks through the terraform engine on a second endpoint and
times their refresh-only plans (`refresh_many`, `terraform.parallelism` at a time); extrapolated
to every stack that has terraform state at the same parallelism.

Goal (issue 12): the whole org scanned in under 60 s on this 2-core machine, at least 50x faster
than the per-stack refresh, every injected drift found.

Run: `python -m benchmarks.bench_drift [--projects 1000] [--clusters 20] [--sample 4] [--quick]`.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from botocore.config import Config

from benchmarks.common import org_size_arguments, print_table, quick_sizes, write_results
from benchmarks.drift_inject import check_found, inject_drifts
from benchmarks.drift_probe import ScanProbe, cpu_seconds_of
from benchmarks.live_seed import client_config, seed_live_state
from benchmarks.synthetic import generate_org
from embedded_aws import DEFAULT_ACCOUNT, EmbeddedAwsProcess
from engines.live.hyperpod import governed_clusters
from engines.live.items import LiveScan
from engines.live.runner import DEFAULT_CONCURRENCY, ScanContext
from engines.live.scan import SERVICES, scan_context, scan_with
from engines.settings import Settings, load_settings
from hypergov.model.tree import GovernanceTree
from hypergov.tree_files import write_tree_dir
from hypergov.validate import validate_files

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-west-2"}
GOAL_SCAN_S = 60.0
GOAL_SPEEDUP = 50.0
REFRESH_REPEAT = 2
SCAN_CONFIG = Config(max_pool_connections=32, retries={"mode": "standard", "total_max_attempts": 3})


def org_tree(projects: int, clusters: int, seed: int, root: Path) -> GovernanceTree:
    """The synthetic org, every cluster with HyperPod task governance, written under `root` too
    (the endpoint process seeds its clusters from the directory)."""
    files = generate_org(projects=projects, clusters=clusters, seed=seed, plain_eks_every=None)
    write_tree_dir(files, root)
    report = validate_files(files)
    if not report.ok:
        raise SystemExit(f"the synthetic org does not validate: {report.problems[:5]}")
    return report.tree


def timed_context(tree: GovernanceTree, cache_dir: Path) -> tuple[ScanContext, float]:
    start = time.perf_counter()
    context = scan_context(tree, cache_dir=cache_dir, caller_account=DEFAULT_ACCOUNT)
    return context, time.perf_counter() - start


def scanned_services(context: ScanContext) -> frozenset[str]:
    """The boto3 services the registered scanners read (the others' drifts cannot be found yet)."""
    return frozenset(u.service for service in SERVICES for u in service(context))


def measured_scan(context: ScanContext, endpoint: EmbeddedAwsProcess,
                  concurrency: int) -> tuple[LiveScan, dict[str, Any]]:
    """One scan of the whole org, with where its time went."""
    probe = ScanProbe()
    client_for = probe.wrap(lambda service, account, region: endpoint.client(
        service, account=account or DEFAULT_ACCOUNT, region=region, config=SCAN_CONFIG))
    assert endpoint.pid is not None
    server_cpu, client_cpu, start = cpu_seconds_of(endpoint.pid), time.process_time(), time.perf_counter()
    scan = scan_with(context, client_for, concurrency=concurrency)
    wall = time.perf_counter() - start
    where = {"wall_s": round(wall, 3), "endpoint_cpu_s": round(cpu_seconds_of(endpoint.pid) - server_cpu, 3),
             "client_cpu_s": round(time.process_time() - client_cpu, 3), **probe.summary()}
    return scan, where


def sampled_projects(stacks: Sequence[str], sample: int) -> list[str]:
    """`sample` project stacks spread evenly over `stacks` (the baseline's terraform sample)."""
    projects = [s for s in stacks if s.startswith("project-")]
    return [projects[i * len(projects) // sample] for i in range(sample)]


def baseline_settings(endpoint_url: str, state_dir: Path) -> Settings:
    """The terraform engine's settings for a baseline on the embedded endpoint at `endpoint_url`."""
    return load_settings(environ={"HYPERGOV_SETTINGS": "/nonexistent"}, overrides={
        "engine": "terraform", "aws.endpoint_url": endpoint_url, "aws.max_retries": 3, "state_dir": str(state_dir)})


def refresh_baseline(tree: GovernanceTree, config: Path, context: ScanContext, sample: int,
                     state_dir: Path) -> dict[str, Any]:
    """Apply `sample` project stacks through the terraform engine on a fresh endpoint, then time
    their refresh-only plans; extrapolated to every stack with terraform state."""
    from engines.factory import terraform_engine
    from engines.plan import Failure, Plan, StackName

    with_state = sorted({o.stack for o in context.desired})  # stacks whose objects terraform holds
    chosen = [StackName(s) for s in sampled_projects(with_state, sample)]
    os.environ.update(CREDENTIALS)
    with EmbeddedAwsProcess(seed_config=config) as endpoint:
        settings = baseline_settings(endpoint.endpoint_url, state_dir)
        engine = terraform_engine(settings, tree, environ={**os.environ, **CREDENTIALS})
        start = time.perf_counter()
        planned = engine.plan_many(chosen)
        failed = {s: o.message for s, o in planned.items() if isinstance(o, Failure)}
        results = engine.apply_many([p for p in planned.values() if isinstance(p, Plan)])
        failed.update({r.stack: r.failure or "" for r in results if not r.ok})
        apply_s = time.perf_counter() - start
        if failed:
            return {"stacks": chosen, "error": failed}
        walls = []
        for _ in range(REFRESH_REPEAT):  # the best of a few: the least disturbed by other load
            start = time.perf_counter()
            refreshed = engine.refresh_many(chosen)
            walls.append(round(time.perf_counter() - start, 2))
        refresh_s = min(walls)
    parallelism = settings.terraform.parallelism
    drifted = sorted(s for s, o in refreshed.items() if isinstance(o, Failure) or o.drifted)
    rounds = math.ceil(sample / parallelism)
    return {"stacks": chosen, "parallelism": parallelism, "apply_s": round(apply_s, 2),
            "refresh_s": refresh_s, "refresh_walls_s": walls, "refresh_per_round_s": round(refresh_s / rounds, 2),
            "drifted_or_failed": drifted, "stacks_with_state": len(with_state),
            "extrapolated_s": round(math.ceil(len(with_state) / parallelism) * refresh_s / rounds, 1)}


def run(*, projects: int, clusters: int, seed: int, sample: int, concurrency: int, baseline: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-drift-") as tmp:
        root = Path(tmp)
        tree = org_tree(projects, clusters, seed, root / "config")
        context, cold_s = timed_context(tree, root / "graphs")
        context, warm_s = timed_context(tree, root / "graphs")
        governed = governed_clusters(tree, context.specs)
        start = time.perf_counter()
        with EmbeddedAwsProcess(seed_config=root / "config") as endpoint:
            endpoint_start_s = time.perf_counter() - start
            seed_client = client_config(8)

            def client_for(service: str, account: str, region: str) -> Any:
                return endpoint.client(service, account=account, region=region, config=seed_client)

            seeded = seed_live_state(context.desired, governed, client_for, management_account=DEFAULT_ACCOUNT,
                                     lookups=context.lookups)
            clean, clean_where = measured_scan(context, endpoint, concurrency)
            drifts = inject_drifts(context.desired, governed, client_for, management_account=DEFAULT_ACCOUNT)
            drifted, where = measured_scan(context, endpoint, concurrency)
        scanned = scanned_services(context)
        check = check_found(drifts, drifted.items, scanned)
        result: dict[str, Any] = {
            "projects": projects, "clusters": clusters, "task_governance_clusters": len(governed),
            "stacks": len(context.specs), "desired_objects": len(context.desired),
            "hyperpod_objects": sum(1 + len(c.quotas) for c in governed), "scanned_services": sorted(scanned),
            "graphs_cold_s": round(cold_s, 2), "graphs_warm_s": round(warm_s, 2),
            "endpoint_start_s": round(endpoint_start_s, 2),
            "seed": {"seconds": seeded.seconds, "objects": seeded.total, "waves_s": list(seeded.waves_s),
                     "created": dict(seeded.created)},
            "clean_scan": {"seconds": clean_where["wall_s"], "api_calls": clean.api_calls,
                           "complete": clean.complete, "items": len(clean.items),
                           "false_positives": [i.as_dict() for i in clean.items[:20]],
                           "failures": [f"{f.what}: {f.failure.message}" for f in clean.failures[:10]],
                           "where": clean_where},
            "scan": {"seconds": where["wall_s"], "api_calls": drifted.api_calls, "complete": drifted.complete,
                     "api_calls_per_project": round(drifted.api_calls / projects, 2),
                     "calls_by_service": dict(drifted.calls_by_service), "items": [i.as_dict() for i in drifted.items],
                     "where": where},
            "drifts": check.found, "unexpected": [i.as_dict() for i in check.unexpected[:20]],
            "drifts_ok": check.ok and clean.complete and not clean.items,
        }
        if baseline:
            result["refresh"] = refresh_baseline(tree, root / "config", context, sample, root / "state")
    return result


def report(r: dict[str, Any]) -> None:
    print_table(f"live drift scan: {r['projects']} projects, {r['clusters']} clusters "
                f"({r['task_governance_clusters']} with task governance), {r['stacks']} stacks, "
                f"{r['desired_objects']} desired objects + {r['hyperpod_objects']} HyperPod objects",
                ["phase", "s", "API calls", "items"],
                [["graph capture, cold (no cache)", r["graphs_cold_s"], "", ""],
                 ["graph capture, warm (cache reused)", r["graphs_warm_s"], "", ""],
                 ["endpoint process start + org/cluster seeding", r["endpoint_start_s"], "", ""],
                 [f"live state seeded with boto3 ({r['seed']['objects']} objects)", r["seed"]["seconds"], "", ""],
                 ["scan of the untouched org", r["clean_scan"]["seconds"], r["clean_scan"]["api_calls"],
                  r["clean_scan"]["items"]],
                 ["scan after the injected drifts", r["scan"]["seconds"], r["scan"]["api_calls"],
                  len(r["scan"]["items"])]])
    where = r["scan"]["where"]
    print_table("where the scan's time goes", ["measure", "value"],
                [["wall s", where["wall_s"]], ["endpoint process CPU s", where["endpoint_cpu_s"]],
                 ["this process CPU s (client side)", where["client_cpu_s"]],
                 ["round trips summed over threads s", where["round_trip_s"]],
                 ["API calls per project", r["scan"]["api_calls_per_project"]]]
                + [[f"calls: {s}", n] for s, n in r["scan"]["calls_by_service"].items()]
                + [[f"slowest op: {op}", f"{v['calls']} calls, {v['mean_ms']} ms mean"]
                   for op, v in list(where["operations"].items())[:6]])
    print_table("injected drifts", ["drift", "found"],
                [[what, {True: "yes", False: "MISSED", None: "not scanned (no scanner yet)"}[found]]
                 for what, found in r["drifts"].items()])
    for item in r["unexpected"] + r["clean_scan"]["false_positives"]:
        print(f"  unexpected: {item['kind']} {item['stack']} {item['address']} {item['attributes']}")
    for failure in r["clean_scan"]["failures"]:
        print(f"  scan failure: {failure}")
    refresh = r.get("refresh")
    scan_s = max(r["clean_scan"]["seconds"], r["scan"]["seconds"])  # the first also loads the SDK, as a CLI run does
    if refresh and "error" not in refresh:
        ratio = refresh["extrapolated_s"] / scan_s
        r["speedup"] = round(ratio, 1)
        print_table(f"per-stack terraform refresh (sample of {len(refresh['stacks'])} applied project stacks, "
                    f"parallelism {refresh['parallelism']})", ["measure", "value"],
                    [["refresh of the sample s", refresh["refresh_s"]],
                     ["per round of parallel stacks s", refresh["refresh_per_round_s"]],
                     [f"extrapolated to {refresh['stacks_with_state']} stacks s", refresh["extrapolated_s"]],
                     ["live scan s (the slower of the two)", scan_s], ["speed-up", f"{ratio:.0f}x"]])
    elif refresh:
        print(f"\nbaseline failed: {refresh['error']}")
    met = scan_s < GOAL_SCAN_S and r.get("speedup", 0) >= GOAL_SPEEDUP and r["drifts_ok"]
    r["goal_met"] = met if "speedup" in r else None
    verdict = "met" if met else "NOT met" if "speedup" in r or not r["drifts_ok"] else "not measured (no baseline)"
    print(f"\ngoal (scan < {GOAL_SCAN_S:.0f} s, >= {GOAL_SPEEDUP:.0f}x the refresh, every drift found, nothing "
          f"else): {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    org_size_arguments(parser, sample_help="project stacks applied and refreshed for the baseline")
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="scan units per service at once")
    parser.add_argument("--no-baseline", action="store_true", help="skip the terraform refresh baseline")
    args = quick_sizes(parser.parse_args())
    result = run(projects=args.projects, clusters=args.clusters, seed=args.seed, sample=args.sample,
                 concurrency=args.concurrency, baseline=not args.no_baseline)
    report(result)
    write_results("drift", {"goal": {"scan_s": GOAL_SCAN_S, "speedup": GOAL_SPEEDUP}, "result": result})


if __name__ == "__main__":
    main()
