"""`hypergov usage collect`: capture every Kueue Workload that ran on each cluster, resumably.

Per cluster: list the Workloads (all namespaces, page by page), remember the list's
resourceVersion, then watch from it; every event is applied to the kept workloads and
checkpointed at once (`usage.collector_store`). A restart watches from the checkpoint's
resourceVersion, so the API server replays exactly the changes made since: a restart loses
nothing, and an event replayed after a crash rewrites the same uid, so nothing counts twice. When
that version is too old (410 Gone, `ResourceVersionExpired`) the collector lists again and the
listing replaces the set of present workloads (`usage.collector_state.after_listing`).

While it watches, the cluster's coverage grows (`usage.coverage`): what the accounting may call
measured. The Kubernetes client is the drift scan's (`engines.live.kubernetes.kube_apis_of`, from
the `kubeconfigs` setting); the clients are passed in, and the decisions are pure.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from engines.kube import KubeApi, ResourceVersionExpired, WatchEvent
from engines.live.kubernetes import PAGE_SIZE
from engines.outcomes import Backoff, Failure, PermanentError, classify
from usage.collector_state import (
    WORKLOAD_API_VERSION,
    WORKLOAD_KIND,
    Checkpoint,
    KeptWorkload,
    after_event,
    after_listing,
    closed_attempt,
)
from usage.collector_store import CollectorStore
from usage.coverage import Coverage, RangeStart, extended, opened

Clock = Callable[[], datetime]
Progress = Callable[[str], None]


def utc_now() -> datetime:
    return datetime.now(UTC)


class WorkloadsNotServed(PermanentError):
    """The cluster's API answered a Workload listing without a resourceVersion: it does not serve
    Kueue's Workload kind (Kueue, or HyperPod task governance, is not installed)."""

    reason = "kueue-not-served"


@dataclass(frozen=True)
class CollectOptions:
    """`once`: list (or resume), watch until the API server's first bookmark or `watch_seconds`, stop;
    else follow until stopped, each watch asking the server to end it after `watch_seconds` (so a
    stop request is seen at least that often). `pause_s`: the wait after a watch that brought
    nothing, so that a proxy ending watches at once cannot make the collector spin."""

    once: bool = True
    watch_seconds: float = 30.0
    page_size: int = PAGE_SIZE
    pause_s: float = 1.0


@dataclass(frozen=True)
class ClusterSummary:
    """What one cluster's collection ended with: this run's events, the workloads on the cluster
    (`workloads_kept`), the deleted ones retired to the finished segments in this run
    (`workloads_deleted`), and the checkpoint as last written."""

    cluster: str
    workloads_kept: int
    workloads_deleted: int
    events_applied: int
    resource_version: str | None
    coverage: Coverage
    failure: Failure | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"cluster": self.cluster, "workloads_kept": self.workloads_kept,
                "workloads_deleted": self.workloads_deleted, "events_applied": self.events_applied,
                "resource_version": self.resource_version,
                "covered": [r.as_dict() for r in self.coverage],
                "error": self.failure.as_dict() if self.failure else None}


class Watched(NamedTuple):
    """How one watch ended: the events it applied (bookmarks are none), and whether it ended at the
    bookmark asked for (the collector has caught up with the cluster)."""

    applied: int
    caught_up: bool


