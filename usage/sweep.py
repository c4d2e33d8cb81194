"""The exact integrals of one pool (cluster x instance type x kind): a sort of its span events and
prefix sums, no per-instant Python loop (SEMANTICS.md A1-A7 give the rules, "How it is computed"
the method).

Usage is piecewise constant between events. Each team's own, borrowed and idle-before-lending
amounts change only at that team's events; the pool's borrowed total B and lendable idle total L
change only at events. What a lender lends at an instant is rho * (its idle guarantee) with
rho = (B - borrowed from nobody) / L, the same for every lender, so its lent hours over
[a, b] are the integral of (its idle) against the clock P(t) = integral of rho: exact, with P
evaluated at the team's own breakpoints only. Amounts are integer units (exact sums); only rho
and what it touches are floating point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


class SweepError(ValueError):
    """The spans cannot be accounted: `time` is the first instant, `problem` what is wrong."""

    def __init__(self, time: int, problem: str) -> None:
        super().__init__(problem)
        self.time = time
        self.problem = problem


class OverCapacity(SweepError):
    """More units in use than the pool has."""


class UnlendableBorrow(SweepError):
    """More borrowed than capacity nobody is guaranteed plus the lenders' idle guarantees."""


@dataclass(frozen=True)
class PoolSpans:
    """One pool's spans as columns (clipped to the window, start < end), classes numbered."""

    class_of: Ints  # per span: its (team, priority class) number
    units: Ints
    start: Ints
    end: Ints
    preempted: Bools
    team_of_class: Ints  # per class: its team number


@dataclass(frozen=True)
class PoolTerms:
    guarantee: Ints  # per team, units
    lends: Bools  # per team: its idle guarantee may be lent (Lend, LendAndBorrow)
    capacity: int
    unguaranteed: int  # capacity nobody is guaranteed that borrowers may use (0: sharing off)


@dataclass(frozen=True)
class PoolIntegrals:
    """Unit-seconds per interval: team arrays (teams x intervals), class arrays (classes x intervals)."""

    team_used: Ints
    team_own: Floats
    team_borrowed: Floats
    team_lent: Floats
    team_idle: Floats
    class_used: Ints
    class_own: Floats
    class_borrowed: Floats
    class_lost: Ints
    from_nobody: Floats


def _last_of_runs(*keys: Ints) -> Bools:
    """In arrays sorted by `keys`, True at the last element of each run of equal keys."""
    n = len(keys[0])
    last = np.zeros(n, dtype=bool)
    if n:
        last[-1] = True
        differs = np.zeros(n - 1, dtype=bool)
        for key in keys:
            differs |= key[1:] != key[:-1]
        last[:-1] = differs
    return last


def _antiderivative(group: Ints, t: Ints, clock_t: Floats, values: Floats, starts: Ints, boundaries: Ints,
                    clock_boundaries: Floats) -> Floats:
    """For piecewise-constant functions (one per group: `values` after each breakpoint `t`, zero
    before the first and after the last), the integral against `clock` from the window start up
    to each boundary: shape (groups, boundaries, columns). Breakpoints are sorted by (group, t)."""
    groups = len(starts) - 1
    if not len(t):
        return np.zeros((groups, len(boundaries), values.shape[1]))
    span = int(max(int(boundaries[-1]), int(t.max())) - int(boundaries[0]) + 1)
    key = group * span + (t - boundaries[0])
    next_clock = np.empty_like(clock_t)
    next_clock[:-1] = clock_t[1:]
    next_clock[-1] = clock_t[-1]
    same_group = np.zeros(len(t), dtype=bool)
    same_group[:-1] = group[1:] == group[:-1]
    steps = np.where(same_group, next_clock - clock_t, 0.0)
    cumulative = np.zeros((len(t) + 1, values.shape[1]))
    np.cumsum(values * steps[:, None], axis=0, out=cumulative[1:])
    query = np.arange(groups, dtype=np.int64)[:, None] * span + (boundaries - boundaries[0])[None, :]
    k = np.searchsorted(key, query, side="right") - 1
    valid = k >= starts[:-1, None]
    k = np.where(valid, k, 0)
    since = (clock_boundaries[None, :] - clock_t[k])[..., None]
    found = cumulative[k] - cumulative[starts[:-1]][:, None, :] + values[k] * since
    return np.where(valid[..., None], found, 0.0)


