"""PNG charts of a period's usage (`usage.summary.UsagePeriod`), per UTC day: a team's use against
its guarantee, and a cluster's utilisation per pool. Pure: a period in, PNG bytes out.

matplotlib draws on its Agg canvas directly (no pyplot: no global figure state, no display) under
its default style (a user's matplotlibrc changes nothing), and the PNG is written without the
`Software` text chunk; so the same period gives the same bytes (with the same matplotlib).

Missing data is never drawn as zero: a day nothing of which was collected has no bar and no point,
and every period not collected is shaded and its days marked (a grey × at the foot of the axes).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

import matplotlib.style
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from usage.accounting import INTERVAL_SECONDS, SECONDS_PER_HOUR
from usage.report import DAY_SECONDS, KIND_NAME, UNIT, PoolKey, period_text, pool_key
from usage.summary import PoolUsage, TeamDay, UsagePeriod

DPI: Final = 100
WIDTH_INCHES: Final = 10.0
TITLE_INCHES: Final = 0.75
PANEL_INCHES: Final = 3.25
CLUSTER_INCHES: Final = 4.5
"""Sizes in quarter inches, so that inches x DPI are whole pixels: a team chart is
1000 x (75 + 325 per pool) pixels, a cluster chart 1000 x 450."""
OWN, BORROWED, LENT, GUARANTEE, MISSING = "#1f77b4", "#ff7f0e", "#2ca02c", "#000000", "#9e9e9e"
MAX_TICKS: Final = 16
LEGEND: Final = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": "x-small"}
"""Outside the axes, right of them: inside, it would hide the tallest bars."""


# --- the days and what of them was collected ---------------------------------------------------

def _intervals_window(period: UsagePeriod) -> tuple[int, int]:
    """The time the period's intervals cover: those starting in [start, end), as the warehouse reads."""
    def up(seconds: int) -> int:
        return -(-seconds // INTERVAL_SECONDS) * INTERVAL_SECONDS
    return up(period.start), up(period.end)


def day_starts(period: UsagePeriod) -> list[int]:
    """The UTC days (epoch seconds of their midnight) the period's intervals fall in."""
    first, last = _intervals_window(period)
    return list(range(first - first % DAY_SECONDS, last, DAY_SECONDS)) if last > first else []


def collected_seconds(period: UsagePeriod, cluster: str, day: int) -> int:
    """Seconds of `day`'s intervals in the period that the cluster's collector saw."""
    low, high = _intervals_window(period)
    begin, end = max(day, low), min(day + DAY_SECONDS, high)
    gaps = sum(max(0, min(end, m.end) - max(begin, m.start)) for m in period.missing if m.cluster == cluster)
    return max(0, end - begin - gaps)


def _has_gap(period: UsagePeriod, cluster: str, day: int) -> bool:
    low, high = _intervals_window(period)
    return collected_seconds(period, cluster, day) < min(day + DAY_SECONDS, high) - max(day, low)


def team_series(period: UsagePeriod, team: str) -> dict[PoolKey, list[TeamDay | None]]:
    """Per pool the team has daily figures on (sorted), its figures per day of `day_starts`; None on
    a day without figures or nothing of which was collected (no bar, never a zero)."""
    days = day_starts(period)
    found: dict[PoolKey, dict[int, TeamDay]] = {}
    for row in period.days:
        if row.team == team:
            found.setdefault(pool_key(row), {})[row.day_start] = row
    return {key: [rows.get(day) if collected_seconds(period, key[0], day) else None for day in days]
            for key, rows in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2].value))}


def cluster_utilisation(period: UsagePeriod, cluster: str) -> dict[PoolKey, list[float | None]]:
    """Per pool of the cluster (sorted), used / capacity per day of `day_starts`: the teams' daily
    use over the day's collected hours times the pool's capacity, its mean over the period's
    collected hours (the period gives capacity per pool, not per day). None on a day nothing of
    which was collected, or without figures. Reads every team's days, so a period filtered by
    team is refused (ValueError): its days would not add up to the pool's use."""
    days = day_starts(period)
    pools = sorted((p for p in period.pools if p.cluster == cluster), key=lambda p: (p.instance_type, p.kind.value))
    return {pool_key(pool): _daily_utilisation(period, pool, days) for pool in pools}


def _daily_utilisation(period: UsagePeriod, pool: PoolUsage, days: Sequence[int]) -> list[float | None]:
    key = pool_key(pool)
    used: dict[int, float] = {}
    for row in period.days:
        if pool_key(row) == key:
            used[row.day_start] = used.get(row.day_start, 0.0) + row.used
    if not math.isclose(sum(used.values()), pool.used, rel_tol=1e-9, abs_tol=1e-6):
        raise ValueError(f"the days of {pool.cluster} {pool.instance_type} {pool.kind} add up to "
                         f"{sum(used.values())} of the pool's {pool.used} used hours: the period was filtered by "
                         "team; the cluster chart needs every team's days")
    collected_hours = (pool.intervals - pool.missing_intervals) * INTERVAL_SECONDS / SECONDS_PER_HOUR
    capacity = pool.capacity_hours / collected_hours if collected_hours else 0.0  # in units of the kind
    ratios: list[float | None] = []
    for day in days:
        hours = capacity * collected_seconds(period, pool.cluster, day) / SECONDS_PER_HOUR
        # None: nothing collected that day, or a day the warehouse has no figures for (not accounted)
        missing = hours <= 0 or (day not in used and pool.used > 0)
        ratios.append(None if missing else used.get(day, 0.0) / hours)
    return ratios


