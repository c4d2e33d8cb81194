"""A period's usage (`usage.summary.UsagePeriod`) rendered: Markdown for a merge request or a wiki,
CSV and JSON for machines. Pure: a period in, text or a dict out; nothing is queried here.

Figures are hours of each pool's kind (GPU-, Neuron-device-, NeuronCore- or vCPU-hours) over the
intervals that were collected; the intervals that were not are listed (missing data is shown,
never read as zero). Two ratios are derived, the same in every format:

- a team's guarantee utilisation: own / (own + lent + idle guarantee), the share of its
  guarantee's hours it used itself (lent hours are not its own use); None ("—") without a guarantee;
- a pool's utilisation: used / capacity hours; None ("—") when no interval of it was collected.

Rows are sorted by (cluster, instance type, kind, team) in every format, days by day.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from itertools import groupby
from typing import Any, Final, Literal

from usage.accounting import INTERVAL_SECONDS
from usage.resources import ResourceKind
from usage.spans import iso
from usage.summary import MissingPeriod, PoolUsage, TeamDay, TeamUsage, UsagePeriod

DAY_SECONDS: Final = 86400
DASH: Final = "—"
UNIT: Final[dict[ResourceKind, str]] = {
    ResourceKind.GPU: "GPU-hours", ResourceKind.NEURON_DEVICE: "Neuron-device-hours",
    ResourceKind.NEURONCORE: "NeuronCore-hours", ResourceKind.VCPU: "vCPU-hours"}
"""The unit a pool's hours are in, per kind."""
KIND_NAME: Final[dict[ResourceKind, str]] = {
    ResourceKind.GPU: "GPUs", ResourceKind.NEURON_DEVICE: "Neuron devices",
    ResourceKind.NEURONCORE: "NeuronCores", ResourceKind.VCPU: "vCPUs"}

PoolKey = tuple[str, str, ResourceKind]
CsvTable = Literal["teams", "pools", "days", "missing"]
CSV_TABLES: Final[tuple[CsvTable, ...]] = ("teams", "pools", "days", "missing")
PERIOD_COLUMNS: Final = ("period_start", "period_end")
CSV_COLUMNS: Final[dict[CsvTable, tuple[str, ...]]] = {
    "teams": ("team", "cluster", "instance_type", "kind", "unit", "used", "own", "borrowed", "lent",
              "idle_guarantee", "lost_to_preemption", "guarantee_hours", "guarantee_utilisation"),
    "pools": ("cluster", "instance_type", "kind", "unit", "capacity_hours", "guaranteed_hours", "used",
              "utilisation", "from_nobody", "unguaranteed_idle", "intervals", "missing_intervals"),
    "days": ("team", "cluster", "instance_type", "kind", "unit", "day", "used", "own", "borrowed", "lent",
             "idle_guarantee", "guarantee", "missing_intervals"),
    "missing": ("cluster", "start", "end", "seconds")}
"""The fields of each table's rows, in order: the keys of `as_json`'s rows, and the CSV's columns
after `PERIOD_COLUMNS`."""


# --- derived figures ---------------------------------------------------------------------------

def guarantee_hours(team: TeamUsage) -> float:
    """The guarantee's hours in the collected intervals (SEMANTICS A3: own + lent + idle)."""
    return team.own + team.lent + team.idle_guarantee


def guarantee_utilisation(team: TeamUsage) -> float | None:
    """own / (own + lent + idle guarantee); None when the team had no guarantee on the pool."""
    hours = guarantee_hours(team)
    return team.own / hours if hours > 0 else None


def pool_utilisation(pool: PoolUsage) -> float | None:
    """used / capacity hours; None when none of the pool's intervals was collected."""
    return pool.used / pool.capacity_hours if pool.capacity_hours > 0 else None


def pool_key(row: TeamUsage | PoolUsage | TeamDay) -> PoolKey:
    return row.cluster, row.instance_type, row.kind


def _team_order(row: TeamUsage) -> tuple[str, str, str, str]:
    return row.cluster, row.instance_type, row.kind.value, row.team


def _day_order(row: TeamDay) -> tuple[str, str, str, str, int]:
    return row.cluster, row.instance_type, row.kind.value, row.team, row.day_start


