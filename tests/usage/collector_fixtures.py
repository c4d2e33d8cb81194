"""Kueue Workloads as a job's life makes them (pending, admitted, finished) for the collector's
tests, each valid against Kueue's v1beta1 Workload CRD (`tests/schemas/kueue`), and the stand-ins
the tests drive the collector with: a clock the test sets, and an API that delivers the fake
cluster's events at times the test chooses and can crash the collector. No kube-apiserver can run
here: the cluster is `tests.engines.kube_fakes.FakeCluster`."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from engines.kube import KubeObject, KubePage, WatchEvent
from tests.engines.kube_fakes import FakeCluster
from usage.collector_state import WORKLOAD_API_VERSION, WORKLOAD_KIND

CRD = Path(__file__).resolve().parents[1] / "schemas" / "kueue" / "kueue.x-k8s.io_workloads.yaml"
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
GPU_FLAVOR = "ml.p5.48xlarge"


@cache
def _schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    return next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta1")["schema"]["openAPIV3Schema"]


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(kind: str, moment: datetime, reason: str) -> dict[str, str]:
    return {"type": kind, "status": "True", "lastTransitionTime": stamp(moment), "reason": reason,
            "message": f"{kind} since {stamp(moment)}"}


def workload(name: str, *, team: str = "vision", created: datetime = T0, admitted: datetime | None = None,
             finished: datetime | None = None, gpus: int = 8) -> KubeObject:
    """A one-pod job's Workload: pending, admitted at `admitted` (quota reserved and admitted), and
    finished at `finished`. Its uid follows from its namespace and name."""
    namespace = f"hyperpod-ns-{team}"
    container = {"name": "trainer", "image": "registry.example/train:1",
                 "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}
    body: dict[str, Any] = {
        "apiVersion": WORKLOAD_API_VERSION, "kind": WORKLOAD_KIND,
        "metadata": {"name": name, "namespace": namespace, "uid": uid_of(name, team),
                     "creationTimestamp": stamp(created)},
        "spec": {"queueName": f"{namespace}-localqueue", "podSets": [
            {"name": "main", "count": 1, "template": {"spec": {"containers": [container],
                                                               "restartPolicy": "Never"}}}]},
        "status": {"conditions": []}}
    if admitted is not None:
        body["status"]["conditions"] += [_condition("QuotaReserved", admitted, "QuotaReserved"),
                                         _condition("Admitted", admitted, "Admitted")]
        body["status"]["admission"] = {"clusterQueue": f"{namespace}-clusterqueue", "podSetAssignments": [
            {"name": "main", "count": 1, "flavors": {"nvidia.com/gpu": GPU_FLAVOR},
             "resourceUsage": {"nvidia.com/gpu": str(gpus)}}]}
    if finished is not None:
        body["status"]["conditions"].append(_condition("Finished", finished, "Succeeded"))
    jsonschema.validate(body, _schema())
    return KubeObject(WORKLOAD_API_VERSION, WORKLOAD_KIND, name, namespace, body)


def uid_of(name: str, team: str = "vision") -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"workload/hyperpod-ns-{team}/{name}"))


def ran(body: Any) -> tuple[str, str, str | None]:
    """A kept workload's admitted interval as its conditions state it: (uid, admitted, finished)."""
    times = {c["type"]: c["lastTransitionTime"] for c in body["status"]["conditions"]}
    return body["metadata"]["uid"], times["Admitted"], times.get("Finished")


@dataclass
class SetClock:
    """The collector's clock: whatever the test (or the arriving events) last set."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now


class Crash(BaseException):
    """The collector's process dies here: no handler of the collector sees it (as with SIGKILL)."""


@dataclass
class Arriving:
    """The fake cluster behind the seam, its watch events arriving one `step` apart from `first`
    (the clock is moved to each event's time as it is delivered, counting on across watches);
    `crash_after` kills the collector when it asks for the event after that many; `stop` is set
    as the `stop_on_watch`-th watch starts (a SIGTERM arriving during it). `delivered` records
    every event's resourceVersion as delivered, bookmarks included."""

    cluster: FakeCluster
    clock: SetClock
    first: datetime
    step: timedelta = timedelta(seconds=10)
    crash_after: int | None = None
    stop: threading.Event | None = None
    stop_on_watch: int = 0
    delivered: list[str] = field(default_factory=list)
    watched: int = 0

    def list_kind(self, api_version: str, kind: str, **kwargs: Any) -> KubePage:
        return self.cluster.list_kind(api_version, kind, **kwargs)

    def watch_kind(self, api_version: str, kind: str, *, resource_version: str,
                   timeout_s: float) -> Generator[WatchEvent, None, None]:
        self.watched += 1
        if self.stop is not None and self.watched == self.stop_on_watch:
            self.stop.set()
        for event in self.cluster.watch_kind(api_version, kind, resource_version=resource_version,
                                             timeout_s=timeout_s):
            if len(self.delivered) == self.crash_after:
                raise Crash(f"killed before event {event.resource_version}")
            self.clock.now = self.first + self.step * len(self.delivered)
            self.delivered.append(event.resource_version)
            yield event
