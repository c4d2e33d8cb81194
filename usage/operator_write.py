"""An import (`usage.operator_import`) into a cluster's collector store (`usage.collector_store`),
written as the store writes its own files: the imported workloads appended to a finished
`attempts-` segment (synced), then the checkpoint's coverage replaced atomically, so that the
checkpoint never vouches for a range whose attempts are not on disk. The caller holds the store's
lock (`CollectorStore.held`): one writer per store, and never beside a running collector.

Also what the import must know of the store first: where the collector's own ranges begin
(`first_own_start`) and the attempts it kept, by workload (`collector_attempts`), which win over
imported ones (SEMANTICS.md I7).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from usage.collector_state import IMPORTED_RULES, Checkpoint, ClosedAttempt, RetiredWorkload
from usage.collector_store import CollectorStore
from usage.operator_import import ImportedCluster, Known, merged_coverage
from usage.workloads import WorkloadError, parse_workload

STILL_HELD = sys.maxsize
"""The end of an attempt the collector sees still holding quota: it overlaps everything after its start."""


@dataclass(frozen=True)
class Written:
    """What an import added to a store: lines appended (to `segment`), and whether the checkpoint's
    coverage changed. Nothing of either: the store held it all already."""

    lines: int
    segment: str | None
    coverage_changed: bool

    @property
    def anything(self) -> bool:
        return self.lines > 0 or self.coverage_changed


def collector_attempts(store: CollectorStore) -> Known:
    """The attempts the collector kept (closed, and each body's own), by (namespace, Workload name):
    the retired workloads' and the live ones'. Imported records have no workload name: not read."""
    known: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    bodies = store.retired_bodies()
    retired = store.retired()
    for uid, record in retired.items():
        if record.rules != IMPORTED_RULES:
            _add(known, bodies.get(uid, {}), [*record.attempts, *([record.last] if record.last else [])])
    with_attempts = store.uids_with_attempts()
    for workload in store.live_workloads():
        if workload.uid not in retired:
            _add(known, workload.body, store.attempts(workload.uid) if workload.uid in with_attempts else [])
    return known


def _add(known: dict[tuple[str, str], list[tuple[int, int]]], body: Mapping[str, Any],
         closed: Iterable[ClosedAttempt]) -> None:
    meta = body.get("metadata") or {}
    ref = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    if not all(ref):
        return
    known[ref].extend((a.start, a.end) for a in closed)
    try:
        attempt = parse_workload(body, cluster="").attempt
    except WorkloadError:  # not a team's, or unreadable: the accounting says so when it reads it
        return
    if attempt is not None:
        known[ref].append((attempt.start, attempt.ending.time if attempt.ending is not None else STILL_HELD))


def write_import(store: CollectorStore, imported: ImportedCluster) -> Written:
    """Append the workloads the store does not hold as they are, then merge the coverage."""
    held = store.retired()
    new = [w for w in imported.workloads if not _holds(held.get(w.uid), w)]
    segment = _segment_day(imported) if new else None
    for workload in new:
        store.add_retired(workload, segment or "")
    checkpoint = store.checkpoint()
    coverage = merged_coverage(checkpoint.coverage, imported.coverage)
    if coverage != checkpoint.coverage:
        store.save(Checkpoint(resource_version=checkpoint.resource_version, coverage=coverage))
    return Written(lines=len(new), segment=segment, coverage_changed=coverage != checkpoint.coverage)


def _holds(held: RetiredWorkload | None, workload: RetiredWorkload) -> bool:
    """The store's record of the uid (its lines merged) has every attempt exactly: nothing to add."""
    return held is not None and held.rules == IMPORTED_RULES and set(workload.attempts) <= set(held.attempts)


def _segment_day(imported: ImportedCluster) -> str:
    """One segment per import, dated by the last instant it holds (SEMANTICS.md I8): every attempt
    then sits in a segment dated on or after the day it ran (what `retired(since_day)` relies
    on), and a later import of more data lands in the same or a later segment, whose lines win
    the readers' merge."""
    ends = [*(a.end for w in imported.workloads for a in w.attempts),
            *(int(r.end.timestamp()) for r in imported.coverage)]
    return datetime.fromtimestamp(max(ends), UTC).strftime("%Y-%m-%d")