def _pool_order(row: PoolUsage) -> tuple[str, str, str]:
    return row.cluster, row.instance_type, row.kind.value


# --- text helpers ------------------------------------------------------------------------------

def _hours(value: float) -> str:
    # rounded first and + 0.0 so that a float a hair below zero is "0.0", not "-0.0"
    return f"{round(value, 1) + 0.0:,.1f}"


def _percent(fraction: float | None) -> str:
    return DASH if fraction is None else f"{round(fraction * 100, 1) + 0.0:,.1f} %"


def _date(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")


def _stamp(seconds: int) -> str:
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%d %H:%M" + (":%S" if moment.second else ""))


def duration_text(seconds: int) -> str:
    """`2 d 3 h 5 min`: whole days, hours and minutes (seconds only when not whole minutes)."""
    days, rest = divmod(int(seconds), DAY_SECONDS)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min"), (secs, "s")) if n]
    return " ".join(parts) or "0 min"


def period_text(start: int, end: int) -> str:
    """Whole UTC days as `2026-03-01 to 2026-03-31 (31 days, UTC)`, the last day inclusive;
    anything else as its two instants."""
    if start % DAY_SECONDS == 0 and end % DAY_SECONDS == 0 and end > start:
        days = (end - start) // DAY_SECONDS
        if days == 1:
            return f"{_date(start)} (1 day, UTC)"
        return f"{_date(start)} to {_date(end - DAY_SECONDS)} ({days} days, UTC)"
    return f"{_stamp(start)} to {_stamp(end)} UTC ({duration_text(end - start)})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Iterable[Sequence[str]], *, left: int = 1) -> list[str]:
    """A GitHub/GitLab table: the first `left` columns left-aligned (names), the rest right (figures)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * left + "---:|" * (len(header) - left)]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


# --- Markdown ----------------------------------------------------------------------------------

TEAM_HEADER: Final = ("team", "used", "own", "borrowed", "lent", "idle guarantee", "lost to preemption",
                      "guarantee used")


def markdown(period: UsagePeriod, *, title: str) -> str:
    """The report: the period and each cluster's coverage; per cluster and pool (instance type and
    kind) a table of teams in the kind's hours and the pool's line; then every missing period."""
    pools = {pool_key(p): p for p in period.pools}
    teams: dict[PoolKey, list[TeamUsage]] = {}
    for row in sorted(period.teams, key=_team_order):
        teams.setdefault(pool_key(row), []).append(row)
    keys = sorted({*pools, *teams}, key=lambda k: (k[0], k[1], k[2].value))
    lines = [f"# {title}", "", *_header(period)]
    if not keys:
        lines += ["", "No usage was accounted in this period: no pool has figures."]
    for cluster, in_cluster in groupby(keys, key=lambda k: k[0]):
        lines += ["", f"## Cluster `{cluster}`"]
        for key in in_cluster:
            lines += _pool_section(key, teams.get(key, []), pools.get(key))
    lines += ["", "## Missing data", "", *_missing_section(period.missing)]
    lines += ["", "<sub>Hours over collected intervals only (usage/SEMANTICS.md). own: within the team's "
              "guarantee; borrowed: beyond it; lent: the team's idle guarantee others borrowed; idle "
              "guarantee: neither used nor lent; guarantee used: own / (own + lent + idle guarantee). "
              "Borrowed from nobody: capacity no team is guaranteed.</sub>", ""]
    return "\n".join(lines)


def _header(period: UsagePeriod) -> list[str]:
    lines = [f"- **Period:** {period_text(period.start, period.end)}"]
    coverage = cluster_coverage(period.pools)
    if coverage:
        lines.append("- **Coverage** (five-minute intervals collected): " + "; ".join(
            f"`{cluster}` {_percent((total - missing) / total if total else None)} ({total - missing:,} of {total:,})"
            for cluster, (total, missing) in coverage.items()))
    count, seconds = len(period.missing), sum(m.end - m.start for m in period.missing)
    lines.append(f"- **Missing data:** {count} period{'' if count == 1 else 's'}, {duration_text(seconds)} "
                 "(listed at the end; not counted as idle)" if count else "- **Missing data:** none")
    return lines


def cluster_coverage(pools: Iterable[PoolUsage]) -> dict[str, tuple[int, int]]:
    """Per cluster (sorted), (intervals, missing intervals): the pools of a cluster share its
    collection, so the pool with most intervals speaks for it."""
    found: dict[str, tuple[int, int]] = {}
    for pool in pools:
        found[pool.cluster] = max(found.get(pool.cluster, (0, 0)), (pool.intervals, pool.missing_intervals))
    return dict(sorted(found.items()))


def _shown(row: TeamUsage, pool: PoolUsage | None) -> bool:
    """A row may be left out only when every figure is zero and the team had no guarantee: both
    known only if some interval was collected (else zeros say nothing)."""
    collected = pool is not None and pool.intervals > pool.missing_intervals
    return not collected or any(row[4:]) or guarantee_hours(row) > 0


def _pool_section(key: PoolKey, teams: list[TeamUsage], pool: PoolUsage | None) -> list[str]:
    _, instance_type, kind = key
    lines = ["", f"### `{instance_type}`, {KIND_NAME[kind]} ({UNIT[kind]})", ""]
    shown = [t for t in teams if _shown(t, pool)]
    hidden = [t.team for t in teams if not _shown(t, pool)]
    if shown:
        lines += md_table(TEAM_HEADER, ([t.team, *map(_hours, t[4:]), _percent(guarantee_utilisation(t))]
                                         for t in shown))
    else:
        lines.append("No team used this pool or was guaranteed any of it.")
    if hidden:
        lines += ["", f"Not shown, no use and no guarantee here: {', '.join(hidden)}."]
    lines += ["", _pool_line(pool, UNIT[kind])]
    return lines


def _pool_line(pool: PoolUsage | None, unit: str) -> str:
    if pool is None:
        return "**Pool:** no figures for this pool in the period."
    collected = pool.intervals - pool.missing_intervals
    partial = f"; {collected:,} of {pool.intervals:,} intervals collected" if pool.missing_intervals else ""
    return (f"**Pool:** capacity {_hours(pool.capacity_hours)} {unit}, guaranteed {_hours(pool.guaranteed_hours)}, "
            f"used {_hours(pool.used)} ({_percent(pool_utilisation(pool))} utilisation), borrowed from nobody "
            f"{_hours(pool.from_nobody)}, unguaranteed idle {_hours(pool.unguaranteed_idle)}{partial}.")


def _missing_section(missing: Sequence[MissingPeriod]) -> list[str]:
    if not missing:
        return ["None: every interval of the period was collected."]
    rows = ([f"`{m.cluster}`", _stamp(m.start), _stamp(m.end), duration_text(m.end - m.start)]
            for m in sorted(missing))
    return ["Usage in these periods was not collected: the figures above leave them out (they are not idle "
            "time).", "", *md_table(("cluster", "from (UTC)", "to (UTC)", "duration"), rows, left=3)]


# --- records: the rows of CSV and JSON ---------------------------------------------------------

def _team_record(t: TeamUsage) -> dict[str, Any]:
    return {"team": t.team, "cluster": t.cluster, "instance_type": t.instance_type, "kind": t.kind.value,
            "unit": UNIT[t.kind], "used": t.used, "own": t.own, "borrowed": t.borrowed, "lent": t.lent,
            "idle_guarantee": t.idle_guarantee, "lost_to_preemption": t.lost_to_preemption,
            "guarantee_hours": guarantee_hours(t), "guarantee_utilisation": guarantee_utilisation(t)}


def _pool_record(p: PoolUsage) -> dict[str, Any]:
    return {"cluster": p.cluster, "instance_type": p.instance_type, "kind": p.kind.value, "unit": UNIT[p.kind],
            "capacity_hours": p.capacity_hours, "guaranteed_hours": p.guaranteed_hours, "used": p.used,
            "utilisation": pool_utilisation(p), "from_nobody": p.from_nobody,
            "unguaranteed_idle": p.unguaranteed_idle, "intervals": p.intervals,
            "missing_intervals": p.missing_intervals}


def _day_record(d: TeamDay) -> dict[str, Any]:
    return {"team": d.team, "cluster": d.cluster, "instance_type": d.instance_type, "kind": d.kind.value,
            "unit": UNIT[d.kind], "day": _date(d.day_start), "used": d.used, "own": d.own, "borrowed": d.borrowed,
            "lent": d.lent, "idle_guarantee": d.idle_guarantee, "guarantee": d.guarantee,
            "missing_intervals": d.missing_intervals}


def _missing_record(m: MissingPeriod) -> dict[str, Any]:
    return {"cluster": m.cluster, "start": iso(m.start), "end": iso(m.end), "seconds": m.end - m.start}


_RECORDS: Final[dict[CsvTable, Callable[[UsagePeriod], Iterator[dict[str, Any]]]]] = {
    "teams": lambda p: map(_team_record, sorted(p.teams, key=_team_order)),
    "pools": lambda p: map(_pool_record, sorted(p.pools, key=_pool_order)),
    "days": lambda p: map(_day_record, sorted(p.days, key=_day_order)),
    "missing": lambda p: map(_missing_record, sorted(p.missing)),
}


# --- CSV and JSON ------------------------------------------------------------------------------

def _plain(value: object) -> str:
    """A CSV cell: numbers as plain decimals that parse back to the same float (never `1e-05`,
    no thousands separators), None as empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return format(Decimal(repr(value + 0.0)), "f")
    return str(value)