def _starts(group: Ints, groups: int) -> Ints:
    """Index of each group's first breakpoint (and the total at the end) in arrays sorted by group."""
    return np.searchsorted(group, np.arange(groups + 1), side="left").astype(np.int64)


def _clock(times: Ints, values_at: Floats, rates: Floats, queries: Ints) -> Floats:
    """A piecewise-linear antiderivative, known at `times` with `rates` after each, at `queries`."""
    k = np.searchsorted(times, queries, side="right") - 1
    inside = k >= 0
    k = np.where(inside, k, 0)
    if not len(times):
        return np.zeros(len(queries))
    return np.where(inside, values_at[k] + rates[k] * (queries - times[k]), 0.0)


def _rates_integral(times: Ints, rates: Floats) -> Floats:
    out = np.zeros(len(times))
    if len(times) > 1:
        np.cumsum(rates[:-1] * np.diff(times), out=out[1:])
    return out


def _team_breakpoints(spans: PoolSpans, terms: PoolTerms) -> tuple[Ints, Ints, Ints, Ints]:
    """(team, time, usage after, first index of each team) at every time a team has an event."""
    team = np.concatenate([spans.team_of_class[spans.class_of]] * 2)
    times = np.concatenate([spans.start, spans.end])
    delta = np.concatenate([spans.units, -spans.units])
    order = np.lexsort((times, team))
    team, times, delta = team[order], times[order], delta[order]
    usage = np.cumsum(delta)  # each team's deltas sum to 0, so the running sum restarts per team
    last = _last_of_runs(team, times)
    return team[last], times[last], usage[last], _starts(team[last], len(terms.guarantee))


def _pool_clock(team: Ints, times: Ints, usage: Ints, starts: Ints, terms: PoolTerms
                ) -> tuple[Ints, Floats, Floats, Floats, Floats]:
    """The pool's breakpoints and, after each, rho and borrowed-from-nobody; with their integrals."""
    g = terms.guarantee[team]
    own = np.minimum(usage, g)
    first = np.zeros(len(team), dtype=bool)
    first[starts[:-1][starts[:-1] < starts[1:]]] = True
    previous_usage = np.where(first, 0, np.roll(usage, 1))
    previous_own = np.minimum(previous_usage, g)
    d_borrowed = (usage - own) - (previous_usage - previous_own)
    d_free = np.where(terms.lends[team], (g - own) - (g - previous_own), 0)
    order = np.argsort(times, kind="stable")
    at = times[order]
    borrowed = np.cumsum(d_borrowed[order])
    lendable = int(terms.guarantee[terms.lends].sum()) + np.cumsum(d_free[order])
    used = np.cumsum((usage - previous_usage)[order])
    last = _last_of_runs(at)
    at, borrowed, lendable, used = at[last], borrowed[last], lendable[last], used[last]
    over = np.flatnonzero(used > terms.capacity)
    if len(over):
        raise OverCapacity(int(at[over[0]]), f"{int(used[over[0]])} units in use, capacity {terms.capacity}")
    from_nobody = np.minimum(borrowed, terms.unguaranteed)
    from_lenders = borrowed - from_nobody
    short = np.flatnonzero(from_lenders > lendable)
    if len(short):
        i = short[0]
        raise UnlendableBorrow(int(at[i]), f"{int(borrowed[i])} units borrowed, but only {int(from_nobody[i])} "
                                           f"unguaranteed and {int(lendable[i])} idle in lenders' guarantees")
    rho = np.where(lendable > 0, from_lenders / np.maximum(lendable, 1), 0.0)
    nobody = from_nobody.astype(np.float64)
    return at, rho, _rates_integral(at, rho), nobody, _rates_integral(at, nobody)


