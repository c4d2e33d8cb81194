"""Kueue Workloads from a simulated run: what a cluster's Workloads would have said had the jobs of
a trace run under the tree's quotas (the capacity simulator, `capacity.simulate` with
`record_attempts`), written into a collector's store in its own format. How the demo shows a
month of usage without a cluster, and how the usage accounting is checked against the simulator
(two independent implementations of the same quota semantics).

Each job is one Workload: an attempt per admission (QuotaReserved and Admitted at its start;
Finished, or Evicted by preemption, at its end), its accelerators on the flavor of its instance
type, with the vCPUs that go with them (the instance's vCPUs per accelerator). A job whose last
attempt ended is deleted then (retired with its attempts), one still running stays live.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from capacity.results import Attempt
from capacity.spec import Job
from components.kueue import accelerator_resource
from hypergov import naming
from usage.collector_state import ClosedAttempt, KeptWorkload, RetiredWorkload, retired
from usage.collector_store import CollectorStore
from usage.resources import CPU, MIG_PREFIX
from usage.spans import iso

API_VERSION = "kueue.x-k8s.io/v1beta1"


@dataclass(frozen=True)
class ReplayedJob:
    """One simulated job as its Workload's life: its attempts in order."""

    job: Job
    attempts: tuple[Attempt, ...]


def replayed_jobs(jobs: Sequence[Job], attempts: Iterable[Attempt]) -> list[ReplayedJob]:
    by_job: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        by_job.setdefault(attempt.job, []).append(attempt)
    known: dict[str, Job] = {str(job.id): job for job in jobs}
    return [ReplayedJob(known[name], tuple(sorted(found, key=lambda a: a.start)))
            for name, found in sorted(by_job.items())]


def workload_body(job: Job, attempt: Attempt, *, epoch: int, vcpus_per_accelerator: int, uid: str,
                  finished: bool) -> dict[str, Any]:
    """The Workload as Kueue leaves it after `attempt` (times: trace seconds after `epoch`)."""
    team = job.team
    itype, _, profile = job.instance_type.partition(":")
    accelerator = f"{MIG_PREFIX}{profile.removeprefix('mig-')}" if profile else accelerator_resource(itype)
    cpu = str(job.gpus * vcpus_per_accelerator) if not profile else None
    asked = {accelerator: str(job.gpus), **({CPU: cpu} if cpu else {})}
    flavor = naming.kueue_resource_flavor(itype)
    start, end = epoch + attempt.start, epoch + attempt.end
    container = {"name": "job", "image": "registry.example/job:1", "resources": {"requests": asked}}
    conditions = [_condition("QuotaReserved", start), _condition("Admitted", start)]
    if attempt.preempted:
        conditions.append(_condition("Evicted", end, "Preempted"))
    elif finished:
        conditions.append(_condition("Finished", end, "Succeeded"))
    return {
        "apiVersion": API_VERSION, "kind": "Workload",
        "metadata": {"name": f"job-{job.id}".lower(), "namespace": naming.namespace(team), "uid": uid,
                     "creationTimestamp": iso(epoch + job.submit)},
        "spec": {"queueName": naming.kueue_local_queue(team),
                 "priorityClassName": naming.kueue_priority_class(job.priority),
                 "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass", "priority": 0,
                 "podSets": [{"name": "main", "count": 1, "template": {"spec": {"restartPolicy": "Never",
                                                                               "containers": [container]}}}]},
        "status": {
            "admission": {"clusterQueue": naming.kueue_cluster_queue(team), "podSetAssignments": [{
                "name": "main", "count": 1, "flavors": {resource: flavor for resource in asked},
                "resourceUsage": asked}]},
            "conditions": conditions}}


def write_replay(store: CollectorStore, replayed: Sequence[ReplayedJob], *, epoch: int, end: int,
                 vcpus_per_accelerator: Mapping[str, int]) -> int:
    """The replayed jobs into `store` as the collector would have left them by `end` (trace
    seconds): each ended job retired when its last attempt ended, with its earlier attempts;
    each still running (its last attempt reaching `end`) live. Returns the workloads written."""
    for item in replayed:
        job, last = item.job, item.attempts[-1]
        uid = f"{store.cluster}-{job.id}".lower()
        vcpus = vcpus_per_accelerator.get(job.instance_type.partition(":")[0], 0)
        running = last.end >= end and not last.preempted
        body = workload_body(job, last, epoch=epoch, vcpus_per_accelerator=vcpus, uid=uid, finished=not running)
        earlier = tuple(_closed(job, a, epoch=epoch, vcpus=vcpus, uid=uid, cluster=store.cluster)
                        for a in item.attempts[:-1])
        for attempt in earlier:
            store.record_attempt(uid, attempt)
        if running:
            store.put(KeptWorkload(uid=uid, body=body))
        else:  # the collector's own path; synced once by the caller, not per workload
            store.retire(KeptWorkload(uid=uid, body=body, deleted=True), _utc(epoch + last.end), sync=False)
    return len(replayed)


def _closed(job: Job, attempt: Attempt, *, epoch: int, vcpus: int, uid: str, cluster: str) -> ClosedAttempt:
    body = workload_body(job, attempt, epoch=epoch, vcpus_per_accelerator=vcpus, uid=uid, finished=True)
    record: RetiredWorkload = retired(KeptWorkload(uid=uid, body=body, deleted=True), (), cluster,
                                      now=epoch + attempt.end)
    if record.last is None:
        raise ValueError(f"job {job.id}: its attempt at {attempt.start} is no team's (team {job.team})")
    return record.last


def _condition(kind: str, at: int, reason: str = "") -> dict[str, str]:
    return {"type": kind, "status": "True", "lastTransitionTime": iso(at), "reason": reason or kind, "message": ""}


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


