"""Leases on S3 objects (`engines.leases.Leases`) in the embedded endpoint's S3, with a clock the
test moves: of two candidates deciding at once only one holds the lease (the other's conditional
write loses); a holder that stops renewing loses it to another after the lease duration, at the
next epoch; a renewal after that fails and marks the lease lost; a released lease is taken at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedded_aws import EmbeddedAws
from engines.leases import LEADER, Held, Keeper, Leases, StaleEpochError
from engines.objects import S3Records


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def records(aws: EmbeddedAws, tmp_path: Path) -> S3Records:
    s3 = aws.client("s3", region="us-east-1")
    bucket = f"leases-{abs(hash(tmp_path.name)) % 10**12}"
    s3.create_bucket(Bucket=bucket)
    return S3Records(s3, bucket=bucket, prefix="prod/reconciler")


def _two(records: S3Records, clock: Clock) -> tuple[Leases, Leases]:
    return (Leases(records, me="host:1:aaaa", clock=clock),  # type: ignore[arg-type]
            Leases(records, me="host:2:bbbb", clock=clock))  # type: ignore[arg-type]


def test_of_two_candidates_deciding_at_once_one_holds_the_lease(records: S3Records) -> None:
    clock = Clock()
    a, b = _two(records, clock)
    seen_a, seen_b = a.look(LEADER), b.look(LEADER)  # both saw no record
    assert seen_a.lease is None and seen_b.lease is None
    first = a.try_acquire(LEADER)
    second = b.try_acquire(LEADER)
    assert first is not None and first.epoch == 1 and second is None
    current = a.current(LEADER)
    assert current is not None and current.holder == "host:1:aaaa"


def test_a_silent_holder_loses_the_lease_after_the_duration_at_the_next_epoch(records: S3Records) -> None:
    clock = Clock()
    a, b = _two(records, clock)
    held = a.try_acquire(LEADER)
    assert held is not None
    assert b.try_acquire(LEADER) is None  # b observes it now
    clock.now += 14.9
    assert b.try_acquire(LEADER) is None
    clock.now += 0.1  # 15 s without a change, as b saw it
    taken = b.try_acquire(LEADER)
    assert taken is not None and taken.epoch == held.epoch + 1
    assert not a.renew(held) and held.lost.is_set()  # the old holder finds it gone and stops
    with pytest.raises(StaleEpochError):
        held.check()


def test_renewals_keep_the_lease_from_expiring(records: S3Records) -> None:
    clock = Clock()
    a, b = _two(records, clock)
    held = a.try_acquire(LEADER)
    assert held is not None and b.try_acquire(LEADER) is None
    for _ in range(20):  # 40 s, renewed every 2 s
        clock.now += 2.0
        assert a.renew(held)
        assert b.try_acquire(LEADER) is None
    assert held.epoch == 1 and not held.lost.is_set()


def test_the_keeper_marks_a_lease_lost_after_the_renew_deadline_without_a_renewal(records: S3Records) -> None:
    clock = Clock()
    a, _ = _two(records, clock)
    held = a.try_acquire("stacks/project-vision")
    assert held is not None
    lost: list[Held] = []
    keeper = Keeper(a, on_lost=lost.append)
    keeper.keep(held)
    bucket = records.bucket
    records.bucket = "no-such-bucket-for-this-test"  # S3 unreachable for the renewals
    clock.now += 9.9
    keeper.tick()
    assert not held.lost.is_set()  # within the renew deadline: still ours
    clock.now += 0.1
    keeper.tick()
    assert held.lost.is_set() and lost == [held]
    records.bucket = bucket


def test_a_released_lease_is_taken_at_once_and_keeps_what_was_recorded(records: S3Records) -> None:
    clock = Clock()
    a, b = _two(records, clock)
    held = a.try_acquire("stacks/project-speech")
    assert held is not None and b.try_acquire("stacks/project-speech") is None
    a.release(held, done="pass-1")
    taken = b.try_acquire("stacks/project-speech")
    assert taken is not None and taken.epoch == 2
    current = b.current("stacks/project-speech")
    assert current is not None and current.extra == {"done": "pass-1"}



def test_a_release_that_meets_a_renewal_begun_before_it_still_releases(
        records: S3Records, monkeypatch: pytest.MonkeyPatch) -> None:
    """The keeper drops a lease before it is released, but a renewal it had already begun may land
    between the release's read and its conditional write. Seen under load: the release lost that
    race, the lease stayed held until it expired, and the next pass left the stack alone."""
    clock = Clock()
    a, b = _two(records, clock)
    held = a.try_acquire("stacks/project-speech")
    assert held is not None
    original, raced = records.write, []

    def renewal_lands_first(name: str, data: dict[str, object], *, expected: str | None) -> str:
        if data.get("holder") == "" and not raced:
            raced.append(name)
            assert a.renew(held)  # the keeper's renewal, begun before the drop, is written first
        return original(name, data, expected=expected)

    monkeypatch.setattr(records, "write", renewal_lands_first)
    a.release(held, done="pass-1")
    assert raced  # the race happened
    taken = b.try_acquire("stacks/project-speech")
    assert taken is not None and taken.epoch == 2  # released all the same: taken at once
    current = b.current("stacks/project-speech")
    assert current is not None and current.extra == {"done": "pass-1"}
