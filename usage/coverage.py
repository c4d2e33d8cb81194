"""When the collector was watching a cluster: its covered ranges, decided purely.

A range opens when a list or a watch starts and is extended as events and bookmarks arrive; a
clean stop extends it to the moment of stopping, a crash leaves it where the last checkpoint put
it (the last event or bookmark before the crash). The accounting marks every interval outside
the ranges as missing, never as zero use: a cluster nobody watched did not thereby sit idle.

Ranges never overlap and never go back in time: a new range starts no earlier than the previous
one ended, even when the clock was set back between runs.

`began` says what a range's first read was: `list` (the state was read afresh: a workload
created and deleted before it was never seen) or `resume` (a watch from the resourceVersion the
previous range checkpointed: the API server replayed every change made in the gap, so the
workloads' own timestamps cover it). `accounted` draws the consequence for the accounting: the
gap before a `resume` range is complete data, the gap before a `list` range is missing. `import`
marks a range vouched for by imported data (`usage.operator_import`), before the collector's own
first range; read like `list`: the gap before it stays missing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

RangeStart = Literal["list", "resume", "import"]
Coverage = tuple["CoveredRange", ...]


@dataclass(frozen=True)
class CoveredRange:
    """[start, end] in UTC, watched without interruption."""

    start: datetime
    end: datetime
    began: RangeStart

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()

    def as_dict(self) -> dict[str, str]:
        return {"start": utc_stamp(self.start), "end": utc_stamp(self.end), "began": self.began}


def utc_stamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z, as Kubernetes writes times (fractions of a second kept)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def opened(coverage: Coverage, now: datetime, began: RangeStart) -> Coverage:
    """A new range from `now` (never before the last range's end). An empty last range (opened, then
    nothing arrived: e.g. a resume refused as too old) is replaced, not kept as a point."""
    kept = coverage[:-1] if coverage and coverage[-1].seconds == 0 else coverage
    start = max(now, kept[-1].end) if kept else now
    return (*kept, CoveredRange(start=start, end=start, began=began))


def extended(coverage: Coverage, now: datetime) -> Coverage:
    """The open (last) range reaching `now`: an event or bookmark arrived, or the collector stopped."""
    if not coverage:
        raise ValueError("no range is open: a list or watch opens one first")
    last = coverage[-1]
    return (*coverage[:-1], dataclasses.replace(last, end=max(last.end, now)))


def uncovered(coverage: Sequence[CoveredRange], start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The parts of [start, end] no range covers, in order: what the accounting reports as missing."""
    gaps: list[tuple[datetime, datetime]] = []
    cursor = start
    for covered in sorted(coverage, key=lambda r: r.start):
        if covered.end <= cursor:
            continue
        if covered.start >= end:
            break
        if covered.start > cursor:
            gaps.append((cursor, covered.start))
        cursor = max(cursor, covered.end)
    if cursor < end:
        gaps.append((cursor, end))
    return gaps


def accounted(coverage: Sequence[CoveredRange]) -> list[tuple[datetime, datetime]]:
    """The ranges whose usage is complete (SEMANTICS.md A7): the covered ranges, each that `began`
    with `resume` reaching back to the previous range's end. A watch resumed from the checkpoint's
    resourceVersion (not refused as expired: that opens a `list` range instead) received every
    change made while nobody watched, so the workloads' own times account for the gap; a listing
    sees only what is present when it lists, so the gap before it stays missing."""
    joined: list[tuple[datetime, datetime]] = []
    for covered in sorted(coverage, key=lambda r: r.start):
        if covered.began == "resume" and joined:
            joined[-1] = (joined[-1][0], max(joined[-1][1], covered.end))
        else:
            joined.append((covered.start, covered.end))
    return joined
