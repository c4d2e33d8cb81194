"""The usage collector against the fake cluster (`tests.engines.kube_fakes.FakeCluster`: no
kube-apiserver can run here): list then watch keeps every workload once; a collector killed
mid-watch and started again resumes from its checkpoint, sees every later event exactly once and
counts every admitted interval exactly once, with a coverage gap for the time it was down; an
expired resourceVersion lists again without counting anything twice; a deleted workload keeps its
last body; a listing is read page by page. Every expectation comes from what the test did to the
cluster."""

from __future__ import annotations

import itertools
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from engines.outcomes import Backoff
from tests.engines.kube_fakes import FakeCluster
from tests.usage.collector_fixtures import T0, Arriving, Crash, SetClock, ran, uid_of, workload
from usage.collect import ClusterCollector, CollectOptions, collect_cluster, run_cluster
from usage.collector_store import WORKLOADS_DIR, CollectorStore
from usage.coverage import CoveredRange

ONCE = CollectOptions(once=True, watch_seconds=30, page_size=500, pause_s=0)
HOUR = timedelta(hours=1)


def _run_once(cluster: FakeCluster | Arriving, store: CollectorStore, clock: SetClock) -> ClusterCollector:
    collector = ClusterCollector("gpu-west", cluster, store, clock=clock)  # type: ignore[arg-type]
    collect_cluster(collector, ONCE, threading.Event())
    return collector


def _files(store: CollectorStore) -> list[str]:
    return sorted(p.name for p in (store.root / WORKLOADS_DIR).iterdir())


def _history(cluster: FakeCluster) -> None:
    """Before the collector starts: two jobs, one admitted at 10:05."""
    cluster.apply(workload("train-a", created=T0))
    cluster.apply(workload("train-b", created=T0, admitted=T0 + timedelta(minutes=5)))


def test_list_then_watch_keeps_every_workload_once(tmp_path: Path) -> None:
    cluster, clock = FakeCluster(), SetClock()
    _history(cluster)
    store = CollectorStore(tmp_path, "gpu-west")
    first = _run_once(cluster, store, clock)
    assert (first.checkpoint.resource_version, first.events_applied) == ("2", 0)  # two applies; a list is no event
    admitted_a = workload("train-a", created=T0, admitted=T0 + timedelta(minutes=20))
    cluster.apply(admitted_a)
    cluster.apply(workload("eval-c", team="nlp", created=T0 + timedelta(minutes=21)))
    clock.now = T0 + HOUR
    second = _run_once(cluster, store, clock)
    assert second.events_applied == 2 and second.checkpoint.resource_version == "4"
    kept = {w.uid: w for w in store.workloads()}
    assert sorted(kept) == sorted([uid_of("train-a"), uid_of("train-b"), uid_of("eval-c", "nlp")])
    assert _files(store) == sorted(f"{uid}.json" for uid in kept)
    assert kept[uid_of("train-a")].body["status"] == admitted_a.body["status"]
    assert cluster.listings == [("kueue.x-k8s.io/v1beta1", "Workload", None, None)]  # the second run resumed
    assert cluster.watches == ["2", "2"]  # the first run from its list, the second from the checkpoint


