"""The job-trace format: one job per JSON line (or CSV row) with its submit time (seconds since
the start of the trace), team, instance type, GPUs, duration (seconds) and priority class, plus
an optional id, cluster and pods (on a MIG partition resource, the job's pods, each asking for
gpus / pods slices on one instance; 1 unless given). Records are checked with pydantic at this boundary; every problem
names the file and line."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capacity.spec import InstanceTypeName, Job, JobId, TeamName

TraceFormat = Literal["jsonl", "csv"]
COLUMNS = ("id", "submit", "team", "instance_type", "gpus", "duration", "priority", "cluster", "pods")
REQUIRED = ("submit", "team", "instance_type", "gpus", "duration", "priority")
MAX_REPORTED = 20


class TraceError(Exception):
    """A trace file that cannot be read, with every problem found (file:line: why)."""


class TraceRecord(BaseModel):
    """One job as it is written in a trace file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(default=None, min_length=1, max_length=256)
    submit: int = Field(ge=0, description="seconds since the start of the trace")
    team: str = Field(min_length=1, max_length=256)
    instance_type: str = Field(min_length=1, max_length=64)
    gpus: int = Field(ge=1, le=1_000_000)
    duration: int = Field(ge=1, description="seconds of work when never interrupted")
    priority: str = Field(min_length=1, max_length=256)
    cluster: str | None = Field(default=None, min_length=1, max_length=256)
    pods: int = Field(default=1, ge=1, le=1_000_000, description="pods of a job on MIG partitions")

    def job(self, default_id: str) -> Job:
        return Job(id=JobId(self.id or default_id), submit=self.submit, team=TeamName(self.team),
                   instance_type=InstanceTypeName(self.instance_type), gpus=self.gpus, duration=self.duration,
                   priority=self.priority, cluster=self.cluster, pods=self.pods)


def detect_format(path: str | os.PathLike[str]) -> TraceFormat:
    return "csv" if Path(path).suffix.lower() == ".csv" else "jsonl"


def read_trace(path: str | os.PathLike[str], *, fmt: TraceFormat | None = None) -> list[Job]:
    """Every job of the trace file at `path`, or TraceError listing what is wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{path}: cannot read the trace ({exc})") from exc
    return parse_trace(text, source=os.fspath(path), fmt=fmt or detect_format(path))


def parse_trace(text: str, *, source: str, fmt: TraceFormat) -> list[Job]:
    rows = _jsonl_rows(text) if fmt == "jsonl" else _csv_rows(text, source)
    jobs: list[Job] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        if isinstance(row, str):
            errors.append(f"{source}:{line}: {row}")
        else:
            try:
                job = TraceRecord.model_validate(row).job(default_id=f"line-{line}")
            except ValidationError as exc:
                errors.append(f"{source}:{line}: " + "; ".join(_describe(e) for e in exc.errors()))
            else:
                if job.id in seen:
                    errors.append(f"{source}:{line}: job id '{job.id}' was already used on line {seen[job.id]}")
                seen[job.id] = line
                jobs.append(job)
        if len(errors) >= MAX_REPORTED:
            errors.append("(stopped after 20 problems)")
            break
    if errors:
        raise TraceError("the trace has problems:\n  " + "\n  ".join(errors) +
                         "\n  each job needs: " + ", ".join(REQUIRED) + " (times in whole seconds)")
    return jobs


def _describe(error: Any) -> str:
    where = ".".join(str(p) for p in error.get("loc", ())) or "record"
    return f"{where}: {error.get('msg', 'invalid')}"


def _jsonl_rows(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            yield line, f"not valid JSON ({exc.msg} at column {exc.colno})"
            continue
        yield line, value if isinstance(value, dict) else "each line must be a JSON object"


def _csv_rows(text: str, source: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        yield 1, f"the CSV header lacks column(s) {', '.join(missing)}; expected {','.join(COLUMNS)}"
        return
    for row in reader:
        clean = {k: v for k, v in row.items() if k is not None and v not in (None, "")}
        yield reader.line_num, clean


def write_trace(path: str | os.PathLike[str], jobs: Iterable[Job], *, fmt: TraceFormat | None = None) -> None:
    Path(path).write_text(format_trace(jobs, fmt=fmt or detect_format(path)), encoding="utf-8")


def format_trace(jobs: Iterable[Job], *, fmt: TraceFormat) -> str:
    records = [_record(job) for job in jobs]
    if fmt == "jsonl":
        return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def _record(job: Job) -> dict[str, Any]:
    record: dict[str, Any] = {"id": job.id, "submit": job.submit, "team": job.team,
                              "instance_type": job.instance_type, "gpus": job.gpus, "duration": job.duration,
                              "priority": job.priority}
    if job.cluster is not None:
        record["cluster"] = job.cluster
    if job.pods != 1:
        record["pods"] = job.pods
    return record


def teams_of(jobs: Sequence[Job]) -> list[str]:
    return sorted({job.team for job in jobs})
