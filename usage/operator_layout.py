"""The raw data of AWS's usage-report operator (awslabs/sagemaker-hyperpod-usage-report), read as its
own deployment declares it: from the S3 bucket its CloudFormation stack makes, or from a local
copy of that bucket with the same keys. Typed records out; what they mean is `usage.operator_import`'s.

Sources (read when this was written; the repository at e71f39a, 2025):

- [OP-CFN] `cloudformation/usage-report.yaml`: the Glue tables over the raw data. Each is an
  EXTERNAL_TABLE, `classification: parquet`, `parquet.compression: SNAPPY`, located at
  `s3://<bucket>/raw/<table>/`, with these columns and partition keys:
  `workload` (workload_name string, timestamp timestamp, namespace string, resource_version string,
  team string, status string, task_priority_class string, instance_type string, CPU double, GPU
  double, neuron_core double, admitted boolean, finished boolean; partitions year, month, day,
  hour, cluster); `heartdub` (timestamp timestamp, cluster string; partitions year, month, day,
  hour); `clusterqueue` (per team and instance type: gpu/cpu/neuron_core total and borrowed) and
  `pod` (per pod: owner, job_type, assigned_node, CPU, GPU, neuron_core, priority_class), both
  partitioned like `workload`. Its daily Lambda runs `MSCK REPAIR TABLE` on the four, which finds
  only Hive-style partitions, so the keys are `raw/<table>/year=YYYY/month=MM/day=DD/hour=HH/
  cluster=<name>/<file>` (no `cluster=` level for `heartdub`), in that order.
- [OP-README] README.md: "Raw job usage data is stored in the S3 bucket path
  `$USAGE_REPORT_S3_BUCKET/raw/`"; the operator watches clusterqueues, workloads, namespaces and
  pods; its `clusterName` is the HyperPod cluster's name (the `cluster` partition).
- [OP-GEN] `report_generation/.../report_generator.py` `_find_missing_period` with
  `utils/query_builder.py` `build_fetch_heartdub_query`: the report's "Missing data periods" are
  the hours (year, month, day, hour of `heartdub`, per cluster) without a heartdub row.
- [AWS-DOC] https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-usage-reporting.html
  and its sub-page on the reports' content (`sagemaker-hyperpod-usage-reporting-content.html`):
  reports in UTC, "Missing data periods: gaps in data collection due to cluster downtime or
  monitoring issues". They document the reports, not the raw objects' layout or row format.

Assumptions where the sources are silent (the operator's code is not published, only its image):
partition values and timestamps are UTC; `resource_version` is the Kubernetes resourceVersion as
a decimal integer (the operator's queries `CAST(resource_version AS bigint)`); a file whose name
begins with `_` or `.` is not data (Athena, like Hive, skips such files).

A record the import cannot read is an `Unreadable` naming its object (and 1-based row); objects
of the tables not read are counted in `RawData.not_read`.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import duckdb

WORKLOAD, HEARTBEAT = "workload", "heartdub"
NOT_READ = {
    "clusterqueue": "per team and instance type totals (borrowed included): hypergov derives own and borrowed "
                    "from the tree's guarantees (SEMANTICS.md A1, A2), from the workloads' own rows",
    "pod": "per pod: a Kueue workload's pods are counted through its workload rows (SEMANTICS.md I1); pods "
           "outside Kueue are not hypergov's to account",
}
_PARTITIONS = re.compile(r"year=(?P<year>\d{4})/month=(?P<month>\d{1,2})/day=(?P<day>\d{1,2})/hour=(?P<hour>\d{1,2})"
                         r"(?:/cluster=(?P<cluster>[^/]+))?/(?P<file>[^/]+)")
_WORKLOAD_COLUMNS = ("workload_name", "timestamp", "namespace", "resource_version", "status",
                     "task_priority_class", "instance_type", "cpu", "gpu", "neuron_core", "admitted", "finished")
_HEARTBEAT_COLUMNS = ("timestamp", "cluster")


@dataclass(frozen=True)
class Location:
    """Where a record is: its object (s3://bucket/key, or a path) and its 1-based row (None: the object)."""

    object: str
    row: int | None = None

    def __str__(self) -> str:
        return self.object if self.row is None else f"{self.object} row {self.row}"


@dataclass(frozen=True)
class WorkloadRecord:
    """One row of `raw/workload`: a Kueue workload's state at `timestamp` (epoch seconds) on one
    instance type, with the amounts it holds there (vCPUs, GPUs, NeuronCores, as written)."""

    at: Location
    cluster: str  # the `cluster` partition: the operator's clusterName
    workload_name: str
    timestamp: int
    namespace: str
    resource_version: int
    status: str
    priority_class: str | None
    instance_type: str | None
    cpu: float | None
    gpu: float | None
    neuron_core: float | None
    admitted: bool
    finished: bool


@dataclass(frozen=True)
class Heartbeat:
    """One row of `raw/heartdub`: the operator of `cluster` was running in the hour starting at `hour`."""

    at: Location
    cluster: str
    hour: int


@dataclass(frozen=True)
class Unreadable:
    at: Location
    problem: str


@dataclass
class RawData:
    workloads: list[WorkloadRecord] = field(default_factory=list)
    heartbeats: list[Heartbeat] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    not_read: dict[str, int] = field(default_factory=dict)  # table -> objects left unread
    objects: int = 0  # of the tables read, readable or not


class RawSource(Protocol):
    def keys(self, table: str) -> Iterator[str]:
        """The objects of `table`, as paths relative to its folder (`raw/<table>/`), in order."""
        ...

    def location(self, table: str, key: str) -> str:
        ...

    def fetched(self, table: str, key: str) -> AbstractContextManager[Path]:
        """The object as a local file, for as long as the context lasts."""
        ...


class DirectorySource:
    """A local copy of the bucket: `root` holds `raw/` (or is `raw/` itself)."""

    def __init__(self, root: Path) -> None:
        self.raw = root if root.name == "raw" else root / "raw"

    def keys(self, table: str) -> Iterator[str]:
        folder = self.raw / table
        if not folder.is_dir():
            return
        found = [str(Path(top, name).relative_to(folder)).replace(os.sep, "/")
                 for top, _, names in os.walk(folder) for name in names]
        yield from sorted(found)

    def location(self, table: str, key: str) -> str:
        return str(self.raw / table / key)

    @contextmanager
    def fetched(self, table: str, key: str) -> Iterator[Path]:
        yield self.raw / table / key


class S3Source:
    """The bucket itself, through a boto3 S3 client the caller made: `prefix` holds `raw/` (or is it)."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client, self.bucket = client, bucket
        prefix = prefix.strip("/")
        self.raw = (f"{prefix}/" if prefix.rsplit("/", 1)[-1] == "raw" else f"{prefix}/raw/") if prefix else "raw/"

    @classmethod
    def of_url(cls, client: Any, url: str) -> S3Source:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        if not url.startswith("s3://") or not bucket:
            raise ValueError(f"'{url}' is not s3://BUCKET[/PREFIX]")
        return cls(client, bucket, prefix)

    def keys(self, table: str) -> Iterator[str]:
        folder = f"{self.raw}{table}/"
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=folder):
            for item in page.get("Contents", []):
                yield item["Key"][len(folder):]

    def location(self, table: str, key: str) -> str:
        return f"s3://{self.bucket}/{self.raw}{table}/{key}"

    @contextmanager
    def fetched(self, table: str, key: str) -> Iterator[Path]:
        body = self.client.get_object(Bucket=self.bucket, Key=f"{self.raw}{table}/{key}")["Body"]
        with tempfile.TemporaryDirectory(prefix="hypergov-import-") as folder:
            path = Path(folder) / "object.parquet"
            with open(path, "wb") as file:
                for chunk in iter(lambda: body.read(1 << 20), b""):
                    file.write(chunk)
            yield path


def read_raw(source: RawSource) -> RawData:
    """Every workload and heartbeat row of the source; unreadable objects and rows named."""
    raw = RawData()
    with duckdb.connect() as con:
        for table in (WORKLOAD, HEARTBEAT):
            for key in _data_keys(source, table):
                raw.objects += 1
                _read_object(con, source, table, key, raw)
    for table in NOT_READ:
        raw.not_read[table] = sum(1 for _ in _data_keys(source, table))
    return raw


def _data_keys(source: RawSource, table: str) -> Iterator[str]:
    for key in source.keys(table):
        name = key.rsplit("/", 1)[-1]
        if name and not name.startswith(("_", ".")):  # folder markers end in "/"
            yield key


def _read_object(con: duckdb.DuckDBPyConnection, source: RawSource, table: str, key: str, raw: RawData) -> None:
    where = Location(source.location(table, key))
    found = _PARTITIONS.fullmatch(key)
    if found is None or (found["cluster"] is None) != (table == HEARTBEAT):
        levels = "year=/month=/day=/hour=/" + ("" if table == HEARTBEAT else "cluster=/")
        raw.unreadable.append(Unreadable(where, f"not in the operator's layout raw/{table}/{levels}<file>"))
        return
    try:
        hour = int(datetime(int(found["year"]), int(found["month"]), int(found["day"]), int(found["hour"]),
                            tzinfo=UTC).timestamp())
    except ValueError as error:
        raw.unreadable.append(Unreadable(where, f"partition is no UTC hour: {error}"))
        return
    try:
        with source.fetched(table, key) as path:
            result = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
            names = [d[0].lower() for d in result.description]
            rows = result.fetchall()
    except duckdb.Error as error:
        raw.unreadable.append(Unreadable(where, f"not a Parquet file the import can read: {error}"))
        return
    needed = _HEARTBEAT_COLUMNS if table == HEARTBEAT else _WORKLOAD_COLUMNS
    missing = [c for c in needed if c not in names]
    if missing:
        raw.unreadable.append(Unreadable(where, f"lacks the column(s) {', '.join(missing)} of the operator's "
                                                f"{table} table"))
        return
    for number, values in enumerate(rows, start=1):
        row = dict(zip(names, values, strict=True))
        at = Location(where.object, number)
        try:
            if table == HEARTBEAT:
                raw.heartbeats.append(Heartbeat(at, _text(row, "cluster"), hour))
            else:
                raw.workloads.append(_workload(row, at, found["cluster"]))
        except ValueError as error:
            raw.unreadable.append(Unreadable(at, str(error)))


def _workload(row: Mapping[str, Any], at: Location, cluster: str) -> WorkloadRecord:
    version = _text(row, "resource_version")
    if not version.isdigit():
        raise ValueError(f"resource_version {version!r} is not a Kubernetes resourceVersion (a decimal integer)")
    return WorkloadRecord(
        at=at, cluster=cluster, workload_name=_text(row, "workload_name"), timestamp=_epoch(row["timestamp"]),
        namespace=_text(row, "namespace"), resource_version=int(version), status=str(row["status"] or ""),
        priority_class=_optional_text(row, "task_priority_class"),
        instance_type=_optional_text(row, "instance_type"), cpu=_amount(row, "cpu"), gpu=_amount(row, "gpu"),
        neuron_core=_amount(row, "neuron_core"),
        # A null flag is false, as the operator's own queries read it (`WHERE admitted = true`, `bool_or`).
        admitted=_flag(row, "admitted"), finished=_flag(row, "finished"))


def _epoch(value: object) -> int:
    if not isinstance(value, datetime):
        raise ValueError(f"timestamp {value!r} is not a timestamp")
    moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)  # the operator writes UTC
    return math.floor(moment.timestamp())


def _text(row: Mapping[str, Any], column: str) -> str:
    value = row[column]
    if not isinstance(value, str) or not value:
        raise ValueError(f"{column} {value!r} is not a name")
    return value


def _optional_text(row: Mapping[str, Any], column: str) -> str | None:
    value = row[column]
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{column} {value!r} is not text")
    return value or None


def _amount(row: Mapping[str, Any], column: str) -> float | None:
    value = row[column]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{column} {value!r} is not an amount")
    return float(value)


def _flag(row: Mapping[str, Any], column: str) -> bool:
    value = row[column]
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{column} {value!r} is not a boolean")
    return bool(value)