@pytest.mark.parametrize("torn", [False, True], ids=["after-a-checkpoint", "between-workload-and-checkpoint"])
def test_interrupted_and_resumed_counts_every_interval_exactly_once(tmp_path: Path, torn: bool) -> None:
    """Killed after three watch events (`torn`: the third's workload written, its checkpoint not),
    then started again an hour later: every event after the checkpoint is delivered exactly once,
    the admitted intervals kept are exactly those the jobs had, and the time it was down is a gap."""
    cluster, clock = FakeCluster(), SetClock()
    _history(cluster)  # resourceVersions 1-2
    store = CollectorStore(tmp_path, "gpu-west")
    second, minute = timedelta(seconds=1), timedelta(minutes=1)
    _run_once(Arriving(cluster, clock, first=T0 + 5 * second), store, clock)  # lists at T0, bookmark 2 at 10:00:05
    changes = [workload("train-a", admitted=T0 + 10 * minute),  # 3
               workload("train-b", admitted=T0 + 5 * minute, finished=T0 + 30 * minute),  # 4
               workload("eval-c", team="nlp", created=T0 + 31 * minute),  # 5
               workload("eval-c", team="nlp", created=T0 + 31 * minute, admitted=T0 + 32 * minute),  # 6
               workload("train-a", admitted=T0 + 10 * minute, finished=T0 + 50 * minute)]  # 7
    for change in changes:
        cluster.apply(change)
    gone = changes[1]
    cluster.delete(gone.api_version, gone.kind, gone.name, gone.namespace)  # 8: train-b's owner deletes it

    clock.now = T0 + minute  # the second run resumes at 10:01; events 3, 4, 5 arrive at :10, :20, :30
    if torn:
        _tear_after_workload_of(store, resource_version="5")
    with pytest.raises(Crash):
        _run_once(Arriving(cluster, clock, first=T0 + minute + 10 * second, crash_after=3), store, clock)
    checkpointed = "4" if torn else "5"
    assert CollectorStore(tmp_path, "gpu-west").checkpoint().resource_version == checkpointed
    last_checkpoint_at = T0 + minute + (20 if torn else 30) * second

    restarted_at = T0 + HOUR
    clock.now = restarted_at
    resumed = Arriving(cluster, clock, first=restarted_at + 5 * second)
    fresh_store = CollectorStore(tmp_path, "gpu-west")  # a new process: only the disk is left
    collector = _run_once(resumed, fresh_store, clock)

    assert resumed.delivered == [str(v) for v in range(int(checkpointed) + 1, 9)] + ["8"]  # and the bookmark
    assert collector.events_applied == 8 - int(checkpointed)
    kept = {w.uid: w for w in fresh_store.workloads()}
    assert sorted(ran(w.body) for w in kept.values() if w.body["status"].get("admission")) == sorted([
        (uid_of("train-a"), "2026-03-02T10:10:00Z", "2026-03-02T10:50:00Z"),
        (uid_of("train-b"), "2026-03-02T10:05:00Z", "2026-03-02T10:30:00Z"),
        (uid_of("eval-c", "nlp"), "2026-03-02T10:32:00Z", None)])
    assert len(kept) == 3 and [uid for uid, w in kept.items() if w.deleted] == [uid_of("train-b")]
    bookmark_at = restarted_at + 5 * second + 10 * second * (8 - int(checkpointed))
    coverage = fresh_store.checkpoint().coverage
    assert coverage == (CoveredRange(start=T0, end=T0 + 5 * second, began="list"),
                        CoveredRange(start=T0 + minute, end=last_checkpoint_at, began="resume"),
                        CoveredRange(start=restarted_at, end=bookmark_at, began="resume"))
    assert all(earlier.end < later.start for earlier, later in itertools.pairwise(coverage))


def _tear_after_workload_of(store: CollectorStore, *, resource_version: str) -> None:
    """The process dies right after writing this event's workload, before its checkpoint."""
    put = store.put

    def put_then_die(kept: object) -> None:
        put(kept)  # type: ignore[arg-type]
        if kept.body["metadata"]["resourceVersion"] == resource_version:  # type: ignore[attr-defined]
            raise Crash("killed between the workload and the checkpoint")

    store.put = put_then_die  # type: ignore[method-assign]


