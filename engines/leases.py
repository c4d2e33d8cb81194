"""Leases for several reconcilers on one state bucket: who leads a pass, who applies which stack.

A lease is a record (`engines.objects`: an S3 object in the state bucket, written with conditional
writes) naming its holder, an epoch and how long it lasts. The decisions are client-go's leader
election (`k8s.io/client-go/tools/leaderelection`), with its default timings:
- a candidate takes a lease nobody holds (no record, or released), or one whose record has not
  changed for a whole lease duration *as this candidate observed it* (its own monotonic clock from
  the moment it first saw that version: no clock is compared across machines);
- the holder renews every retry period; when it has not renewed for the renew deadline it stops
  writing (it has lost the lease), before anybody else may take it (renew deadline < duration);
- a new holder gets the next epoch: a fencing token that every record written under the lease
  carries and that a write checks (`StaleEpochError`: a newer holder exists, nothing is written).

Two candidates that decide at once both write with the version they read; S3 accepts one
(`If-Match` / `If-None-Match: *`), the other gets `WriteConflict` and does not hold the lease.
The decisions (`observe`, `claim`, `renewal`, `lost`) are pure; `Leases` does the I/O and
`Keeper` renews in a background thread.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NewType

from engines.objects import Record, RecordStore, Versioned, WriteConflict
from engines.outcomes import TemporaryError

# client-go's defaults (leaderelection.LeaderElectionConfig, as kube-controller-manager sets them):
# one source for these numbers.
LEASE_DURATION_S = 15.0
RENEW_DEADLINE_S = 10.0
RETRY_PERIOD_S = 2.0

HolderId = NewType("HolderId", str)
LEADER = "leader"  # the lease of a pass's leader; stack leases are "stacks/<stack>"


class StaleEpochError(TemporaryError):
    """A write under a lease that a newer holder (a higher epoch) has taken; nothing was written."""

    reason = "stale-epoch"
    retry_after_s = RETRY_PERIOD_S


def new_holder() -> HolderId:
    """This process as a lease holder: host and pid for people, a random part for uniqueness."""
    return HolderId(f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}")


def holder_pid(holder: str) -> int | None:
    """The pid a holder id names (`host:pid:random`), for tests and `status`."""
    parts = holder.split(":")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


@dataclass(frozen=True)
class LeaseTiming:
    duration_s: float = LEASE_DURATION_S
    renew_deadline_s: float = RENEW_DEADLINE_S
    retry_s: float = RETRY_PERIOD_S

    def __post_init__(self) -> None:
        if not 0 < self.retry_s < self.renew_deadline_s < self.duration_s:
            raise ValueError("lease timings need 0 < retry < renew deadline < duration (client-go's rule)")


@dataclass(frozen=True)
class Lease:
    holder: str  # "" once released
    epoch: int
    duration_s: float
    renewed_at: str = ""  # wall clock, for people only (expiry uses each observer's own clock)
    extra: Record = field(default_factory=dict)  # e.g. a stack lease's `done`: the pass it completed

    def as_record(self) -> Record:
        return {**self.extra, "holder": self.holder, "epoch": self.epoch, "duration_s": self.duration_s,
                "renewed_at": self.renewed_at}

    @classmethod
    def of(cls, data: Record) -> Lease:
        extra = {k: v for k, v in data.items() if k not in ("holder", "epoch", "duration_s", "renewed_at")}
        return cls(holder=str(data.get("holder") or ""), epoch=int(data.get("epoch") or 0),
                   duration_s=float(data.get("duration_s") or LEASE_DURATION_S),
                   renewed_at=str(data.get("renewed_at") or ""), extra=extra)


@dataclass(frozen=True)
class Observed:
    """A lease record as one candidate saw it, and since when (its monotonic clock) unchanged."""

    lease: Lease | None  # None: no record yet
    etag: str | None
    since: float


def observe(previous: Observed | None, read: Versioned | None, *, now: float) -> Observed:
    """Pure: the observation after reading `read`: `since` moves only when the version changed."""
    etag = read.etag if read else None
    if previous is not None and previous.etag == etag:
        return previous
    return Observed(Lease.of(read.data) if read else None, etag, now)


def expired(seen: Observed, *, now: float) -> bool:
    """Pure: nobody renewed it for a whole lease duration, as this observer's clock measured."""
    return seen.lease is not None and now - seen.since >= seen.lease.duration_s


