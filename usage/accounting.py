"""Every accelerator-hour and vCPU-hour of a window traced to a team: per pool (cluster x instance
type x kind) and 5-minute interval, what each team used, how much of it was its own guarantee
and how much borrowed, what it lent, what of its guarantee sat idle, and what was lost to
preemption; per priority class the same split. The rules are SEMANTICS.md's; `usage.sweep`
computes them exactly.

Pure: spans, pools and the collector's coverage in, columns out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple

import numpy as np

from hypergov.hyperpod_defaults import DEFAULT_SHARING_STRATEGY
from usage.resources import UNITS, ResourceKind
from usage.spans import Span, iso
from usage.sweep import Bools, Floats, Ints, PoolSpans, PoolTerms, SweepError, integrate

INTERVAL_SECONDS: Final = 300
"""The width of an accounting interval: 5 minutes, starting on UTC 5-minute boundaries."""
SECONDS_PER_HOUR: Final = 3600

SharingStrategy = Literal["Lend", "DontLend", "LendAndBorrow"]
LENDING: Final = frozenset({"Lend", "LendAndBorrow"})
"""The strategies whose idle guarantee others may borrow (HyperPod ResourceSharingConfig)."""


class AccountingError(ValueError):
    """The spans cannot be accounted as given (the message names the pool and the instant)."""


@dataclass(frozen=True)
class Pool:
    """One cluster's capacity of one kind on one instance type, and who is guaranteed what of it
    (all in units of the kind, `usage.resources.UNITS`)."""

    cluster: str
    instance_type: str
    kind: ResourceKind
    capacity: int
    guarantees: Mapping[str, int] = field(default_factory=dict)
    sharing: Mapping[str, SharingStrategy] = field(default_factory=dict)  # unset: HyperPod's default
    shares_idle: bool = True  # the scheduler's IdleResourceSharing: capacity nobody is guaranteed is borrowable

    @property
    def key(self) -> tuple[str, str, ResourceKind]:
        return self.cluster, self.instance_type, self.kind

    def strategy(self, team: str) -> SharingStrategy:
        return self.sharing.get(team, DEFAULT_SHARING_STRATEGY)

    @property
    def unguaranteed(self) -> int:
        """Capacity nobody is guaranteed that borrowers may use: none when idle sharing is off."""
        return max(0, self.capacity - sum(self.guarantees.values())) if self.shares_idle else 0


class TeamRow(NamedTuple):
    """Hours of the kind (GPU-, Neuron-device-, NeuronCore- or vCPU-hours) of one team in one
    interval; every figure None when the interval is `missing` (not fully collected)."""

    team: str
    cluster: str
    instance_type: str
    kind: ResourceKind
    interval_start: int
    missing: bool
    used: float | None
    own: float | None
    borrowed: float | None
    lent: float | None
    idle_guarantee: float | None


class ClassRow(NamedTuple):
    """One team's use in one priority class and interval (None figures when `missing`)."""

    team: str
    cluster: str
    instance_type: str
    kind: ResourceKind
    priority_class: str | None
    interval_start: int
    missing: bool
    used: float | None
    own: float | None
    borrowed: float | None
    lost_to_preemption: float | None


@dataclass(frozen=True)
class PoolAccount:
    """One pool's figures as columns, in hours of the kind: team arrays are teams x intervals,
    class arrays classes x intervals, NaN in intervals that are not `covered`."""

    pool: Pool
    interval_starts: Ints
    covered: Bools
    teams: tuple[str, ...]
    classes: tuple[tuple[str, str | None], ...]  # (team, priority class)
    used: Floats
    own: Floats
    borrowed: Floats
    lent: Floats
    idle_guarantee: Floats
    class_used: Floats
    class_own: Floats
    class_borrowed: Floats
    class_lost: Floats
    from_nobody: Floats  # borrowed from capacity nobody is guaranteed, per interval

    def team_rows(self) -> Iterator[TeamRow]:
        """A row per team of the pool (guaranteed or using) and interval."""
        p = self.pool
        figures = (self.used, self.own, self.borrowed, self.lent, self.idle_guarantee)
        for i, team in enumerate(self.teams):
            for j, start in enumerate(self.interval_starts.tolist()):
                missing = not self.covered[j]
                values = [None if missing else float(f[i, j]) for f in figures]
                yield TeamRow(team, p.cluster, p.instance_type, p.kind, start, missing, *values)

    def class_rows(self) -> Iterator[ClassRow]:
        """A row per (team, class) and interval it used anything in; in a missing interval a row
        per (team, class) the pool knows, marked missing."""
        p = self.pool
        figures = (self.class_used, self.class_own, self.class_borrowed, self.class_lost)
        for i, (team, priority_class) in enumerate(self.classes):
            for j, start in enumerate(self.interval_starts.tolist()):
                if not self.covered[j]:
                    yield ClassRow(team, p.cluster, p.instance_type, p.kind, priority_class, start, True,
                                   None, None, None, None)
                elif self.class_used[i, j] > 0:
                    yield ClassRow(team, p.cluster, p.instance_type, p.kind, priority_class, start, False,
                                   *(float(f[i, j]) for f in figures))


