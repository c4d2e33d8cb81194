"""Embedded AWS endpoint: start/stop cost (in-process and as a child process with the example tree
seeded) and per-request latency of the added operations against moto's own, through boto3.

The engines and tests start one endpoint per module or run; what matters is that starting is far
below a terraform run (~5 s) and that a request costs milliseconds, so that drift detection can
read hundreds of objects quickly. Run: `python -m benchmarks.bench_embedded_aws`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import best_of, print_table, write_results
from embedded_aws import EmbeddedAws, EmbeddedAwsProcess, InstanceGroup

CONFIG = Path(__file__).resolve().parent.parent / "config"
ACCOUNT = "111122223333"


def request_latency(fn: Callable[[], object], *, calls: int) -> dict[str, float]:
    fn()  # warm the service's Flask app and the client
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return {"median_ms": statistics.median(samples) * 1000, "p95_ms": samples[int(len(samples) * 0.95) - 1] * 1000}


def operations(aws: EmbeddedAws) -> dict[str, Callable[[], object]]:
    arn = aws.seed_hyperpod_cluster("bench", "bench-eks", account=ACCOUNT,
                                    instance_groups=[InstanceGroup("p5", "ml.p5.48xlarge", 8)])
    sagemaker, eks = aws.client("sagemaker", account=ACCOUNT), aws.client("eks", account=ACCOUNT)
    iam, budgets = aws.client("iam", account=ACCOUNT), aws.client("budgets", account=ACCOUNT)
    role = iam.create_role(RoleName="bench", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    eks.create_access_entry(clusterName="bench-eks", principalArn=role)
    budgets.create_budget(AccountId=ACCOUNT, Budget={"BudgetName": "bench", "BudgetType": "COST", "TimeUnit": "MONTHLY",
                                                     "BudgetLimit": {"Amount": "1", "Unit": "USD"}})
    quota = sagemaker.create_compute_quota(
        Name="bench", ClusterArn=arn, ComputeQuotaTarget={"TeamName": "bench"},
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 1}]})
    version = {"n": 1}

    def update_quota() -> object:
        result = sagemaker.update_compute_quota(ComputeQuotaId=quota["ComputeQuotaId"], TargetVersion=version["n"],
                                                Description=str(version["n"]))
        version["n"] += 1
        return result

    return {
        "iam GetRole (moto)": lambda: iam.get_role(RoleName="bench"),
        "sagemaker DescribeCluster": lambda: sagemaker.describe_cluster(ClusterName=arn),
        "sagemaker UpdateComputeQuota": update_quota,
        "sagemaker ListComputeQuotas": lambda: sagemaker.list_compute_quotas(ClusterArn=arn),
        "eks DescribeAccessEntry": lambda: eks.describe_access_entry(clusterName="bench-eks", principalArn=role),
        "budgets ListTagsForResource": lambda: budgets.list_tags_for_resource(
            ResourceARN=f"arn:aws:budgets::{ACCOUNT}:budget/bench"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="requests per operation")
    args = parser.parse_args()

    start_stop = best_of(lambda: EmbeddedAws().start().stop())

    def process_round_trip() -> None:
        with EmbeddedAwsProcess(seed_config=CONFIG):
            pass

    process_s = best_of(process_round_trip)
    with EmbeddedAws() as aws:
        latencies = {name: request_latency(fn, calls=args.calls) for name, fn in operations(aws).items()}

    print_table("embedded AWS endpoint: life cycle", ["what", "best of 3 (s)"],
                [["in-process start + stop", start_stop], ["child process: start, seed config/, stop", process_s]])
    print_table(f"request latency through boto3 ({args.calls} calls each)", ["operation", "median (ms)", "p95 (ms)"],
                [[name, v["median_ms"], v["p95_ms"]] for name, v in latencies.items()])
    payload: dict[str, Any] = {"start_stop_s": start_stop, "process_start_seed_stop_s": process_s,
                               "calls_per_operation": args.calls, "latency": latencies}
    write_results("embedded_aws", payload)


if __name__ == "__main__":
    main()