# --- drawing -----------------------------------------------------------------------------------

def team_png(period: UsagePeriod, team: str) -> bytes:
    """A panel per pool the team has figures on: per UTC day, own and borrowed stacked above zero,
    lent (hatched) below it, the guarantee's hours as a dashed line; periods not collected shaded.
    ValueError when the team has no daily figures in the period."""
    series = team_series(period, team)
    if not series:
        raise ValueError(f"team {team} has no daily figures in the period")
    days = day_starts(period)
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(WIDTH_INCHES, TITLE_INCHES + PANEL_INCHES * len(series)), dpi=DPI, layout="constrained")
        axes = fig.subplots(len(series), 1, squeeze=False)[:, 0]
        for ax, (key, rows) in zip(axes, series.items(), strict=True):
            _team_panel(ax, period, key, rows, days)
        fig.suptitle(f"Team {team}: use per UTC day, {period_text(period.start, period.end)}")
        return _png(fig)


def _team_panel(ax: Axes, period: UsagePeriod, key: PoolKey, rows: Sequence[TeamDay | None],
                days: Sequence[int]) -> None:
    cluster, instance_type, kind = key
    known = [(i + 0.5, row) for i, row in enumerate(rows) if row is not None]
    xs = [x for x, _ in known]
    own = [r.own for _, r in known]
    ax.bar(xs, own, width=0.8, color=OWN, label="own")
    ax.bar(xs, [r.borrowed for _, r in known], bottom=own, width=0.8, color=BORROWED, label="borrowed")
    ax.bar(xs, [-r.lent for _, r in known], width=0.8, color="white", edgecolor=LENT, hatch="///",
           label="lent (below zero)")
    ax.hlines([r.guarantee for _, r in known], [x - 0.5 for x in xs], [x + 0.5 for x in xs], colors=GUARANTEE,
              linestyles="--", linewidth=1.2, label="guarantee")
    ax.axhline(0, color="black", linewidth=0.6)
    _mark_missing(ax, period, cluster, days)
    ax.set_title(f"{cluster}: {instance_type}, {KIND_NAME[kind]}", fontsize="medium")
    ax.set_ylabel(f"{UNIT[kind]} per day")
    _day_axis(ax, days)
    ax.legend(**LEGEND)


def cluster_png(period: UsagePeriod, cluster: str) -> bytes:
    """Each pool's utilisation (used / capacity) per UTC day as a line, periods not collected shaded.
    ValueError when the period has no pool of the cluster, or was filtered by team."""
    series = cluster_utilisation(period, cluster)
    if not series:
        raise ValueError(f"cluster {cluster} has no pool in the period")
    days = day_starts(period)
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(WIDTH_INCHES, CLUSTER_INCHES), dpi=DPI, layout="constrained")
        ax = fig.add_subplot()
        top = 100.0
        for (_, instance_type, kind), values in series.items():
            ys = [math.nan if v is None else 100 * v for v in values]
            top = max(top, *(y for y in ys if not math.isnan(y)))
            ax.plot([i + 0.5 for i in range(len(days))], ys, marker="o", label=f"{instance_type}, {KIND_NAME[kind]}")
        _mark_missing(ax, period, cluster, days)
        ax.set_ylim(0, top * 1.05)
        ax.set_ylabel("used / capacity (%)")
        ax.grid(True, axis="y", alpha=0.3)
        _day_axis(ax, days)
        ax.legend(**LEGEND)
        ax.set_title(f"Cluster {cluster}: utilisation per UTC day, {period_text(period.start, period.end)}")
        return _png(fig)


def _mark_missing(ax: Axes, period: UsagePeriod, cluster: str, days: Sequence[int]) -> None:
    """Shade each period not collected; a short gap is narrower than a pixel on a month's chart,
    so each day holding one is also marked under the axis."""
    if not days:
        return
    first = days[0]
    label: str | None = "not collected"
    for gap in sorted(m for m in period.missing if m.cluster == cluster):
        ax.axvspan((gap.start - first) / DAY_SECONDS, (gap.end - first) / DAY_SECONDS, facecolor=MISSING,
                   alpha=0.35, hatch="xx", edgecolor=MISSING, linewidth=0, label=label)
        label = None
    marked = [i + 0.5 for i, day in enumerate(days) if _has_gap(period, cluster, day)]
    if marked:
        ax.plot(marked, [0.02] * len(marked), linestyle="none", marker="x", color=MISSING,
                transform=ax.get_xaxis_transform(), clip_on=False)


def _day_axis(ax: Axes, days: Sequence[int]) -> None:
    step = max(1, math.ceil(len(days) / MAX_TICKS))
    ticks = list(range(0, len(days), step))
    ax.set_xlim(0, max(1, len(days)))
    ax.set_xticks([i + 0.5 for i in ticks])
    ax.set_xticklabels([datetime.fromtimestamp(days[i], UTC).strftime("%m-%d") for i in ticks])
    ax.set_xlabel("UTC day" + (f" ({datetime.fromtimestamp(days[0], UTC).year})" if days else ""))


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()