def claim(seen: Observed, *, me: str, now: float, duration_s: float, stamp: str = "") -> Lease | None:
    """Pure: the record to write to hold the lease, or None (another holder is live). A new holder
    (or a new term after a release) gets the next epoch; the live holder's renewal keeps it."""
    current = seen.lease
    if current is None:
        return Lease(holder=me, epoch=1, duration_s=duration_s, renewed_at=stamp)
    if current.holder == me:
        return Lease(holder=me, epoch=current.epoch, duration_s=duration_s, renewed_at=stamp, extra=current.extra)
    if current.holder == "" or expired(seen, now=now):
        return Lease(holder=me, epoch=current.epoch + 1, duration_s=duration_s, renewed_at=stamp, extra=current.extra)
    return None


def renewal(current: Lease | None, *, me: str, epoch: int, stamp: str = "") -> Lease | None:
    """Pure: the renewed record, or None when the lease is no longer ours (taken or released)."""
    if current is None or current.holder != me or current.epoch != epoch:
        return None
    return Lease(holder=me, epoch=epoch, duration_s=current.duration_s, renewed_at=stamp, extra=current.extra)


def lost(last_renewed: float, *, now: float, renew_deadline_s: float) -> bool:
    """Pure: a holder that could not renew for the renew deadline stops acting as the holder."""
    return now - last_renewed >= renew_deadline_s


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Held:
    """A lease this process holds: its name, epoch and the version it last wrote."""

    name: str
    epoch: int
    etag: str
    renewed: float  # monotonic time of the last successful write
    lost: threading.Event = field(default_factory=threading.Event)
    taken_from: str | None = None  # the holder whose lease expired (it is dead, or cut off), if any
    taken_at: datetime = field(default_factory=lambda: datetime.now(UTC))  # wall clock, for terraform's locks

    def check(self) -> None:
        """Raise StaleEpochError when this lease was lost: a write under it must not happen."""
        if self.lost.is_set():
            raise StaleEpochError(f"the lease {self.name} (epoch {self.epoch}) was lost; another reconciler "
                                  "may hold it now, so nothing is written under it")


