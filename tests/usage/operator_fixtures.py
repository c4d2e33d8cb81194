"""The usage-report operator's raw data as the operator leaves it in its bucket, for the import's
tests: Parquet files (Snappy) with the columns of the Glue tables its CloudFormation template
declares, under the Hive-partitioned keys `raw/<table>/year=/month=/day=/hour=/cluster=/<file>`
that its Lambda's `MSCK REPAIR TABLE` reads (awslabs/sagemaker-hyperpod-usage-report,
`cloudformation/usage-report.yaml`; `usage.operator_layout` says more).

The example (`example_rows`), one day on the operator's cluster `gpu-west-op` (hypergov's
gpu-west): vision holds 64 GPUs and 95.5 vCPUs of ml.p5.48xlarge from 09:30 (the operator writes
the same state again at 12:05, after it was down in the 11:00 hour), nlp holds 128 GPUs from 10:00
(one stale row of an older resourceVersion at the same instant) until its eviction at 10:45, and a
shell in the `default` namespace holds a GPU from 10:10. Heartbeats in the hours 09, 10 and 12:
the 11:00 hour is a missing data period.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

OPERATOR_CLUSTER = "gpu-west-op"
DAY = datetime(2025, 4, 16, tzinfo=UTC)
P5 = "ml.p5.48xlarge"

WORKLOAD_COLUMNS = (("workload_name", "VARCHAR"), ("timestamp", "TIMESTAMP"), ("namespace", "VARCHAR"),
                    ("resource_version", "VARCHAR"), ("team", "VARCHAR"), ("status", "VARCHAR"),
                    ("task_priority_class", "VARCHAR"), ("instance_type", "VARCHAR"), ("CPU", "DOUBLE"),
                    ("GPU", "DOUBLE"), ("neuron_core", "DOUBLE"), ("admitted", "BOOLEAN"), ("finished", "BOOLEAN"))
HEARTBEAT_COLUMNS = (("timestamp", "TIMESTAMP"), ("cluster", "VARCHAR"))
CLUSTERQUEUE_COLUMNS = (("instance_type", "VARCHAR"), ("timestamp", "TIMESTAMP"), ("namespace", "VARCHAR"),
                        ("resource_version", "VARCHAR"), ("team", "VARCHAR"), ("gpu_total", "DOUBLE"),
                        ("gpu_borrowed", "DOUBLE"), ("cpu_total", "DOUBLE"), ("cpu_borrowed", "DOUBLE"),
                        ("neuron_core_total", "DOUBLE"), ("neuron_core_borrowed", "DOUBLE"))
POD_COLUMNS = (("pod", "VARCHAR"), ("timestamp", "TIMESTAMP"), ("namespace", "VARCHAR"),
               ("resource_version", "VARCHAR"), ("status", "VARCHAR"), ("owner", "VARCHAR"),
               ("instance_type", "VARCHAR"), ("job_type", "VARCHAR"), ("assigned_node", "VARCHAR"), ("CPU", "DOUBLE"),
               ("GPU", "DOUBLE"), ("neuron_core", "DOUBLE"), ("priority_class", "VARCHAR"))
FILE = "part-00000.snappy.parquet"


def at(hour: int, minute: int = 0) -> datetime:
    return DAY + timedelta(hours=hour, minutes=minute)


def seconds(hour: int, minute: int = 0) -> int:
    return int(at(hour, minute).timestamp())


def workload_row(name: str, team: str | None, moment: datetime, version: int, status: str, *, gpu: float = 0,
                 cpu: float = 0, neuron_core: float = 0, admitted: bool = True, finished: bool = False,
                 instance_type: str | None = P5, priority: str | None = "training-priority",
                 namespace: str | None = None) -> dict[str, Any]:
    """A row of the `workload` table (the team's namespace unless `namespace` is given)."""
    return {"workload_name": name, "timestamp": moment.replace(tzinfo=None), "namespace":
            namespace or f"hyperpod-ns-{team}", "resource_version": str(version), "team": team or "",
            "status": status, "task_priority_class": priority, "instance_type": instance_type, "CPU": cpu,
            "GPU": gpu, "neuron_core": neuron_core, "admitted": admitted, "finished": finished}


def example_rows() -> list[dict[str, Any]]:
    return [
        workload_row("vit-pretrain-7f2c", "vision", at(9, 30), 1001, "QuotaReserved-True", gpu=64, cpu=95.5),
        workload_row("vit-pretrain-7f2c", "vision", at(12, 5), 1650, "QuotaReserved-True", gpu=64, cpu=95.5),
        workload_row("llm-sft-91ab", "nlp", at(10), 1100, "QuotaReserved-True", gpu=128, admitted=False),
        workload_row("llm-sft-91ab", "nlp", at(10), 1105, "QuotaReserved-True", gpu=128),
        workload_row("llm-sft-91ab", "nlp", at(10, 45), 1300, "Evicted-True", gpu=128, admitted=False),
        workload_row("debug-shell", None, at(10, 10), 1200, "QuotaReserved-True", gpu=1, namespace="default"),
    ]


EXAMPLE_HOURS = (9, 10, 12)


def write_table(path: Path, columns: Sequence[tuple[str, str]], rows: Iterable[dict[str, Any]]) -> None:
    """One Parquet object, Snappy-compressed, with the table's columns and types."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect() as con:
        declared = ", ".join(f'"{name}" {kind}' for name, kind in columns)
        con.execute(f"CREATE TABLE t ({declared})")
        values = [[row[n] for n, _ in columns] for row in rows]
        if values:
            con.executemany(f"INSERT INTO t VALUES ({', '.join('?' for _ in columns)})", values)
        con.execute(f"COPY t TO '{path}' (FORMAT PARQUET, COMPRESSION SNAPPY)")


def partition(root: Path, table: str, moment: datetime, cluster: str | None) -> Path:
    folder = root / "raw" / table / f"year={moment:%Y}/month={moment:%m}/day={moment:%d}/hour={moment:%H}"
    return folder / f"cluster={cluster}" if cluster is not None else folder


def write_workloads(root: Path, rows: Iterable[dict[str, Any]], cluster: str = OPERATOR_CLUSTER) -> None:
    """The rows in the hour partitions of their timestamps, one object per hour."""
    by_hour: dict[datetime, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_hour[row["timestamp"].replace(minute=0, second=0, microsecond=0, tzinfo=UTC)].append(row)
    for hour, hour_rows in by_hour.items():
        write_table(partition(root, "workload", hour, cluster) / FILE, WORKLOAD_COLUMNS, hour_rows)


def write_heartbeats(root: Path, hours: Iterable[int], cluster: str = OPERATOR_CLUSTER) -> None:
    """Heartbeats at :00 and :30 of each hour (the `heartdub` table has no cluster partition)."""
    for hour in hours:
        rows = [{"timestamp": at(hour, minute).replace(tzinfo=None), "cluster": cluster} for minute in (0, 30)]
        write_table(partition(root, "heartdub", at(hour), None) / FILE, HEARTBEAT_COLUMNS, rows)


def write_example(root: Path) -> Path:
    """The example as the operator writes it, with a clusterqueue and a pod object beside it (not read)."""
    write_workloads(root, example_rows())
    write_heartbeats(root, EXAMPLE_HOURS)
    write_table(partition(root, "clusterqueue", at(10), OPERATOR_CLUSTER) / FILE, CLUSTERQUEUE_COLUMNS, [
        {"instance_type": P5, "timestamp": at(10).replace(tzinfo=None), "namespace": "hyperpod-ns-nlp",
         "resource_version": "1106", "team": "nlp", "gpu_total": 128.0, "gpu_borrowed": 32.0, "cpu_total": 0.0,
         "cpu_borrowed": 0.0, "neuron_core_total": 0.0, "neuron_core_borrowed": 0.0}])
    write_table(partition(root, "pod", at(10), OPERATOR_CLUSTER) / FILE, POD_COLUMNS, [
        {"pod": "llm-sft-91ab-worker-0", "timestamp": at(10).replace(tzinfo=None), "namespace": "hyperpod-ns-nlp",
         "resource_version": "1107", "status": "Running", "owner": "llm-sft-91ab", "instance_type": P5,
         "job_type": "PyTorchJob", "assigned_node": "hyperpod-i-0abc", "CPU": 0.0, "GPU": 128.0,
         "neuron_core": 0.0, "priority_class": "training-priority"}])
    return root


def upload(client: Any, bucket: str, root: Path, prefix: str = "") -> int:
    """Every object under `root` to the bucket, under the same keys (after `prefix`)."""
    count = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        client.put_object(Bucket=bucket, Key=prefix + path.relative_to(root).as_posix(), Body=path.read_bytes())
        count += 1
    return count
