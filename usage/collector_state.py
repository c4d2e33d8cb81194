"""What the usage collector keeps of one cluster, and what that becomes after a listing or a
watch event: pure decisions, no I/O (`usage.collector_store` writes them, `usage.collect` reads
the cluster).

Every workload is kept by its uid, with the latest body seen. A uid seen again (a replayed event
after a restart, the same workload in a new listing) replaces its own record: it is never a second
workload, so nothing is counted twice. A DELETED workload keeps its last body, marked deleted:
a finished job its owner deleted still ran, and its conditions say when.

A Workload shows only its latest admission attempt (SEMANTICS.md U6), so a body that replaces one
showing another attempt would erase that attempt (a job preempted, then admitted again). Before
the body is replaced, `closed_attempt` gives the attempt the kept body showed, closed, for the
store's per-uid attempts (identified by their start: recorded once however often replayed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engines.kube import WatchEvent
from engines.outcomes import PermanentError
from usage.coverage import Coverage
from usage.resources import ResourceKind
from usage.spans import Span, epoch_seconds
from usage.workloads import READING_RULES, NotATeamWorkload, WorkloadError, WorkloadUsage, parse_workload

# Kueue's Workload as the collector reads it (served by every Kueue release with v1beta2 too).
WORKLOAD_API_VERSION = "kueue.x-k8s.io/v1beta1"
WORKLOAD_KIND = "Workload"
IMPORTED_RULES = -1
"""The `rules` of a retired record imported from the usage-report operator's data: never a version
of `READING_RULES` (which counts up from 1), so such a record is read as it is, never re-read from
a Kueue body that does not exist (SEMANTICS.md I8)."""


@dataclass(frozen=True)
class KeptWorkload:
    """One workload as last seen: its body (admission, conditions with their times) and whether it
    is gone from the cluster."""

    uid: str
    body: Mapping[str, Any]
    deleted: bool = False


@dataclass(frozen=True)
class RetiredWorkload:
    """A workload deleted from its cluster, as the store keeps it once its life is over: the
    attempts its earlier bodies showed, and the attempt its last body shows, closed (`last`, read
    under `rules`, `usage.workloads.READING_RULES`; None: it has none, or it is no team's).
    `rules` None: the body could not be read when it was retired (readers read it again and report
    why). Its last body is kept beside it (`CollectorStore.retired_bodies`). `rules` IMPORTED_RULES:
    imported from another tool's records (`usage.operator_import`): its attempts are all there is,
    no body exists to read again."""

    uid: str
    attempts: tuple[ClosedAttempt, ...] = ()
    last: ClosedAttempt | None = None
    rules: int | None = None

    def spans(self, cluster: str) -> list[Span] | None:
        """Its spans, or None when its last attempt must be read from the body (other rules)."""
        if self.rules != READING_RULES and self.rules != IMPORTED_RULES:
            return None
        closed = [*self.attempts, *(a for a in [self.last] if a is not None and
                                     all(b.start != a.start for b in self.attempts))]
        return [span for attempt in closed for span in attempt.spans(cluster)]


def retired(workload: KeptWorkload, attempts: tuple[ClosedAttempt, ...], cluster: str, *,
            now: int) -> RetiredWorkload:
    """A deleted workload as the store retires it: its last attempt read once, here. An attempt
    still running when its workload was deleted ended then (`metadata.deletionTimestamp`, else
    `now`, when the collector saw the deletion): the quota is released with the object."""
    try:
        usage = parse_workload(workload.body, cluster=cluster)
    except NotATeamWorkload:
        return RetiredWorkload(workload.uid, attempts, None, READING_RULES)
    except WorkloadError:
        return RetiredWorkload(workload.uid, attempts, None, None)
    attempt = usage.attempt
    if attempt is None:
        return RetiredWorkload(workload.uid, attempts, None, READING_RULES)
    deleted = _deletion_time(workload.body, now)
    end = attempt.ending.time if attempt.ending is not None else max(attempt.start, deleted)
    last = ClosedAttempt(team=usage.team, priority_class=usage.priority_class, start=attempt.start, end=end,
                         preempted=attempt.ending is not None and attempt.ending.preempted,
                         units=tuple(sorted((i, k, n) for (i, k), n in attempt.units.items())))
    return RetiredWorkload(workload.uid, attempts, last, READING_RULES)


def _deletion_time(body: Mapping[str, Any], now: int) -> int:
    stamp = (body.get("metadata") or {}).get("deletionTimestamp")
    try:
        return epoch_seconds(datetime.fromisoformat(stamp)) if isinstance(stamp, str) else now
    except ValueError:
        return now


@dataclass(frozen=True)
class Checkpoint:
    """Where a restart resumes: the resourceVersion of the last listing or event applied (None:
    nothing applied yet, list first) and the ranges during which the cluster was watched."""

    resource_version: str | None
    coverage: Coverage = ()


@dataclass(frozen=True)
class ListingOutcome:
    """What a listing changes: every listed workload (kept afresh) and the kept ones it no longer
    holds (deleted while nobody watched: kept with their last body, now marked deleted)."""

    listed: tuple[KeptWorkload, ...]
    gone: tuple[KeptWorkload, ...]


class MalformedWorkload(PermanentError):
    """A Workload body without a usable metadata.uid: the API server always sets one (a UUID), so
    this is no Workload it served; the uid also names a file, so nothing else is accepted."""

    reason = "malformed-workload"


_UID = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,127}")


def workload_uid(body: Mapping[str, Any]) -> str:
    meta = body.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    if not _UID.fullmatch(uid):
        raise MalformedWorkload(f"Workload {meta.get('namespace')}/{meta.get('name')} has no usable "
                                f"metadata.uid ({uid!r})")
    return uid


def after_event(event: WatchEvent) -> KeptWorkload | None:
    """The record of the event's workload after it: the new body (ADDED, MODIFIED), or the last body
    marked deleted (DELETED); None for a BOOKMARK, which changes no workload. The record before does
    not matter: a replayed event yields the same record again."""
    if event.type == "BOOKMARK":
        return None
    return KeptWorkload(uid=workload_uid(event.body), body=event.body, deleted=event.type == "DELETED")


def after_listing(kept: Mapping[str, KeptWorkload], listed: Iterable[Mapping[str, Any]]) -> ListingOutcome:
    """A listing replaces the set of present workloads: each listed one is kept afresh, each kept
    one still present before and not listed now is gone (its last body kept)."""
    fresh = {(w := KeptWorkload(uid=workload_uid(body), body=body)).uid: w for body in listed}
    gone = tuple(KeptWorkload(uid=uid, body=w.body, deleted=True) for uid, w in sorted(kept.items())
                 if uid not in fresh and not w.deleted)
    return ListingOutcome(listed=tuple(fresh.values()), gone=gone)


@dataclass(frozen=True)
class ClosedAttempt:
    """An admission attempt a kept body showed and a later body no longer shows: the span facts
    (times in epoch seconds), kept because the workload's object has forgotten them."""

    team: str
    priority_class: str | None
    start: int
    end: int
    preempted: bool
    units: tuple[tuple[str, ResourceKind, int], ...]  # (instance type, kind, units), sorted

    def spans(self, cluster: str) -> list[Span]:
        return [Span(self.team, cluster, itype, kind, self.priority_class, units, self.start, self.end, self.preempted)
                for itype, kind, units in self.units if units > 0]

    def as_dict(self) -> dict[str, Any]:
        return {"team": self.team, "priority_class": self.priority_class, "start": self.start, "end": self.end,
                "preempted": self.preempted, "units": [list(u) for u in self.units]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClosedAttempt:
        return cls(team=str(data["team"]), priority_class=data["priority_class"], start=int(data["start"]),
                   end=int(data["end"]), preempted=bool(data["preempted"]),
                   units=tuple((str(i), ResourceKind(k), int(n)) for i, k, n in data["units"]))


def closed_attempt(before: KeptWorkload | None, after: KeptWorkload, cluster: str) -> ClosedAttempt | None:
    """The attempt `before` showed if `after` no longer shows it (no admission, or one with another
    start), closed; None when `after` shows the same attempt (or `before` none). Its end: its own
    ending when `before` had one; else `after`'s latest ending at or after its start (Kueue clears
    the admission when it evicts: the ending is what remains); else, re-admitted with no ending
    left (a listing after a gap), the new start, the latest it can have ended (quota is not held
    twice), not marked preempted. Not a team's workload, or a body the accounting cannot read:
    None (it has no attempt to account)."""
    if before is None:
        return None
    old, new = _usage(before, cluster), _usage(after, cluster)
    if old is None or old.attempt is None:
        return None
    attempt = old.attempt
    new_start = new.attempt.start if new is not None and new.attempt is not None else None
    if new_start == attempt.start:
        return None
    ending = attempt.ending
    if ending is None and new is not None and new.last_ending is not None and new.last_ending.time >= attempt.start \
            and (new_start is None or new.last_ending.time <= new_start):
        ending = new.last_ending
    if ending is None and new_start is None:
        return None  # no end and no later start: nothing to close it with (Kueue leaves an end when it clears one)
    end = ending.time if ending is not None else max(attempt.start, new_start or attempt.start)
    return ClosedAttempt(team=old.team, priority_class=old.priority_class, start=attempt.start, end=end,
                         preempted=ending is not None and ending.preempted,
                         units=tuple(sorted((i, k, n) for (i, k), n in attempt.units.items())))


def _usage(workload: KeptWorkload, cluster: str) -> WorkloadUsage | None:
    try:
        return parse_workload(workload.body, cluster=cluster)
    except (NotATeamWorkload, WorkloadError):
        return None