@dataclass
class Leases:
    """Lease I/O on a record store, for one holder. Remembers what it observed (for expiry)."""

    store: RecordStore
    me: HolderId
    timing: LeaseTiming = LeaseTiming()
    clock: Callable[[], float] = time.monotonic
    prefix: str = "leases"
    _seen: dict[str, Observed] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _name(self, lease: str) -> str:
        return f"{self.prefix}/{lease}.json"

    def look(self, lease: str) -> Observed:
        """Read the lease and update this holder's observation of it."""
        read = self.store.read(self._name(lease))
        with self._lock:
            seen = self._seen[lease] = observe(self._seen.get(lease), read, now=self.clock())
        return seen

    def try_acquire(self, lease: str) -> Held | None:
        """Hold `lease` now if the decision allows and the conditional write wins; else None."""
        return self.take(lease, self.look(lease))

    def take(self, lease: str, seen: Observed) -> Held | None:
        """Hold `lease` as last observed (`look`), if the decision allows and the write wins."""
        wanted = claim(seen, me=self.me, now=self.clock(), duration_s=self.timing.duration_s, stamp=_stamp())
        if wanted is None:
            return None
        try:
            etag = self.store.write(self._name(lease), wanted.as_record(), expected=seen.etag)
        except WriteConflict:
            return None  # another candidate wrote first
        taken_from = seen.lease.holder if seen.lease is not None and seen.lease.holder not in ("", self.me) else None
        return Held(lease, wanted.epoch, etag, self.clock(), taken_from=taken_from)

    def renew(self, held: Held) -> bool:
        """One renewal; False when the lease is no longer ours (then `held.lost` is set)."""
        read = self.store.read(self._name(held.name))
        renewed = renewal(Lease.of(read.data) if read else None, me=self.me, epoch=held.epoch, stamp=_stamp())
        if renewed is None or read is None:
            held.lost.set()
            return False
        try:
            held.etag = self.store.write(self._name(held.name), renewed.as_record(), expected=read.etag)
        except WriteConflict:
            return False  # read again at the next retry; the deadline decides
        held.renewed = self.clock()
        return True

    def mark(self, held: Held, **extra: Any) -> bool:
        """Record `extra` on a lease still held (e.g. planned=<pass>; renewals keep it); False when
        it is no longer ours (then `held.lost` is set)."""
        for _ in range(5):  # a write conflict is the keeper's renewal: read again
            if held.lost.is_set():
                return False
            read = self.store.read(self._name(held.name))
            current = Lease.of(read.data) if read else None
            if read is None or current is None or current.holder != self.me or current.epoch != held.epoch:
                held.lost.set()
                return False
            marked = Lease(holder=self.me, epoch=held.epoch, duration_s=current.duration_s, renewed_at=_stamp(),
                           extra={**current.extra, **extra})
            try:
                held.etag = self.store.write(self._name(held.name), marked.as_record(), expected=read.etag)
            except WriteConflict:
                continue
            held.renewed = self.clock()
            return True
        return False

    def release(self, held: Held, **extra: Any) -> None:
        """Give the lease up (others may take it at once), recording `extra` (e.g. done=<pass>)."""
        if held.lost.is_set():
            return
        for _ in range(5):  # a write conflict is a renewal the keeper had begun before it dropped the lease
            read = self.store.read(self._name(held.name))
            current = Lease.of(read.data) if read else None
            if read is None or current is None or current.holder != self.me or current.epoch != held.epoch:
                break
            released = Lease(holder="", epoch=held.epoch, duration_s=current.duration_s, renewed_at=_stamp(),
                             extra={**current.extra, **extra})
            try:
                self.store.write(self._name(held.name), released.as_record(), expected=read.etag)
            except WriteConflict:
                continue
            break
        held.lost.set()  # released (or no longer ours): nothing more is written under it

    def current(self, lease: str) -> Lease | None:
        read = self.store.read(self._name(lease))
        return Lease.of(read.data) if read else None


@dataclass
class Keeper:
    """Renews the leases it keeps every retry period in a background thread; a lease not renewed
    for the renew deadline is lost (`Held.lost`, and `on_lost` is called once)."""

    leases: Leases
    on_lost: Callable[[Held], None] = lambda held: None
    campaign: Callable[[], None] | None = None  # each round after the renewals (a candidate's retry)
    _held: dict[str, Held] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def keep(self, held: Held) -> None:
        with self._lock:
            self._held[held.name] = held

    def drop(self, held: Held) -> None:
        with self._lock:
            self._held.pop(held.name, None)

    def tick(self) -> None:
        """One round of renewals (the thread's body; tests call it directly)."""
        with self._lock:
            kept = list(self._held.values())
        for held in kept:
            if held.lost.is_set():
                continue
            try:
                ok = self.leases.renew(held)
            except Exception:  # an S3 error is a failed renewal; the deadline decides
                ok = False
            if not ok and (held.lost.is_set() or lost(held.renewed, now=self.leases.clock(),
                                                      renew_deadline_s=self.leases.timing.renew_deadline_s)):
                held.lost.set()
                self.drop(held)
                self.on_lost(held)
        if self.campaign is not None:
            with suppress(Exception):  # an S3 error: the next round tries again
                self.campaign()

    def start(self) -> Keeper:
        """Renew in a daemon thread for the rest of the process (a reconciler's leases live
        across its passes); `stop` ends it."""
        threading.Thread(target=self._run, name="hypergov-lease-keeper", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    @contextmanager
    def running(self) -> Iterator[Keeper]:
        thread = threading.Thread(target=self._run, name="hypergov-lease-keeper", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.leases.timing.retry_s):
            self.tick()
