"""A workload's attempts over time (SEMANTICS.md U6): a job admitted at 10:01:30, preempted at 10:21:30,
admitted again at 10:40:00 and finished at 11:10:00 ran twice, though its Workload ends up showing
only the second attempt. The collector records the first before the body that forgets it, once
however often its event is replayed; the store becomes both spans and the coverage the accounting
takes. The job: 2 pods x 8 GPUs x 4 CPUs on p5 = 16 GPUs, 8 vCPUs. Times: T10 = 10:00:00Z."""

from __future__ import annotations

import math
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from engines.kube import KubeObject
from tests.engines.kube_fakes import FakeCluster
from tests.usage.collector_fixtures import T0, Arriving, Crash, SetClock
from tests.usage.workload_fixtures import P5, condition, workload
from usage.accounting import Pool, account
from usage.collect import ClusterCollector, CollectOptions, collect_cluster
from usage.collector_state import KeptWorkload, closed_attempt
from usage.collector_store import CollectorStore
from usage.resources import GPU_UNITS, MILLICORES, ResourceKind
from usage.spans import Span, epoch_seconds
from usage.spans_from_store import collected_usage

T10 = epoch_seconds(T0)
UID = "0b7c1a52-8f1e-4c1e-9a57-3f2a00000001"
ONCE = CollectOptions(once=True, watch_seconds=30, page_size=500, pause_s=0)
SECOND = timedelta(seconds=1)


def _body(conditions: list[dict[str, str]], *, admitted: bool) -> dict[str, Any]:
    body = workload(conditions=conditions, admitted=admitted)
    body["metadata"]["uid"] = UID
    return body


ADMITTED = _body([condition("QuotaReserved", "True", "2026-03-02T10:01:30Z"),
                  condition("Admitted", "True", "2026-03-02T10:01:30Z")], admitted=True)
PREEMPTED = _body([condition("QuotaReserved", "False", "2026-03-02T10:21:30Z", "Pending"),
                   condition("Admitted", "False", "2026-03-02T10:21:30Z", "NoReservation"),
                   condition("Evicted", "True", "2026-03-02T10:21:30Z", "Preempted"),
                   condition("Preempted", "True", "2026-03-02T10:21:30Z", "InClusterQueue")], admitted=False)
READMITTED = _body([condition("QuotaReserved", "True", "2026-03-02T10:40:00Z"),
                    condition("Admitted", "True", "2026-03-02T10:40:00Z"),
                    condition("Evicted", "False", "2026-03-02T10:40:00Z", "QuotaReserved"),
                    condition("Preempted", "False", "2026-03-02T10:40:00Z", "QuotaReserved")], admitted=True)
FINISHED = _body([*READMITTED["status"]["conditions"], condition("Finished", "True", "2026-03-02T11:10:00Z",
                                                                   "Succeeded")], admitted=True)


def _applied(cluster: FakeCluster, body: dict[str, Any]) -> None:
    meta = body["metadata"]
    cluster.apply(KubeObject(body["apiVersion"], body["kind"], meta["name"], meta["namespace"], body))


def _collect(api: Any, store: CollectorStore, clock: SetClock) -> None:
    collect_cluster(ClusterCollector("gpu-west", api, store, clock=clock), ONCE, threading.Event())


class _CrashAfterAttempt(CollectorStore):
    """The process dies after the closed attempt is written, before the body that forgets it."""

    def put(self, workload: KeptWorkload) -> None:
        if workload.body["status"].get("conditions") == PREEMPTED["status"]["conditions"]:
            raise Crash("killed between the attempt and the body")
        super().put(workload)


def _expected_spans() -> list[Span]:
    def held(kind: ResourceKind, units: int, start: str, end: str, preempted: bool) -> Span:
        return Span("vision", "gpu-west", P5, kind, "training", units,
                    T10 + _seconds(start), T10 + _seconds(end), preempted)
    return [held(ResourceKind.GPU, 16 * GPU_UNITS, "10:01:30", "10:21:30", True),
            held(ResourceKind.VCPU, 8 * MILLICORES, "10:01:30", "10:21:30", True),
            held(ResourceKind.GPU, 16 * GPU_UNITS, "10:40:00", "11:10:00", False),
            held(ResourceKind.VCPU, 8 * MILLICORES, "10:40:00", "11:10:00", False)]


def _seconds(clock: str) -> int:
    hours, minutes, seconds = (int(part) for part in clock.split(":"))
    return (hours - 10) * 3600 + minutes * 60 + seconds