def test_an_expired_resource_version_lists_again_and_counts_nothing_twice(tmp_path: Path) -> None:
    """Down while the API server compacted its history: the resume is refused (410), the collector
    lists again; the listed workloads are the same uids, the one deleted meanwhile keeps its body."""
    cluster, clock = FakeCluster(), SetClock()
    _history(cluster)  # 1, 2
    store = CollectorStore(tmp_path, "gpu-west")
    _run_once(Arriving(cluster, clock, first=T0 + timedelta(seconds=5)), store, clock)
    seen_b = next(w.body for w in store.workloads() if w.uid == uid_of("train-b"))
    admitted_a = workload("train-a", admitted=T0 + timedelta(minutes=40))
    cluster.apply(admitted_a)  # 3
    cluster.apply(workload("eval-c", team="nlp"))  # 4
    cluster.delete("kueue.x-k8s.io/v1beta1", "Workload", "train-b", "hyperpod-ns-vision")  # 5
    cluster.compact()
    clock.now = T0 + HOUR
    collector = _run_once(Arriving(cluster, clock, first=T0 + HOUR + timedelta(seconds=5)), store, clock)

    assert cluster.watches == ["2", "2", "5"]  # the refused resume, then from the new listing
    assert len(cluster.listings) == 2 and collector.events_applied == 0  # a listing applies no events
    kept = {w.uid: w for w in store.workloads()}
    assert sorted(kept) == sorted([uid_of("train-a"), uid_of("train-b"), uid_of("eval-c", "nlp")])
    assert _files(store) == sorted(f"{uid}.json" for uid, w in kept.items() if not w.deleted)  # on the cluster
    assert list(store.retired()) == [uid_of("train-b")]  # retired to the finished segment, with its last body
    assert kept[uid_of("train-b")].deleted and kept[uid_of("train-b")].body == seen_b
    assert kept[uid_of("train-a")].body["status"] == admitted_a.body["status"]
    assert [w.uid for w in kept.values() if w.deleted] == [uid_of("train-b")]
    assert [(r.start, r.began) for r in store.checkpoint().coverage] == [(T0, "list"), (T0 + HOUR, "list")]


def test_a_deleted_workload_keeps_its_last_body(tmp_path: Path) -> None:
    """A finished job deleted by its owner still ran: its record keeps the conditions it ended with."""
    cluster, clock = FakeCluster(), SetClock()
    cluster.apply(workload("train-a", admitted=T0 + timedelta(minutes=1)))
    store = CollectorStore(tmp_path, "gpu-west")
    _run_once(cluster, store, clock)
    finished = workload("train-a", admitted=T0 + timedelta(minutes=1), finished=T0 + timedelta(minutes=9))
    cluster.apply(finished)
    cluster.delete(finished.api_version, finished.kind, finished.name, finished.namespace)
    assert _run_once(cluster, store, clock).events_applied == 2
    [kept] = store.workloads()
    assert kept.deleted and kept.body["status"] == finished.body["status"]
    assert ran(kept.body) == (uid_of("train-a"), "2026-03-02T10:01:00Z", "2026-03-02T10:09:00Z")


def test_a_listing_is_read_page_by_page(tmp_path: Path) -> None:
    cluster, clock = FakeCluster(), SetClock()
    names = [f"job-{i}" for i in range(7)]
    for name in names:
        cluster.apply(workload(name))
    store = CollectorStore(tmp_path, "gpu-west")
    collector = ClusterCollector("gpu-west", cluster, store, clock=clock, page_size=3)  # type: ignore[arg-type]
    collect_cluster(collector, ONCE, threading.Event())
    assert len(cluster.listings) == 3  # 3 + 3 + 1
    assert sorted(w.uid for w in store.workloads()) == sorted(uid_of(n) for n in names)
    assert store.checkpoint().resource_version == "7"


