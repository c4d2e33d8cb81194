"""A terraform S3 lock (`<key>.tflock`, Terraform's statemgr.LockInfo as JSON: ID, Operation, Who,
Version, Created, Path; no process id) left by a dead holder: pure decision. The holder is
provably dead when the caller took the stack's lease from a holder whose lease expired and the
lock was created before that; a lock taken after, or without an ID or time, is left alone. The
same with real terraform killed while holding the lock:
tests/integration/test_state_in_s3.py::test_a_lock_left_by_a_killed_terraform_is_recognised_and_freed_by_the_stacks_next_holder."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engines.terraform.backend import StateLock, _created, dead_lock

TAKEN = datetime(2026, 12, 3, 7, 30, 0, tzinfo=UTC)


@pytest.mark.parametrize(("lock", "dead"), [
    pytest.param(StateLock("a1b2", "root@node-1", "OperationTypeApply", datetime(2026, 12, 3, 7, 29, 40, tzinfo=UTC)),
                 True, id="created-before-the-lease-was-taken"),
    pytest.param(StateLock("a1b2", "root@node-2", "OperationTypePlan", datetime(2026, 12, 3, 7, 30, 1, tzinfo=UTC)),
                 False, id="created-after-someone-else-now"),
    pytest.param(StateLock("", "?", "", None), False, id="unreadable-left-to-terraform"),
    pytest.param(None, False, id="no-lock"),
])
def test_dead_lock(lock: StateLock | None, dead: bool) -> None:
    assert dead_lock(lock, lease_taken_at=TAKEN) is dead


@pytest.mark.parametrize(("text", "wanted"), [
    # Go's time.Time JSON (RFC 3339 with nanoseconds), as terraform writes Created.
    pytest.param("2026-12-03T07:29:40.123456789Z", datetime(2026, 12, 3, 7, 29, 40, 123456, tzinfo=UTC), id="utc-ns"),
    pytest.param("2026-12-03T08:29:40+01:00", datetime(2026, 12, 3, 7, 29, 40, tzinfo=UTC), id="offset"),
    pytest.param("yesterday", None, id="not-a-time"),
])
def test_terraform_lock_times_are_read(text: str, wanted: datetime | None) -> None:
    assert _created(text) == wanted
