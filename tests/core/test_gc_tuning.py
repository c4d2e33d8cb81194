"""The collector tuned for bulk work is put back exactly as it was: a long-lived process (the
daemon) must not keep objects frozen out of the collector's reach, or a changed threshold, after
a scan or a capture."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

from hypergov.gc_tuning import BULK_YOUNG_THRESHOLD, bulk_work


def test_bulk_work_freezes_then_puts_everything_back() -> None:
    before_threshold, before_frozen = gc.get_threshold(), gc.get_freeze_count()
    kept = [object() for _ in range(10)]  # something alive to freeze
    with bulk_work():
        assert gc.get_threshold()[0] == BULK_YOUNG_THRESHOLD
        assert gc.get_freeze_count() > before_frozen
    assert gc.get_threshold() == before_threshold
    assert gc.get_freeze_count() == before_frozen
    assert kept


def test_overlapping_blocks_keep_the_tuning_until_the_last_ends() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    inner_done, outer_may_end = threading.Event(), threading.Event()

    def other() -> None:
        with bulk_work():
            outer_may_end.set()
            inner_done.wait(5)

    with bulk_work():
        thread = threading.Thread(target=other)
        thread.start()
        assert outer_may_end.wait(5)
    assert gc.get_threshold()[0] == BULK_YOUNG_THRESHOLD, "the other thread's block still runs"
    inner_done.set()
    thread.join(5)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen


def test_an_error_in_the_block_puts_the_collector_back() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    try:
        with bulk_work():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen


def test_a_bulk_process_is_tuned_for_its_whole_life() -> None:
    code = ("import gc; from hypergov.gc_tuning import tune_for_bulk_process, BULK_YOUNG_THRESHOLD as T; "
            "tune_for_bulk_process(); print(gc.get_threshold()[0] == T, gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]