def integrate(spans: PoolSpans, terms: PoolTerms, boundaries: Ints) -> PoolIntegrals:
    """Every figure of one pool, per interval between consecutive `boundaries`."""
    classes = len(spans.team_of_class)
    team, times, usage, starts = _team_breakpoints(spans, terms)
    at, rho, rho_clock, nobody, nobody_clock = _pool_clock(team, times, usage, starts, terms)
    p_boundaries = _clock(at, rho_clock, rho, boundaries)
    p_times = _clock(at, rho_clock, rho, times)
    seconds = boundaries.astype(np.float64)
    g = terms.guarantee[team]
    own = np.minimum(usage, g).astype(np.float64)
    by_time = _antiderivative(team, times, times.astype(np.float64),
                              np.stack([usage.astype(np.float64), own], axis=1), starts, boundaries, seconds)
    by_rho = _antiderivative(team, times, p_times, own[:, None], starts, boundaries, p_boundaries)
    used_t, own_t = np.diff(by_time[..., 0], axis=1), np.diff(by_time[..., 1], axis=1)
    own_rho = np.diff(by_rho[..., 0], axis=1)
    g_all = terms.guarantee.astype(np.float64)[:, None]
    lent = np.where(terms.lends[:, None], np.maximum(g_all * np.diff(p_boundaries)[None, :] - own_rho, 0.0), 0.0)
    idle = np.maximum(g_all * np.diff(seconds)[None, :] - own_t - lent, 0.0)
    class_figures = _class_integrals(spans, times, usage, own, starts, boundaries, classes)
    used_int = np.rint(used_t).astype(np.int64)
    return PoolIntegrals(
        team_used=used_int, team_own=own_t, team_borrowed=used_t - own_t, team_lent=lent, team_idle=idle,
        class_used=np.rint(class_figures[0]).astype(np.int64), class_own=class_figures[1],
        class_borrowed=class_figures[2], class_lost=np.rint(class_figures[3]).astype(np.int64),
        from_nobody=np.diff(_clock(at, nobody_clock, nobody, boundaries)))


def _class_integrals(spans: PoolSpans, times: Ints, usage: Ints, own: Floats, team_starts: Ints,
                     boundaries: Ints, classes: int) -> Floats:
    """(used, own, borrowed, lost) per class and interval: the team's own and borrowed split over
    its classes in proportion to their usage at each instant (SEMANTICS.md A5)."""
    if classes == 0:
        return np.zeros((4, 0, len(boundaries) - 1))
    c_of = np.concatenate([spans.class_of] * 2)
    c_times = np.concatenate([spans.start, spans.end])
    delta = np.concatenate([spans.units, -spans.units])
    lost = np.where(np.concatenate([spans.preempted] * 2), delta, 0)
    order = np.lexsort((c_times, c_of))
    c_of, c_times = c_of[order], c_times[order]
    c_usage, c_lost = np.cumsum(delta[order]), np.cumsum(lost[order])
    last = _last_of_runs(c_of, c_times)
    c_of, c_times, c_usage, c_lost = c_of[last], c_times[last], c_usage[last], c_lost[last]
    # Every class is evaluated at each breakpoint of its team (a superset of its own).
    owner = spans.team_of_class
    counts = team_starts[owner + 1] - team_starts[owner]
    group = np.repeat(np.arange(classes, dtype=np.int64), counts)
    offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    index = np.repeat(team_starts[owner], counts) + offsets
    at = times[index]
    span = int(max(int(boundaries[-1]), int(at.max()) if len(at) else 0) - int(boundaries[0]) + 1)
    k = np.searchsorted(c_of * span + (c_times - boundaries[0]), group * span + (at - boundaries[0]), side="right") - 1
    found = (k >= 0) & (c_of[np.maximum(k, 0)] == group)
    u_class = np.where(found, c_usage[np.maximum(k, 0)], 0).astype(np.float64)
    l_class = np.where(found, c_lost[np.maximum(k, 0)], 0).astype(np.float64)
    u_team = usage[index].astype(np.float64)
    own_team = own[index]
    share = np.divide(u_class, u_team, out=np.zeros_like(u_class), where=u_team > 0)
    own_class = own_team * share
    values = np.stack([u_class, own_class, u_class - own_class, l_class], axis=1)
    figures = _antiderivative(group, at, at.astype(np.float64), values, _starts(group, classes), boundaries,
                              boundaries.astype(np.float64))
    return np.moveaxis(np.diff(figures, axis=1), 2, 0)