def test_following_retries_a_dropped_watch_from_its_checkpoint_and_stops_cleanly(tmp_path: Path) -> None:
    """Following: a watch dropped after one event is a temporary failure, retried from the
    checkpoint (no event twice); a stop request (SIGTERM) during a watch ends the collection with
    the open range reaching the moment it stopped."""
    cluster, clock = FakeCluster(), SetClock()
    cluster.apply(workload("train-a"))  # 1
    store = CollectorStore(tmp_path, "gpu-west")
    _run_once(cluster, store, clock)  # lists at T0, bookmark at once
    cluster.apply(workload("train-a", admitted=T0 + timedelta(minutes=3)))  # 2
    last = workload("train-a", admitted=T0 + timedelta(minutes=3), finished=T0 + timedelta(minutes=7))
    cluster.apply(last)  # 3
    cluster.drop_watch_after = 1
    stop, second = threading.Event(), timedelta(seconds=1)
    clock.now = T0 + HOUR
    api = Arriving(cluster, clock, first=T0 + HOUR + 10 * second, stop=stop, stop_on_watch=3)
    follow = CollectOptions(once=False, watch_seconds=30, pause_s=0)
    summary = run_cluster("gpu-west", lambda: api, store, follow, stop, clock=clock,  # type: ignore[arg-type,return-value]
                          backoff=Backoff(base_s=0, cap_s=0))
    assert summary.failure is None and summary.events_applied == 2
    assert cluster.watches == ["1", "1", "2", "3"]  # dropped after event 2; from 2; then from 3 until stopped
    assert api.delivered == ["2", "3", "3", "3"]  # event 2; event 3 and a bookmark; the last watch's bookmark
    [kept] = store.workloads()
    assert kept.body["status"] == last.body["status"]
    # The first run's range was a point (listed and caught up at T0): it covered no time, and is not kept.
    assert summary.coverage == (CoveredRange(start=T0 + HOUR, end=T0 + HOUR + 10 * second, began="resume"),
                                CoveredRange(start=T0 + HOUR + 10 * second, end=T0 + HOUR + 40 * second,
                                             began="resume"))


def test_following_waits_for_a_cluster_unreachable_at_start(tmp_path: Path) -> None:
    """Following, a cluster whose client cannot be made yet (its API unreachable) is tried again."""
    cluster, clock, stop = FakeCluster(), SetClock(), threading.Event()
    cluster.apply(workload("train-a"))
    attempts: list[int] = []

    def api_for() -> Arriving:
        attempts.append(len(attempts))
        if len(attempts) == 1:
            raise ConnectionRefusedError("connection refused")
        return Arriving(cluster, clock, first=T0 + timedelta(seconds=5), stop=stop, stop_on_watch=1)

    lines: list[str] = []
    summary = run_cluster("gpu-west", api_for, CollectorStore(tmp_path, "gpu-west"),  # type: ignore[arg-type]
                          CollectOptions(once=False, pause_s=0), stop, clock=clock, progress=lines.append,
                          backoff=Backoff(base_s=0, cap_s=0))
    assert len(attempts) == 2 and summary.failure is None and summary.workloads_kept == 1
    assert lines[0] == "gpu-west: ConnectionRefusedError: connection refused; trying again in 0 s"


def test_once_a_failure_is_the_clusters_summary_not_a_retry(tmp_path: Path) -> None:
    cluster = FakeCluster()
    cluster.list_error = ConnectionResetError("connection reset by peer")
    summary = run_cluster("gpu-west", lambda: cluster, CollectorStore(tmp_path, "gpu-west"), ONCE,
                          threading.Event(), backoff=Backoff(base_s=0, cap_s=0))
    assert summary.failure is not None and (summary.failure.kind, summary.failure.reason) == ("temporary", "connection")
    assert len(cluster.listings) == 1 and summary.coverage == ()


def test_a_listing_rewrites_only_the_workloads_that_changed(tmp_path: Path) -> None:
    cluster, clock = FakeCluster(), SetClock()
    _history(cluster)
    store = CollectorStore(tmp_path, "gpu-west")
    _run_once(cluster, store, clock)
    before = {p.name: p.stat().st_ino for p in (store.root / WORKLOADS_DIR).iterdir()}
    cluster.apply(workload("eval-c", team="nlp"))
    cluster.compact()  # the resume from 2 is refused: listed again, train-a and train-b as they were
    _run_once(cluster, store, clock)
    after = {p.name: p.stat().st_ino for p in (store.root / WORKLOADS_DIR).iterdir()}
    assert len(cluster.listings) == 2
    assert after == {**before, f"{uid_of('eval-c', 'nlp')}.json": after[f"{uid_of('eval-c', 'nlp')}.json"]}
