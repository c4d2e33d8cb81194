"""Deleted workloads are retired from the collector's live files to the day's finished segment:
nothing is lost or counted twice when the collector dies between the two, when a deletion is
replayed, or when a crash tears the segment's last line; and a collector started on a store an
earlier version wrote (deleted workloads as live files) retires them."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

from tests.engines.kube_fakes import FakeCluster
from tests.usage.collector_fixtures import T0, SetClock, uid_of, workload
from usage.collect import ClusterCollector, CollectOptions, collect_cluster
from usage.collector_state import ClosedAttempt, KeptWorkload
from usage.collector_store import ATTEMPTS_DIR, FINISHED_DIR, WORKLOADS_DIR, CollectorStore
from usage.resources import GPU_UNITS, ResourceKind
from usage.spans_from_store import cluster_spans

P5 = "ml.p5.48xlarge"


def _finished(name: str = "train-a") -> KeptWorkload:
    body = workload(name, admitted=T0 + timedelta(minutes=1), finished=T0 + timedelta(minutes=31)).body
    return KeptWorkload(uid=uid_of(name), body=body, deleted=True)


def _attempt(start_minute: int) -> ClosedAttempt:
    start = int((T0 + timedelta(minutes=start_minute)).timestamp())
    return ClosedAttempt(team="vision", priority_class=None, start=start, end=start + 600,
                         preempted=True, units=((P5, ResourceKind.GPU, 8 * GPU_UNITS),))


def test_a_retired_workload_leaves_the_live_files_and_keeps_its_attempts(tmp_path: Path) -> None:
    store = CollectorStore(tmp_path, "gpu-west")
    gone = _finished()
    store.put(KeptWorkload(uid=gone.uid, body=gone.body))
    store.record_attempt(gone.uid, _attempt(-20))
    store.retire(gone, T0)
    assert list((tmp_path / WORKLOADS_DIR).iterdir()) == [] and list((tmp_path / ATTEMPTS_DIR).iterdir()) == []
    (record,) = store.retired().values()
    assert (record.uid, record.attempts) == (gone.uid, (_attempt(-20),))
    assert store.retired_bodies() == {gone.uid: gone.body}
    assert record.last is not None and (record.last.start, record.last.end, record.last.preempted) == (
        int((T0 + timedelta(minutes=1)).timestamp()), int((T0 + timedelta(minutes=31)).timestamp()), False)
    assert [w.deleted for w in store.workloads()] == [True]
    assert store.retired(since_day="2026-03-03") == {}  # retired on the 2nd: it ran before the 3rd


def test_a_replayed_deletion_and_a_crash_before_the_removal_count_once(tmp_path: Path) -> None:
    """The collector died after the segment line, before removing the live files; the deletion is
    replayed (a second, equal line; its attempts file already gone on one path): one workload, its
    30 minutes of 8 GPUs once."""
    store = CollectorStore(tmp_path, "gpu-west")
    gone = _finished()
    store.put(KeptWorkload(uid=gone.uid, body=gone.body))
    store.record_attempt(gone.uid, _attempt(-20))
    unlink = Path.unlink
    Path.unlink = lambda self, missing_ok=False: None  # type: ignore[method-assign,assignment]
    try:
        store.retire(gone, T0)  # "dies" before the removal: the live files stay
    finally:
        Path.unlink = unlink  # type: ignore[method-assign]
    assert (tmp_path / WORKLOADS_DIR / f"{gone.uid}.json").exists()
    (tmp_path / ATTEMPTS_DIR / f"{gone.uid}.json").unlink()
    store.retire(gone, T0)  # the replayed deletion, without the attempts file
    for kind in ("bodies", "attempts"):
        assert len((tmp_path / FINISHED_DIR / f"{kind}-2026-03-02.jsonl").read_text().splitlines()) == 2
    (record,) = store.retired().values()
    assert record.attempts == (_attempt(-20),)  # merged by start
    spans = cluster_spans(store, now=int(T0.timestamp()) + 7200)
    assert sorted((s.start, s.end, s.preempted) for s in spans) == sorted([
        (_attempt(-20).start, _attempt(-20).end, True),
        (int((T0 + timedelta(minutes=1)).timestamp()), int((T0 + timedelta(minutes=31)).timestamp()), False)])


def test_a_torn_last_line_is_skipped_and_the_next_line_is_whole(tmp_path: Path) -> None:
    store = CollectorStore(tmp_path, "gpu-west")
    segment = tmp_path / FINISHED_DIR / "attempts-2026-03-02.jsonl"
    segment.parent.mkdir(parents=True)
    segment.write_text('{"uid": "half-writ')  # a crash mid-line: its workload's live files were kept
    gone = _finished()
    store.retire(gone, T0)
    assert list(store.retired()) == [gone.uid]
    assert segment.read_text().splitlines()[0] == '{"uid": "half-writ'


def test_a_collector_retires_deleted_workloads_an_earlier_version_kept_live(tmp_path: Path) -> None:
    store = CollectorStore(tmp_path, "gpu-west")
    gone = _finished()
    store.put(gone)  # deleted, as a live file
    cluster, clock = FakeCluster(), SetClock(now=T0 + timedelta(hours=2))
    collector = ClusterCollector("gpu-west", cluster, store, clock=clock)  # type: ignore[arg-type]
    assert collector.kept == {} and collector.retired == 1
    assert list(store.retired()) == [gone.uid] and (tmp_path / FINISHED_DIR / "bodies-2026-03-02.jsonl").exists()
    collect_cluster(collector, CollectOptions(once=True, watch_seconds=30, page_size=500, pause_s=0),
                    threading.Event())
    assert [w.uid for w in store.workloads()] == [gone.uid]


def test_an_attempt_running_when_its_workload_is_deleted_ends_at_the_deletion(tmp_path: Path) -> None:
    """Admitted at 10:01, never finished, deleted: with `metadata.deletionTimestamp` 10:41 it held
    its quota until 10:41; without one, until the collector saw the deletion (11:00)."""
    store = CollectorStore(tmp_path, "gpu-west")
    running = workload("train-a", admitted=T0 + timedelta(minutes=1)).body
    marked = {**running, "metadata": {**running["metadata"], "deletionTimestamp": "2026-03-02T10:41:00Z"}}
    store.retire(KeptWorkload(uid="marked", body=marked, deleted=True), T0 + timedelta(hours=1))
    store.retire(KeptWorkload(uid="unmarked", body=running, deleted=True), T0 + timedelta(hours=1))
    ends = {r.uid: r.last.end for r in store.retired().values() if r.last is not None}
    assert ends == {"marked": int((T0 + timedelta(minutes=41)).timestamp()),
                    "unmarked": int((T0 + timedelta(hours=1)).timestamp())}
    spans = cluster_spans(store, now=int((T0 + timedelta(days=9)).timestamp()))  # not "running until now"
    assert sorted(s.end for s in spans) == sorted(ends.values())


def test_a_record_read_under_other_rules_is_read_again_from_its_body(tmp_path: Path) -> None:
    store = CollectorStore(tmp_path, "gpu-west")
    store.retire(_finished(), T0)
    segment = tmp_path / FINISHED_DIR / "attempts-2026-03-02.jsonl"
    old = segment.read_text().replace('"rules":1', '"rules":0').replace('"end":1772447460', '"end":1')
    segment.write_text(old)
    (span,) = cluster_spans(store, now=int(T0.timestamp()) + 7200)
    assert span.end == int((T0 + timedelta(minutes=31)).timestamp())  # from the body, not the stale record