class ClusterCollector:
    """One cluster's workloads and checkpoint, in memory as on disk (written after every change)."""

    def __init__(self, cluster: str, api: KubeApi, store: CollectorStore, *, clock: Clock = utc_now,
                 progress: Progress = lambda line: None, page_size: int = PAGE_SIZE) -> None:
        self.cluster, self.api, self.store = cluster, api, store
        self.clock, self.progress, self.page_size = clock, progress, page_size
        self.kept: dict[str, KeptWorkload] = {w.uid: w for w in store.live_workloads()}  # what is on the cluster
        self.checkpoint = store.checkpoint()
        self.saved = self.checkpoint  # as on disk: `checkpoint` may hold a range opened since, with nothing in it yet
        self.events_applied = 0
        self.retired = 0
        for gone in [w for w in self.kept.values() if w.deleted]:  # kept as live files by an earlier version
            self._retire(gone)

    def _retire(self, workload: KeptWorkload) -> None:
        """Its life is over: to the day's finished segment (`collector_store`), out of memory."""
        self.store.retire(workload, self.clock())
        self.kept.pop(workload.uid, None)
        self.retired += 1

    def start(self) -> None:
        """Resume from the checkpoint's resourceVersion, or list when there is none."""
        version = self.checkpoint.resource_version
        if version is None:
            self.relist()
            return
        self.progress(f"{self.cluster}: resuming from resourceVersion {version} "
                      f"({len(self.kept)} workload(s) kept)")
        self._open("resume")

    def relist(self) -> None:
        """List every Workload (the first page's resourceVersion is the whole list's) and replace the
        set of present workloads; the checkpoint moves to the list's version."""
        self._open("list")
        listed: list[Any] = []
        token: str | None = None
        version: str | None = None
        while True:
            page = self.api.list_kind(WORKLOAD_API_VERSION, WORKLOAD_KIND, limit=self.page_size,
                                      continue_token=token)
            version = version or page.resource_version
            listed.extend(obj.body for obj in page.items)
            token = page.continue_token
            if not token:
                break
        if version is None:
            raise WorkloadsNotServed(f"cluster {self.cluster} does not serve {WORKLOAD_API_VERSION} "
                                     f"{WORKLOAD_KIND} (is Kueue / HyperPod task governance installed?)")
        outcome = after_listing(self.kept, listed)
        for workload in (*outcome.listed, *outcome.gone):
            self._keep(workload)
        self._save(version)
        self.progress(f"{self.cluster}: listed {len(outcome.listed)} workload(s) at resourceVersion {version}"
                      + (f"; {len(outcome.gone)} kept one(s) gone since" if outcome.gone else ""))

    def watch(self, timeout_s: float, *, until_bookmark: bool, stop: threading.Event) -> Watched:
        """One watch from the checkpoint, every event applied and checkpointed as it arrives; ends
        at the first bookmark (`until_bookmark`), at `stop`, or when the server ends it."""
        version = self.checkpoint.resource_version
        if version is None:
            raise RuntimeError("a watch starts from a listing or a checkpoint: start() first")
        applied = 0
        with closing(self.api.watch_kind(WORKLOAD_API_VERSION, WORKLOAD_KIND, resource_version=version,
                                         timeout_s=timeout_s)) as events:
            for event in events:
                applied += self.apply(event)
                if until_bookmark and event.type == "BOOKMARK":
                    return Watched(applied, caught_up=True)
                if stop.is_set():
                    return Watched(applied, caught_up=False)
        self._save(self.checkpoint.resource_version)  # the server ended the watch: watched until now
        return Watched(applied, caught_up=False)

    def apply(self, event: WatchEvent) -> int:
        """Keep the event's workload (before the checkpoint that passes it), then checkpoint."""
        workload = after_event(event)
        if workload is not None:
            self._keep(workload)
            self.events_applied += 1
        self._save(event.resource_version or self.checkpoint.resource_version)
        return 0 if workload is None else 1

    def stopped(self) -> None:
        """A clean stop: the open range reaches this moment."""
        if self.checkpoint.coverage:
            self._save(self.checkpoint.resource_version)

    def summary(self, failure: Failure | None = None) -> ClusterSummary:
        return ClusterSummary(cluster=self.cluster, workloads_kept=len(self.kept), workloads_deleted=self.retired,
                              events_applied=self.events_applied,
                              resource_version=self.saved.resource_version,
                              coverage=self.saved.coverage, failure=failure)

    def _keep(self, workload: KeptWorkload) -> None:
        before = self.kept.get(workload.uid)
        if before == workload:
            return  # unchanged (a listing of what was kept, a replayed event): nothing to rewrite
        closed = closed_attempt(before, workload, self.cluster)
        if closed is not None:  # before the body that forgets it (SEMANTICS.md U6)
            self.store.record_attempt(workload.uid, closed)
        if workload.deleted:
            self._retire(workload)
            return
        self.store.put(workload)
        self.kept[workload.uid] = workload

    def _open(self, began: RangeStart) -> None:
        # In memory only: the range reaches disk with the first checkpoint after something arrived.
        self.checkpoint = Checkpoint(resource_version=self.checkpoint.resource_version,
                                     coverage=opened(self.checkpoint.coverage, self.clock(), began))

    def _save(self, version: str | None) -> None:
        self.checkpoint = Checkpoint(resource_version=version,
                                     coverage=extended(self.checkpoint.coverage, self.clock()))
        self.store.save(self.checkpoint)
        self.saved = self.checkpoint


