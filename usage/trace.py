"""The org's real trace: the jobs the collector saw, as the capacity simulator's jobs, so that a
quota change is replayed on what the teams really ran (`hypergov capacity suggest`, and the
merge request's capacity impact once usage is collected).

One Workload is one job (R-rules, SEMANTICS.md "The collected trace"): submitted at its
`metadata.creationTimestamp` (else its first admission), of the accelerators its admission held
on one instance type (whole GPUs or Neuron devices; a Workload across instance types, or on MIG
partitions, is counted in `TraceFromStores.skipped` with why), running as long as its last
attempt (a preempted attempt's time is lost work, not work the job needed; an attempt still
running, or cut by its deletion, is a lower bound), at its priority class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from capacity.spec import InstanceTypeName, Job, JobId, TeamName
from usage.collector_state import ClosedAttempt
from usage.collector_store import CollectorStore
from usage.resources import UNITS, ResourceKind
from usage.spans import epoch_seconds
from usage.workloads import NotATeamWorkload, WorkloadError, parse_workload

ACCELERATORS = (ResourceKind.GPU, ResourceKind.NEURON_DEVICE)


@dataclass
class TraceFromStores:
    """Jobs (submit times in seconds since `origin`) and what could not be replayed, by reason."""

    origin: int
    jobs: list[Job] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def collected_trace(stores: Iterable[CollectorStore], *, since: int, until: int) -> TraceFromStores:
    """The jobs submitted in [since, until) on the stores' clusters."""
    trace = TraceFromStores(origin=since)
    since_day = datetime.fromtimestamp(since, UTC).strftime("%Y-%m-%d")
    for store in stores:
        retired = store.retired(since_day)
        bodies = store.retired_bodies(since_day)
        for uid, record in sorted(retired.items()):
            attempts = [*record.attempts, *([record.last] if record.last is not None else [])]
            _add(trace, store.cluster, uid, bodies.get(uid, {}), attempts, until)
        for workload in store.live_workloads():
            if workload.uid in retired:
                continue
            try:
                usage = parse_workload(workload.body, cluster=store.cluster)
            except NotATeamWorkload:
                continue
            except WorkloadError:
                trace.skip("unreadable Workload")
                continue
            if usage.attempt is None:
                continue  # never admitted: pending work is not in the trace
            end = usage.attempt.ending.time if usage.attempt.ending is not None else until
            last = ClosedAttempt(team=usage.team, priority_class=usage.priority_class, start=usage.attempt.start,
                                 end=end, preempted=False,
                                 units=tuple(sorted((i, k, n) for (i, k), n in usage.attempt.units.items())))
            _add(trace, store.cluster, workload.uid, workload.body, [*store.attempts(workload.uid), last], until)
    trace.jobs.sort(key=lambda job: (job.submit, job.id))
    return trace


def _add(trace: TraceFromStores, cluster: str, uid: str, body: Mapping[str, Any], attempts: list[ClosedAttempt],
         until: int) -> None:
    if not attempts:
        return
    attempts = sorted(attempts, key=lambda a: a.start)
    submit = _created(body) or attempts[0].start
    if not trace.origin <= submit < until:
        return
    last = attempts[-1]
    accelerators = [(itype, kind, units) for itype, kind, units in last.units if kind in ACCELERATORS and units > 0]
    if len(accelerators) != 1:
        trace.skip("no accelerators" if not accelerators else "accelerators of several instance types")
        return
    itype, kind, units = accelerators[0]
    if units % UNITS[kind]:
        trace.skip("MIG partitions (the simulator replays them by profile, which the record does not keep)")
        return
    trace.jobs.append(Job(id=JobId(uid), submit=submit - trace.origin, team=TeamName(last.team),
                          instance_type=InstanceTypeName(itype), gpus=units // UNITS[kind],
                          duration=max(1, last.end - last.start), priority=last.priority_class or "default",
                          cluster=cluster))


def _created(body: Mapping[str, Any]) -> int | None:
    stamp = (body.get("metadata") or {}).get("creationTimestamp")
    if not isinstance(stamp, str):
        return None
    try:
        return epoch_seconds(datetime.fromisoformat(stamp))
    except ValueError:
        return None