@pytest.mark.parametrize("crashed_mid_event", [False, True])
def test_a_preempted_then_readmitted_workload_yields_both_attempts(tmp_path: Path, crashed_mid_event: bool) -> None:
    """The first run lists the admitted job (10:00, bookmark at 10:00:10); the second resumes at
    11:15 and receives preempted, re-admitted, finished. Two attempts, each 16 GPUs and 8 vCPUs:
    10:01:30-10:21:30 = 1200 s, preempted: 16 * 1200 / 3600 = 16/3 GPU-hours, all lost;
    10:40:00-11:10:00 = 1800 s: 16 * 1800 / 3600 = 8 GPU-hours. Used 16/3 + 8 = 40/3 GPU-hours.
    Crashed after the first attempt was written but before the preempted body: the restart
    replays that event, and the attempt is still recorded once."""
    cluster, clock = FakeCluster(), SetClock(T0)
    _applied(cluster, ADMITTED)
    _collect(Arriving(cluster, clock, first=T0 + 10 * SECOND), CollectorStore(tmp_path, "gpu-west"), clock)
    for body in (PREEMPTED, READMITTED, FINISHED):
        _applied(cluster, body)
    clock.now = T0 + timedelta(minutes=75)
    if crashed_mid_event:
        with pytest.raises(Crash):
            _collect(Arriving(cluster, clock, first=clock.now + 10 * SECOND),
                     _CrashAfterAttempt(tmp_path, "gpu-west"), clock)
        assert len(CollectorStore(tmp_path, "gpu-west").attempts(UID)) == 1
    _collect(Arriving(cluster, clock, first=clock.now + 10 * SECOND), CollectorStore(tmp_path, "gpu-west"), clock)

    store = CollectorStore(tmp_path, "gpu-west")
    assert [(a.start, a.end, a.preempted) for a in store.attempts(UID)] == [(T10 + 90, T10 + 1290, True)]
    usage = collected_usage([store], now=T10 + 75 * 60)
    assert sorted(usage.spans) == sorted(_expected_spans())

    pools = [Pool("gpu-west", P5, ResourceKind.GPU, 32 * GPU_UNITS, {"vision": 16 * GPU_UNITS}),
             Pool("gpu-west", P5, ResourceKind.VCPU, 192 * MILLICORES)]
    gpu, _ = account(usage.spans, pools, start=T10, end=T10 + 75 * 60, coverage=usage.coverage)
    assert gpu.covered.all()  # the downtime 10:00:10-11:15 was resumed without expiry: complete
    assert math.isclose(float(gpu.used.sum()), 40 / 3)
    assert math.isclose(float(gpu.class_lost.sum()), 16 / 3)


def test_a_relisting_that_shows_a_new_attempt_closes_the_kept_one_at_its_start(tmp_path: Path) -> None:
    """The resourceVersion expired while the collector was down: the listing at 11:15 shows only the
    finished second attempt (its Evicted is False now: how the first ended is gone). The kept
    first attempt ends at the latest it can have, the second's start 10:40:00 (quota is not
    held twice), not marked preempted: 10:01:30-10:40:00 = 2310 s; 16 * 2310 / 3600 = 154/15
    (10.27) GPU-hours. The downtime before a listing is missing: the intervals from 10:00
    to 11:15 are not covered (the first range ended at 10:00:10, inside the first interval)."""
    cluster, clock = FakeCluster(), SetClock(T0)
    _applied(cluster, ADMITTED)
    _collect(Arriving(cluster, clock, first=T0 + 10 * SECOND), CollectorStore(tmp_path, "gpu-west"), clock)
    for body in (PREEMPTED, READMITTED, FINISHED):
        _applied(cluster, body)
    cluster.compact()
    clock.now = T0 + timedelta(minutes=75)
    _collect(Arriving(cluster, clock, first=clock.now + 10 * SECOND), CollectorStore(tmp_path, "gpu-west"), clock)

    store = CollectorStore(tmp_path, "gpu-west")
    assert [(a.start, a.end, a.preempted) for a in store.attempts(UID)] == [(T10 + 90, T10 + 2400, False)]
    usage = collected_usage([store], now=T10 + 75 * 60)
    first_gpu = next(s for s in usage.spans if s.kind is ResourceKind.GPU and s.start == T10 + 90)
    assert math.isclose(first_gpu.units / GPU_UNITS * (first_gpu.end - first_gpu.start) / 3600, 154 / 15)
    (gpu,) = account([s for s in usage.spans if s.kind is ResourceKind.GPU],
                     [Pool("gpu-west", P5, ResourceKind.GPU, 32 * GPU_UNITS)], start=T10, end=T10 + 75 * 60,
                     coverage=usage.coverage)
    assert not gpu.covered.any()


def test_the_same_attempt_or_none_closes_nothing() -> None:
    """Finished added to the attempt started at 10:40 is the same attempt; a pending body closes none."""
    def kept(body: dict[str, Any]) -> KeptWorkload:
        return KeptWorkload(uid=UID, body=body)
    assert closed_attempt(kept(READMITTED), kept(FINISHED), "gpu-west") is None
    assert closed_attempt(kept(PREEMPTED), kept(READMITTED), "gpu-west") is None
    assert closed_attempt(None, kept(ADMITTED), "gpu-west") is None