def interval_boundaries(start: int, end: int) -> Ints:
    """The window widened to whole intervals on UTC boundaries: every interval's start and the end."""
    if end <= start:
        raise AccountingError(f"the window ends ({iso(end)}) at or before it starts ({iso(start)})")
    first = start - start % INTERVAL_SECONDS
    last = -(-end // INTERVAL_SECONDS) * INTERVAL_SECONDS
    return np.arange(first, last + 1, INTERVAL_SECONDS, dtype=np.int64)


def covered_intervals(boundaries: Ints, ranges: Sequence[tuple[int, int]]) -> Bools:
    """True for each interval lying wholly inside the union of the collector's `ranges`."""
    merged: list[list[int]] = []
    for begin, finish in sorted(ranges):
        if merged and begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], finish)
        elif finish > begin:
            merged.append([begin, finish])
    if not merged:
        return np.zeros(len(boundaries) - 1, dtype=bool)
    starts = np.array([m[0] for m in merged], dtype=np.int64)
    ends = np.array([m[1] for m in merged], dtype=np.int64)
    k = np.searchsorted(starts, boundaries[:-1], side="right") - 1
    return (k >= 0) & (ends[np.maximum(k, 0)] >= boundaries[1:])


def account(spans: Iterable[Span], pools: Iterable[Pool], *, start: int, end: int,
            coverage: Mapping[str, Sequence[tuple[int, int]]]) -> list[PoolAccount]:
    """Every pool's figures over [start, end) widened to whole intervals. `coverage`: per cluster,
    the time ranges the collector saw completely; a span on a pool not given is an error."""
    boundaries = interval_boundaries(start, end)
    by_key = {pool.key: pool for pool in pools}
    grouped: dict[tuple[str, str, ResourceKind], list[Span]] = {key: [] for key in by_key}
    low, high = int(boundaries[0]), int(boundaries[-1])
    for span in spans:
        if span.end < span.start:
            raise AccountingError(f"span of team {span.team} on {span.cluster} ends ({iso(span.end)}) "
                                  f"before it starts ({iso(span.start)})")
        if span.end <= low or span.start >= high or span.units <= 0:
            continue
        found = grouped.get((span.cluster, span.instance_type, span.kind))
        if found is None:
            raise AccountingError(f"team {span.team} used {span.kind} of {span.instance_type} on cluster "
                                  f"{span.cluster}, a pool that was not given (no capacity known)")
        found.append(span)
    covered = {cluster: covered_intervals(boundaries, ranges) for cluster, ranges in coverage.items()}
    nowhere = np.zeros(len(boundaries) - 1, dtype=bool)
    return [_account_pool(by_key[key], grouped[key], boundaries, covered.get(key[0], nowhere))
            for key in sorted(by_key)]


def _account_pool(pool: Pool, spans: list[Span], boundaries: Ints, covered: Bools) -> PoolAccount:
    teams = tuple(sorted({*(t for t, g in pool.guarantees.items() if g > 0), *(s.team for s in spans)}))
    team_number = {team: n for n, team in enumerate(teams)}
    classes = tuple(sorted({(s.team, s.priority_class) for s in spans}, key=lambda c: (c[0], c[1] or "")))
    class_number = {c: n for n, c in enumerate(classes)}
    low, high = int(boundaries[0]), int(boundaries[-1])
    columns = PoolSpans(
        class_of=np.fromiter((class_number[(s.team, s.priority_class)] for s in spans), np.int64, len(spans)),
        units=np.fromiter((s.units for s in spans), np.int64, len(spans)),
        start=np.fromiter((max(s.start, low) for s in spans), np.int64, len(spans)),
        end=np.fromiter((min(s.end, high) for s in spans), np.int64, len(spans)),
        preempted=np.fromiter((s.preempted for s in spans), np.bool_, len(spans)),
        team_of_class=np.array([team_number[t] for t, _ in classes], dtype=np.int64))
    terms = PoolTerms(
        guarantee=np.array([pool.guarantees.get(t, 0) for t in teams], dtype=np.int64),
        lends=np.array([pool.strategy(t) in LENDING for t in teams], dtype=bool),
        capacity=pool.capacity, unguaranteed=pool.unguaranteed)
    try:
        figures = integrate(columns, terms, boundaries)
    except SweepError as error:
        raise AccountingError(f"{pool.kind} of {pool.instance_type} on cluster {pool.cluster} at "
                              f"{iso(error.time)}: {error.problem}") from error
    scale = float(UNITS[pool.kind] * SECONDS_PER_HOUR)

    def hours(unit_seconds: Floats | Ints) -> Floats:
        return np.where(covered, unit_seconds / scale, np.nan)

    return PoolAccount(
        pool=pool, interval_starts=boundaries[:-1], covered=covered, teams=teams, classes=classes,
        used=hours(figures.team_used), own=hours(figures.team_own), borrowed=hours(figures.team_borrowed),
        lent=hours(figures.team_lent), idle_guarantee=hours(figures.team_idle),
        class_used=hours(figures.class_used), class_own=hours(figures.class_own),
        class_borrowed=hours(figures.class_borrowed), class_lost=hours(figures.class_lost),
        from_nobody=hours(figures.from_nobody))
