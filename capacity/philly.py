"""Reader for the Microsoft Philly cluster trace (`cluster_job_log` of msr-fiddle/philly-traces,
ATC'19), so teams can replay a real multi-tenant GPU history against their quotas.

Mapping (Philly has neither instance types nor priorities): team = the job's virtual cluster
(`vc`), optionally renamed through `team_map`; GPUs = the GPUs of the first scheduling attempt;
duration = the summed run time of all attempts (the work the job did); submit = seconds after the
earliest `submitted_time`. Jobs without a complete attempt or without GPUs are skipped and counted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from capacity.spec import InstanceTypeName, Job, JobId, TeamName
from capacity.trace import TraceError

PHILLY_TIME = "%Y-%m-%d %H:%M:%S"


class PhillyMachine(BaseModel):
    model_config = ConfigDict(extra="ignore")
    ip: str | None = None
    gpus: list[str] = []


class PhillyAttempt(BaseModel):
    model_config = ConfigDict(extra="ignore")
    start_time: str | None = None
    end_time: str | None = None
    detail: list[PhillyMachine] = []


class PhillyJob(BaseModel):
    model_config = ConfigDict(extra="ignore")
    jobid: str
    vc: str
    submitted_time: str | None = None
    status: str | None = None
    user: str | None = None
    attempts: list[PhillyAttempt] = []


@dataclass(frozen=True)
class PhillyImport:
    jobs: list[Job]
    skipped: dict[str, int] = field(default_factory=dict)
    """Jobs left out, by reason."""


def read_philly(path: str | os.PathLike[str], *, instance_type: str, priority: str,
                team_map: Mapping[str, str] | None = None) -> PhillyImport:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{path}: cannot read the Philly trace ({exc})") from exc
    return parse_philly(text, source=os.fspath(path), instance_type=instance_type, priority=priority,
                        team_map=team_map or {})


def parse_philly(text: str, *, source: str, instance_type: str, priority: str,
                 team_map: Mapping[str, str]) -> PhillyImport:
    """Philly jobs from the whole-file JSON list the trace ships, or from one object per line."""
    records = _records(text, source)
    parsed: list[tuple[datetime, PhillyJob]] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for n, raw in enumerate(records, start=1):
        try:
            job = PhillyJob.model_validate(raw)
        except ValidationError as exc:
            raise TraceError(f"{source}: job #{n} does not follow the Philly schema: "
                             f"{exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc
        submitted = _time(job.submitted_time)
        if submitted is None:
            skip("no submitted_time")
            continue
        parsed.append((submitted, job))
    if not parsed:
        return PhillyImport(jobs=[], skipped=skipped)
    origin = min(t for t, _ in parsed)
    jobs: list[Job] = []
    for submitted, job in parsed:
        gpus = next((sum(len(m.gpus) for m in a.detail) for a in job.attempts if a.detail), 0)
        work = _work_seconds(job)
        if not job.attempts:
            skip("no scheduling attempt")
        elif gpus <= 0:
            skip("no GPUs recorded")
        elif work <= 0:
            skip("no complete attempt")
        else:
            jobs.append(Job(id=JobId(job.jobid), submit=int((submitted - origin).total_seconds()),
                            team=TeamName(team_map.get(job.vc, job.vc)), instance_type=InstanceTypeName(instance_type),
                            gpus=gpus, duration=work, priority=priority))
    return PhillyImport(jobs=jobs, skipped=dict(sorted(skipped.items())))


def _records(text: str, source: str) -> list[Any]:
    stripped = text.lstrip()
    try:
        if stripped.startswith("["):
            value = json.loads(stripped)
            if isinstance(value, list):
                return value
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise TraceError(f"{source}:{exc.lineno}: not a Philly cluster_job_log (invalid JSON: {exc.msg})") from exc


def _time(value: str | None) -> datetime | None:
    if not value or value == "None":
        return None
    try:
        return datetime.strptime(value, PHILLY_TIME).replace(tzinfo=UTC)
    except ValueError:
        return None


def _work_seconds(job: PhillyJob) -> int:
    total = 0
    for attempt in job.attempts:
        start, end = _time(attempt.start_time), _time(attempt.end_time)
        if start is not None and end is not None and end > start:
            total += int((end - start).total_seconds())
    return total