def csv_rows(period: UsagePeriod, *, table: CsvTable = "teams") -> str:
    """One CSV table of the period (RFC 4180: a header row, CRLF line ends, quoted as needed).
    `table`: "teams" (a row per TeamUsage, the default), "pools" (per PoolUsage), "days" (per
    TeamDay) or "missing" (per MissingPeriod). Every row starts with `period_start`, `period_end`
    (ISO-8601 UTC); its other columns are `CSV_COLUMNS[table]`: kinds as their values (`gpu`),
    hours as plain decimals, days as ISO dates, an empty cell for a ratio that has no value."""
    if table not in CSV_COLUMNS:
        raise ValueError(f"no CSV table '{table}'; the tables are {', '.join(CSV_TABLES)}")
    out = io.StringIO()
    writer = csv.writer(out)  # the csv module's dialect is RFC 4180's: CRLF, minimal quoting
    writer.writerow([*PERIOD_COLUMNS, *CSV_COLUMNS[table]])
    bounds = [iso(period.start), iso(period.end)]
    for record in _RECORDS[table](period):
        writer.writerow([*bounds, *(_plain(record[column]) for column in CSV_COLUMNS[table])])
    return out.getvalue()


def as_json(period: UsagePeriod) -> dict[str, Any]:
    """The period for `--json`, ready for `json.dumps` (keys in a fixed order, every value finite):

        {"start": "2026-03-01T00:00:00Z", "end": "2026-04-01T00:00:00Z", "interval_seconds": 300,
         "teams":   [{team, cluster, instance_type, kind, unit, used, own, borrowed, lent,
                      idle_guarantee, lost_to_preemption, guarantee_hours, guarantee_utilisation}],
         "pools":   [{cluster, instance_type, kind, unit, capacity_hours, guaranteed_hours, used,
                      utilisation, from_nobody, unguaranteed_idle, intervals, missing_intervals}],
         "days":    [{team, cluster, instance_type, kind, unit, day, used, own, borrowed, lent,
                      idle_guarantee, guarantee, missing_intervals}],
         "missing": [{cluster, start, end, seconds}]}

    Timestamps are ISO-8601 UTC (`...Z`), days ISO dates; `kind` is the ResourceKind's value
    (`gpu`, `neuron_device`, `neuroncore`, `vcpu`) and `unit` its hours' name (`GPU-hours`); hours
    are numbers of that unit; the utilisations are fractions (0.75), null when they have no value;
    intervals are counts of `interval_seconds`. Rows are sorted as in the Markdown."""
    return {"start": iso(period.start), "end": iso(period.end), "interval_seconds": INTERVAL_SECONDS,
            **{table: list(_RECORDS[table](period)) for table in CSV_TABLES}}