def collect_cluster(collector: ClusterCollector, options: CollectOptions, stop: threading.Event) -> None:
    """Start (list or resume), then watch: once until caught up, or until `stop`; a version too old
    to resume from lists again. Failures propagate, leaving the checkpoint as last written."""
    collector.start()
    deadline = time.monotonic() + options.watch_seconds
    while not stop.is_set():
        left = deadline - time.monotonic() if options.once else options.watch_seconds
        if left <= 0:
            break
        try:
            watched = collector.watch(left, until_bookmark=options.once, stop=stop)
        except ResourceVersionExpired as exc:
            collector.progress(f"{collector.cluster}: {exc}; listing again")
            collector.relist()
            continue
        if watched.applied:
            collector.progress(f"{collector.cluster}: {watched.applied} event(s) applied, at resourceVersion "
                               f"{collector.checkpoint.resource_version}")
        if watched.caught_up:
            break
        if not watched.applied:
            stop.wait(options.pause_s)
    collector.stopped()


def run_cluster(cluster: str, api_for: Callable[[], KubeApi], store: CollectorStore, options: CollectOptions,
                stop: threading.Event, *, clock: Clock = utc_now, progress: Progress = lambda line: None,
                backoff: Backoff | None = None) -> ClusterSummary:
    """One cluster's collection as a value. Following, a temporary failure (unreachable, 5xx) is
    retried after a backoff, resuming from the checkpoint; a permanent one, or any failure with
    `once`, ends the cluster's collection with the failure in its summary."""
    backoff = backoff or Backoff()
    collector: ClusterCollector | None = None
    while True:
        try:
            if collector is None:  # the client (its discovery reaches the API) and the state read: retried too
                collector = ClusterCollector(cluster, api_for(), store, clock=clock, progress=progress,
                                             page_size=options.page_size)
            collect_cluster(collector, options, stop)
            return collector.summary()
        except Exception as exc:  # the cluster's boundary: every failure is a value
            failure = classify(exc)
        if options.once or not failure.temporary or stop.is_set():
            return _summary(cluster, collector, failure)
        delay = backoff.next_delay(failure)
        progress(f"{cluster}: {failure.message}; trying again in {delay:.0f} s")
        if stop.wait(delay):
            return _summary(cluster, collector, None)


def _summary(cluster: str, collector: ClusterCollector | None, failure: Failure | None) -> ClusterSummary:
    if collector is None:
        return ClusterSummary(cluster, 0, 0, 0, None, (), failure=failure)
    return collector.summary(failure)


def collect_clusters(apis: Mapping[str, Callable[[], KubeApi]], state_dir: Path, options: CollectOptions,
                     stop: threading.Event, *, clock: Clock = utc_now,
                     progress: Progress = lambda line: None) -> list[ClusterSummary]:
    """Every cluster at once, one thread each, in cluster-name order. Each cluster's lock is taken
    first: when any is held by another collector, `CollectorBusyError` is raised before anything
    is read or written."""
    names = sorted(apis)
    stores = {name: CollectorStore.of(state_dir, name) for name in names}
    with ExitStack() as held:
        for name in names:
            held.enter_context(stores[name].held())
        with ThreadPoolExecutor(max_workers=max(1, len(names)), thread_name_prefix="usage-collect") as pool:
            futures = [pool.submit(run_cluster, name, apis[name], stores[name], options, stop, clock=clock,
                                   progress=progress) for name in names]
            try:
                return [future.result() for future in futures]
            except BaseException:  # interrupted: let the other clusters stop cleanly before the locks go
                stop.set()
                raise
