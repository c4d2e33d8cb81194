"""The covered ranges (pure) and the collector's state files. No kube-apiserver is involved: these
are the decisions and the disk alone."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from engines.outcomes import classify
from tests.usage.collector_fixtures import T0, workload
from usage.collector_state import Checkpoint, KeptWorkload, MalformedWorkload, after_listing, workload_uid
from usage.collector_store import CollectorBusyError, CollectorStore, UsageStateUnreadable
from usage.coverage import CoveredRange, accounted, extended, opened, uncovered

MINUTE = timedelta(minutes=1)


def test_a_range_opens_no_earlier_than_the_last_one_ended() -> None:
    first = extended(opened((), T0, "list"), T0 + 10 * MINUTE)
    assert first == (CoveredRange(T0, T0 + 10 * MINUTE, "list"),)
    set_back = opened(first, T0 + 5 * MINUTE, "resume")  # the clock went back 5 minutes between runs
    assert set_back[-1] == CoveredRange(T0 + 10 * MINUTE, T0 + 10 * MINUTE, "resume")
    assert extended(set_back, T0 + 8 * MINUTE)[-1].end == T0 + 10 * MINUTE  # never backwards either


def test_an_empty_range_is_replaced_by_the_next() -> None:
    refused = opened(extended(opened((), T0, "list"), T0 + MINUTE), T0 + 2 * MINUTE, "resume")
    assert opened(refused, T0 + 2 * MINUTE, "list") == (CoveredRange(T0, T0 + MINUTE, "list"),
                                                        CoveredRange(T0 + 2 * MINUTE, T0 + 2 * MINUTE, "list"))


def test_extending_without_an_open_range_is_a_bug() -> None:
    with pytest.raises(ValueError, match="no range is open"):
        extended((), T0)


def test_uncovered_is_every_part_no_range_covers() -> None:
    ranges = (CoveredRange(T0 + 10 * MINUTE, T0 + 20 * MINUTE, "list"),
              CoveredRange(T0 + 30 * MINUTE, T0 + 40 * MINUTE, "resume"))
    assert uncovered(ranges, T0, T0 + 60 * MINUTE) == [
        (T0, T0 + 10 * MINUTE), (T0 + 20 * MINUTE, T0 + 30 * MINUTE), (T0 + 40 * MINUTE, T0 + 60 * MINUTE)]
    assert uncovered(ranges, T0 + 12 * MINUTE, T0 + 18 * MINUTE) == []
    assert uncovered((), T0, T0 + MINUTE) == [(T0, T0 + MINUTE)]


def test_a_listing_marks_the_kept_workloads_it_no_longer_holds_as_deleted() -> None:
    a, b, c = (workload(name).body for name in ("a", "b", "c"))
    kept = {workload_uid(body): KeptWorkload(workload_uid(body), body) for body in (a, b)}
    outcome = after_listing(kept, [a, c])
    assert sorted(w.uid for w in outcome.listed) == sorted([workload_uid(a), workload_uid(c)])
    assert outcome.gone == (KeptWorkload(workload_uid(b), b, deleted=True),)
    assert after_listing({w.uid: w for w in outcome.gone}, []).gone == ()  # gone once, not again


@pytest.mark.parametrize("uid", ["", "../../etc/passwd", "a/b"])
def test_a_workload_without_a_usable_uid_is_refused(uid: str) -> None:
    body = {**workload("a").body, "metadata": {"name": "a", "namespace": "n", "uid": uid}}
    with pytest.raises(MalformedWorkload):
        workload_uid(body)


def test_the_checkpoint_round_trips_and_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    store = CollectorStore(tmp_path, "gpu-west")
    assert store.checkpoint() == Checkpoint(resource_version=None)  # nothing yet: list first
    written = Checkpoint("42", (CoveredRange(T0, T0 + MINUTE, "list"), CoveredRange(T0 + 2 * MINUTE, T0 + 3 * MINUTE,
                                                                                   "resume")))
    store.save(written)
    store.put(KeptWorkload("u-1", workload("a").body))
    assert CollectorStore(tmp_path, "gpu-west").checkpoint() == written
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["checkpoint.json", "u-1.json"]
    assert json.loads((tmp_path / "checkpoint.json").read_text())["coverage"][0] == {
        "start": "2026-03-02T10:00:00Z", "end": "2026-03-02T10:01:00Z", "began": "list"}


def test_an_unreadable_checkpoint_is_a_permanent_error_saying_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "checkpoint.json").write_text("{not json")
    with pytest.raises(UsageStateUnreadable) as raised:
        CollectorStore(tmp_path, "gpu-west").checkpoint()
    assert "move it aside" in str(raised.value) and classify(raised.value).kind == "permanent"


def test_one_collector_per_cluster(tmp_path: Path) -> None:
    store = CollectorStore(tmp_path, "gpu-west")
    with store.held(), pytest.raises(CollectorBusyError) as raised, CollectorStore(tmp_path, "gpu-west").held():
        pass
    assert f"(pid {os.getpid()})" in str(raised.value) and "gpu-west" in str(raised.value)
    with store.held():  # released when its holder let go
        pass


def test_the_gap_before_a_resumed_watch_is_accounted_and_before_a_listing_is_missing() -> None:
    """Ranges: list 10:00-10:10, resume 10:30-10:40 (the watch resumed from the checkpoint: it got
    every change of 10:10-10:30), list 11:00-11:10 (a re-list after expiry: 10:40-11:00 unseen),
    resume 11:20-11:30. Complete: 10:00-10:40 and 11:00-11:30; missing: 10:40-11:00."""
    coverage = (CoveredRange(T0, T0 + 10 * MINUTE, "list"), CoveredRange(T0 + 30 * MINUTE, T0 + 40 * MINUTE, "resume"),
                CoveredRange(T0 + 60 * MINUTE, T0 + 70 * MINUTE, "list"),
                CoveredRange(T0 + 80 * MINUTE, T0 + 90 * MINUTE, "resume"))

    assert accounted(coverage) == [(T0, T0 + 40 * MINUTE), (T0 + 60 * MINUTE, T0 + 90 * MINUTE)]


def test_a_first_range_that_resumed_reaches_back_to_nothing() -> None:
    """With no range before it (older ranges dropped), a resumed range is complete from its own start only."""
    assert accounted((CoveredRange(T0, T0 + 10 * MINUTE, "resume"),)) == [(T0, T0 + 10 * MINUTE)]
