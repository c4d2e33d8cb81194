"""The pure lease decisions (`engines.leases`), as client-go's leader election takes them
(k8s.io/client-go/tools/leaderelection: a record unchanged for LeaseDuration as the candidate
observed it may be taken; the holder gives up after RenewDeadline without a renewal; defaults
15 s / 10 s / 2 s), plus the fencing epoch: a new holder's epoch is higher than every earlier one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.leases import (
    LEASE_DURATION_S,
    RENEW_DEADLINE_S,
    RETRY_PERIOD_S,
    Lease,
    LeaseTiming,
    Observed,
    claim,
    expired,
    lost,
    observe,
    renewal,
)
from engines.objects import Versioned


def test_the_defaults_are_client_gos() -> None:
    # leaderelection's documented defaults (as kube-controller-manager and kube-scheduler use them).
    assert (LEASE_DURATION_S, RENEW_DEADLINE_S, RETRY_PERIOD_S) == (15.0, 10.0, 2.0)
    LeaseTiming()  # satisfies retry < renew deadline < duration
    with pytest.raises(ValueError):
        LeaseTiming(duration_s=10.0, renew_deadline_s=10.0)


def _seen(holder: str, epoch: int, *, since: float, etag: str = "e1") -> Observed:
    return Observed(Lease(holder=holder, epoch=epoch, duration_s=15.0), etag, since)


@pytest.mark.parametrize(("seen", "now", "wanted"), [
    pytest.param(Observed(None, None, 0.0), 0.0, ("b", 1), id="no-record-first-epoch"),
    pytest.param(_seen("a", 4, since=100.0), 114.9, None, id="live-holder-kept"),
    pytest.param(_seen("a", 4, since=100.0), 115.0, ("b", 5), id="unchanged-for-a-duration-taken-next-epoch"),
    pytest.param(_seen("", 4, since=100.0), 100.0, ("b", 5), id="released-taken-at-once"),
    pytest.param(_seen("b", 4, since=100.0), 101.0, ("b", 4), id="own-lease-renewed-same-epoch"),
])
def test_claim(seen: Observed, now: float, wanted: tuple[str, int] | None) -> None:
    got = claim(seen, me="b", now=now, duration_s=15.0)
    assert (None if got is None else (got.holder, got.epoch)) == wanted


def test_the_observation_restarts_only_when_the_version_changes() -> None:
    read = Versioned({"holder": "a", "epoch": 2, "duration_s": 15.0}, "e1")
    first = observe(None, read, now=10.0)
    assert observe(first, read, now=24.0).since == 10.0  # same version: still since 10 (expired at 25)
    assert expired(observe(first, read, now=25.0), now=25.0)
    renewed = Versioned({"holder": "a", "epoch": 2, "duration_s": 15.0, "renewed_at": "x"}, "e2")
    assert observe(first, renewed, now=24.0).since == 24.0  # renewed: alive for another duration


@pytest.mark.parametrize(("current", "wanted"), [
    pytest.param(Lease("me", 3, 15.0), 3, id="still-ours"),
    pytest.param(Lease("other", 4, 15.0), None, id="taken"),
    pytest.param(Lease("", 3, 15.0), None, id="released"),
    pytest.param(Lease("me", 2, 15.0), None, id="an-older-term-of-ours"),
    pytest.param(None, None, id="deleted"),
])
def test_renewal(current: Lease | None, wanted: int | None) -> None:
    got = renewal(current, me="me", epoch=3)
    assert (None if got is None else got.epoch) == wanted


def test_a_holder_that_did_not_renew_for_the_renew_deadline_has_lost_it() -> None:
    assert not lost(100.0, now=109.9, renew_deadline_s=RENEW_DEADLINE_S)
    assert lost(100.0, now=110.0, renew_deadline_s=RENEW_DEADLINE_S)


# --- properties over sequences of events ---------------------------------------------------------

Event = tuple[str, str, float]  # (candidate, "claim" | "renew" | "release", time step)
events = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["claim", "renew", "release"]),
                            st.floats(min_value=0.0, max_value=20.0)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(events)
def test_epochs_only_grow_and_a_holder_keeps_one_epoch(history: list[Event]) -> None:
    """One record written through compare-and-swap by three candidates, each observing it with
    its own clock: the epoch never goes down; it goes up exactly when the holder changes to a
    candidate (a renewal keeps it); whoever holds it, held it by a claim."""
    record: Lease | None = None
    version = 0
    views: dict[str, Observed] = {}
    now = 0.0
    for who, what, step in history:
        now += step
        read = Versioned(record.as_record(), str(version)) if record else None
        seen = views[who] = observe(views.get(who), read, now=now)
        if what == "claim":
            new = claim(seen, me=who, now=now, duration_s=15.0)
        elif what == "renew":
            new = renewal(record, me=who, epoch=record.epoch if record else 0)
        else:
            new = (Lease("", record.epoch, 15.0) if record and record.holder == who else None)
        if new is None:
            continue
        before = record
        record, version = new, version + 1
        if before is not None:
            assert record.epoch >= before.epoch
            if record.holder and record.holder != before.holder:
                assert record.epoch == before.epoch + 1
            if record.holder == before.holder:
                assert record.epoch == before.epoch


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0.0, max_value=1000.0), st.floats(min_value=0.0, max_value=1000.0))
def test_a_holder_stops_before_anyone_may_take_its_lease(last_renewed: float, now: float) -> None:
    """Whoever observed the last renewal at or after the holder made it cannot see it expired
    before the holder itself considers it lost (renew deadline < duration)."""
    seen = Observed(Lease("a", 1, LEASE_DURATION_S), "e", last_renewed)
    if expired(seen, now=now):
        assert lost(last_renewed, now=now, renew_deadline_s=RENEW_DEADLINE_S)
