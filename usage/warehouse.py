"""The usage warehouse: accounted intervals kept as Parquet files and queried with DuckDB, an
embedded analytical engine that needs no server. The layout is Hive-partitioned, one directory per
table, so the same files serve Athena (README, "Usage on Athena"):

    <state_dir>/usage/warehouse/team_intervals/cluster=<c>/month=<YYYY-MM>/part.parquet
    <state_dir>/usage/warehouse/class_intervals/cluster=<c>/month=<YYYY-MM>/part.parquet
    <state_dir>/usage/warehouse/pool_intervals/cluster=<c>/month=<YYYY-MM>/part.parquet
    <state_dir>/usage/warehouse/months.json   which (cluster, month) partitions are final

A (cluster, month) partition is replaced whole each time it is accounted (each file written to a
temporary name, then renamed: a reader sees the old file or the new, never half of one); a month
accounted after its end is final and kept as it is (re-accounted only when asked), so a later
tree does not rewrite the history it did not govern.

Columns are plain (VARCHAR, BIGINT epoch seconds, BOOLEAN, DOUBLE hours) and the queries keep to
what DuckDB and Athena (Trino) both accept: SUM, COUNT, CASE, GROUP BY, `%` on integers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import duckdb
import numpy as np

from usage.accounting import INTERVAL_SECONDS, SECONDS_PER_HOUR, PoolAccount
from usage.resources import UNITS, ResourceKind
from usage.summary import MissingPeriod, PoolUsage, TeamDay, TeamUsage, UsagePeriod

TEAM_TABLE: Final = "team_intervals"
CLASS_TABLE: Final = "class_intervals"
POOL_TABLE: Final = "pool_intervals"
TABLES: Final = (TEAM_TABLE, CLASS_TABLE, POOL_TABLE)
PART_FILE: Final = "part.parquet"
MONTHS_FILE: Final = "months.json"
DAY_SECONDS: Final = 86400

_HIVE = "hive_partitioning = true, hive_types = {'cluster': VARCHAR, 'month': VARCHAR}"


def warehouse_dir(state_dir: Path) -> Path:
    return Path(state_dir) / "usage" / "warehouse"


def month_of(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m")


def month_window(month: str) -> tuple[int, int]:
    """[start, end) in epoch seconds of a UTC calendar month written `YYYY-MM`."""
    try:
        first = datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC)
    except ValueError as error:
        raise ValueError(f"month '{month}' is not YYYY-MM (e.g. 2026-03)") from error
    following = first.replace(year=first.year + 1, month=1) if first.month == 12 else \
        first.replace(month=first.month + 1)
    return int(first.timestamp()), int(following.timestamp())


class Warehouse:
    """The Parquet tables under `root`, written per (cluster, month) and read with DuckDB."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # -- writing -------------------------------------------------------------------------------

    def write_month(self, cluster: str, month: str, accounts: Sequence[PoolAccount], *, final: bool) -> None:
        """Replace the (cluster, month) partition of every table with `accounts`' intervals, and
        record whether the month is final (accounted after its end)."""
        with _connection(threads=1) as con:  # one cluster's month is small; clusters run in parallel
            for table, (relations, select) in (_month_columns(accounts) if accounts else {}).items():
                target = self._partition(table, cluster, month) / PART_FILE
                target.parent.mkdir(parents=True, exist_ok=True)
                temporary = target.with_name(f".{PART_FILE}.{os.getpid()}.tmp")
                for name, columns in relations.items():
                    con.register(name, columns)
                con.execute(f"COPY ({select}) TO '{_quoted(temporary)}' (FORMAT PARQUET, COMPRESSION ZSTD)")
                for name in relations:
                    con.unregister(name)
                os.replace(temporary, target)
        months = self.months()
        months.setdefault(cluster, {})[month] = {"final": final}
        _write_json(self.root / MONTHS_FILE, months)

    def months(self) -> dict[str, dict[str, dict[str, Any]]]:
        """cluster -> month -> {"final": bool} of every partition written."""
        path = self.root / MONTHS_FILE
        if not path.exists():
            return {}
        loaded: dict[str, dict[str, dict[str, Any]]] = json.loads(path.read_text())
        return loaded

    def is_final(self, cluster: str, month: str) -> bool:
        return bool(self.months().get(cluster, {}).get(month, {}).get("final"))

    def _partition(self, table: str, cluster: str, month: str) -> Path:
        return self.root / table / f"cluster={cluster}" / f"month={month}"

    # -- reading -------------------------------------------------------------------------------

    def period(self, start: int, end: int, *, teams: Sequence[str] = (), clusters: Sequence[str] = ()) -> UsagePeriod:
        """What a report of [start, end) shows, from the intervals starting in it. `teams` and
        `clusters` filter (empty: all); pools are filtered by cluster only (a pool is everyone's)."""
        if not all((self.root / table).is_dir() and any((self.root / table).glob(f"*/*/{PART_FILE}"))
                   for table in TABLES):
            return UsagePeriod(start, end, [], [], [], [])
        where = _where(start, end, teams, clusters)
        pool_where = _where(start, end, (), clusters)
        with _connection() as con:
            sources = {table: f"read_parquet('{_quoted(self.root / table)}/*/*/{PART_FILE}', {_HIVE})"
                       for table in TABLES}
            team_rows = con.execute(TEAM_QUERY.format(where=where, **sources)).fetchall()
            pool_rows = con.execute(POOL_QUERY.format(where=pool_where, **sources)).fetchall()
            day_rows = con.execute(DAY_QUERY.format(where=where, **sources)).fetchall()
            gap_rows = con.execute(GAP_QUERY.format(where=pool_where, **sources)).fetchall()
        return UsagePeriod(
            start, end,
            teams=[TeamUsage._make((*r[:3], ResourceKind(r[3]), *map(float, r[4:]))) for r in team_rows],
            pools=[PoolUsage._make((*r[:2], ResourceKind(r[2]), *map(float, r[3:7]), int(r[7]), int(r[8])))
                   for r in pool_rows],
            days=[TeamDay._make((*r[:3], ResourceKind(r[3]), int(r[4]), *map(float, r[5:11]), int(r[11])))
                  for r in day_rows],
            missing=_missing_periods(gap_rows))


# The tables' columns and their SQL types, as the Parquet files hold them (the partition columns
# `cluster` and `month` come from the directory names); Athena's tables are declared from these.
TABLE_COLUMNS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    TEAM_TABLE: (("team", "VARCHAR"), ("instance_type", "VARCHAR"), ("kind", "VARCHAR"), ("interval_start", "BIGINT"),
                 ("missing", "BOOLEAN"), ("guarantee", "DOUBLE"), ("used", "DOUBLE"), ("own", "DOUBLE"),
                 ("borrowed", "DOUBLE"), ("lent", "DOUBLE"), ("idle_guarantee", "DOUBLE"),
                 ("lost_to_preemption", "DOUBLE")),
    CLASS_TABLE: (("team", "VARCHAR"), ("priority_class", "VARCHAR"), ("instance_type", "VARCHAR"), ("kind", "VARCHAR"),
                  ("interval_start", "BIGINT"), ("used", "DOUBLE"), ("own", "DOUBLE"), ("borrowed", "DOUBLE"),
                  ("lost_to_preemption", "DOUBLE")),
    POOL_TABLE: (("instance_type", "VARCHAR"), ("kind", "VARCHAR"), ("interval_start", "BIGINT"),
                 ("missing", "BOOLEAN"), ("capacity", "DOUBLE"), ("guaranteed", "DOUBLE"), ("used", "DOUBLE"),
                 ("from_nobody", "DOUBLE")),
}
_ATHENA_TYPES: Final = {"VARCHAR": "string", "BIGINT": "bigint", "BOOLEAN": "boolean", "DOUBLE": "double"}


def athena_ddl(location: str) -> list[str]:
    """CREATE EXTERNAL TABLE statements for the warehouse copied under `location` (s3://bucket/prefix,
    holding the three table folders), partitioned as the files are; then `MSCK REPAIR TABLE <t>`
    (or ALTER TABLE ADD PARTITION) finds the partitions."""
    base = location.rstrip("/")
    return [f"CREATE EXTERNAL TABLE IF NOT EXISTS {table} (\n  "
            + ",\n  ".join(f"{name} {_ATHENA_TYPES[kind]}" for name, kind in columns)
            + f"\n)\nPARTITIONED BY (cluster string, month string)\nSTORED AS PARQUET\nLOCATION '{base}/{table}/'"
            for table, columns in TABLE_COLUMNS.items()]


def athena_queries(start: int, end: int) -> dict[str, str]:
    """The report's queries as Athena runs them: on the tables `athena_ddl` declares."""
    where = _where(start, end, (), ())
    tables = {table: table for table in TABLES}
    return {name: query.format(where=where, **tables).strip() for name, query in
            (("teams", TEAM_QUERY), ("pools", POOL_QUERY), ("days", DAY_QUERY), ("missing", GAP_QUERY))}


# The queries: Athena runs them with each `{table}` replaced by its table name (README).
TEAM_QUERY: Final = """
SELECT team, cluster, instance_type, kind,
       SUM(COALESCE(used, 0)), SUM(COALESCE(own, 0)), SUM(COALESCE(borrowed, 0)), SUM(COALESCE(lent, 0)),
       SUM(COALESCE(idle_guarantee, 0)), SUM(COALESCE(lost_to_preemption, 0))
FROM {team_intervals}
WHERE {where}
GROUP BY team, cluster, instance_type, kind
ORDER BY cluster, instance_type, kind, team
"""

POOL_QUERY: Final = """
SELECT cluster, instance_type, kind,
       SUM(CASE WHEN missing THEN 0 ELSE capacity END), SUM(CASE WHEN missing THEN 0 ELSE guaranteed END),
       SUM(COALESCE(used, 0)), SUM(COALESCE(from_nobody, 0)),
       COUNT(*), SUM(CASE WHEN missing THEN 1 ELSE 0 END)
FROM {pool_intervals}
WHERE {where}
GROUP BY cluster, instance_type, kind
ORDER BY cluster, instance_type, kind
"""

DAY_QUERY: Final = """
SELECT team, cluster, instance_type, kind, interval_start - interval_start % 86400 AS day_start,
       SUM(COALESCE(used, 0)), SUM(COALESCE(own, 0)), SUM(COALESCE(borrowed, 0)), SUM(COALESCE(lent, 0)),
       SUM(COALESCE(idle_guarantee, 0)), SUM(CASE WHEN missing THEN 0 ELSE guarantee END),
       SUM(CASE WHEN missing THEN 1 ELSE 0 END)
FROM {team_intervals}
WHERE {where}
GROUP BY team, cluster, instance_type, kind, interval_start - interval_start % 86400
ORDER BY cluster, instance_type, kind, team, day_start
"""

GAP_QUERY: Final = """
SELECT DISTINCT cluster, interval_start
FROM {pool_intervals}
WHERE {where} AND missing
ORDER BY cluster, interval_start
"""


def _where(start: int, end: int, teams: Sequence[str], clusters: Sequence[str]) -> str:
    """A WHERE clause on the interval's start and the filters (names are quoted as SQL strings)."""
    terms = [f"interval_start >= {int(start)}", f"interval_start < {int(end)}"]
    if teams:
        terms.append(f"team IN ({', '.join(_literal(t) for t in teams)})")
    if clusters:
        terms.append(f"cluster IN ({', '.join(_literal(c) for c in clusters)})")
    return " AND ".join(terms)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _missing_periods(rows: Sequence[tuple[str, int]]) -> list[MissingPeriod]:
    """Consecutive missing intervals of a cluster joined into periods."""
    periods: list[MissingPeriod] = []
    for cluster, start in rows:
        last = periods[-1] if periods else None
        if last is not None and last.cluster == cluster and last.end == start:
            periods[-1] = last._replace(end=start + INTERVAL_SECONDS)
        else:
            periods.append(MissingPeriod(cluster, int(start), int(start) + INTERVAL_SECONDS))
    return periods


@contextmanager
def _connection(threads: int | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(":memory:", config={"threads": threads} if threads else {})
    try:
        yield con
    finally:
        con.close()


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(temporary, path)


# -- the accounted intervals as columns ---------------------------------------------------------

Columns = dict[str, np.ndarray]

TEAM_FIGURES: Final = ("used", "own", "borrowed", "lent", "idle_guarantee", "lost_to_preemption")
_FIGURE = "CASE WHEN s.missing THEN NULL ELSE s.{0} END AS {0}"
TEAM_SELECT: Final = f"""
SELECT n.team, p.instance_type, p.kind, s.interval_start, s.missing, s.guarantee,
       {', '.join(_FIGURE.format(f) for f in TEAM_FIGURES)}
FROM source s JOIN teams n ON n.code = s.team_code JOIN pools p ON p.code = s.pool_code
"""
CLASS_SELECT: Final = """
SELECT n.team, c.priority_class, p.instance_type, p.kind, s.interval_start,
       s.used, s.own, s.borrowed, s.lost_to_preemption
FROM source s JOIN teams n ON n.code = s.team_code JOIN pools p ON p.code = s.pool_code
     JOIN classes c ON c.code = s.class_code
"""
POOL_SELECT: Final = f"""
SELECT p.instance_type, p.kind, s.interval_start, s.missing, s.capacity, s.guaranteed,
       {', '.join(_FIGURE.format(f) for f in ('used', 'from_nobody'))}
FROM source s JOIN pools p ON p.code = s.pool_code
"""


def _month_columns(accounts: Sequence[PoolAccount]) -> dict[str, tuple[dict[str, Columns], str]]:
    """Per table, the relations its SELECT reads (`source` and the name dimensions) and the SELECT.
    Names travel as small dimension tables joined by code: far faster than string columns."""
    team_names = sorted({team for a in accounts for team in a.teams})
    class_names = sorted({c for a in accounts for _, c in a.classes}, key=lambda c: (c is not None, c or ""))
    dimensions: dict[str, Columns] = {
        "teams": {"code": np.arange(len(team_names), dtype=np.int32), "team": np.array(team_names, dtype=object)},
        "classes": {"code": np.arange(len(class_names), dtype=np.int32),
                    "priority_class": np.array(class_names, dtype=object)},
        "pools": {"code": np.arange(len(accounts), dtype=np.int32),
                  "instance_type": np.array([a.pool.instance_type for a in accounts], dtype=object),
                  "kind": np.array([a.pool.kind.value for a in accounts], dtype=object)}}
    team_code = {team: n for n, team in enumerate(team_names)}
    class_code = {c: n for n, c in enumerate(class_names)}
    teams, classes, pools = [], [], []
    for number, account in enumerate(accounts):
        teams.append(_team_columns(number, account, team_code))
        classes.append(_class_columns(number, account, team_code, class_code))
        pools.append(_pool_columns(number, account))
    return {TEAM_TABLE: ({"source": _concatenated(teams), **dimensions}, TEAM_SELECT),
            CLASS_TABLE: ({"source": _concatenated(classes), **dimensions}, CLASS_SELECT),
            POOL_TABLE: ({"source": _concatenated(pools), **dimensions}, POOL_SELECT)}


def _interval_hours(account: PoolAccount, units: int | np.ndarray) -> Any:
    """Hours of the kind that `units` held for a whole interval are."""
    return np.asarray(units, dtype=np.float64) * INTERVAL_SECONDS / (UNITS[account.pool.kind] * SECONDS_PER_HOUR)


def _team_columns(number: int, account: PoolAccount, team_code: dict[str, int]) -> Columns:
    count, width = len(account.teams), len(account.interval_starts)
    guarantees = np.array([account.pool.guarantees.get(t, 0) for t in account.teams], dtype=np.int64)
    return {"pool_code": np.full(count * width, number, dtype=np.int32),
            "team_code": np.repeat(np.array([team_code[t] for t in account.teams], dtype=np.int32), width),
            "interval_start": np.tile(account.interval_starts, count),
            "missing": np.tile(~account.covered, count),
            "guarantee": np.repeat(_interval_hours(account, guarantees), width),
            "used": account.used.ravel(), "own": account.own.ravel(), "borrowed": account.borrowed.ravel(),
            "lent": account.lent.ravel(), "idle_guarantee": account.idle_guarantee.ravel(),
            "lost_to_preemption": _team_lost(account).ravel()}


def _team_lost(account: PoolAccount) -> Any:
    """Each team's hours lost to preemption per interval: its classes' summed (kept with the team's
    figures so that a team's report never reads the much larger class table)."""
    lost = np.zeros((len(account.teams), len(account.interval_starts)))
    number = {team: n for n, team in enumerate(account.teams)}
    np.add.at(lost, np.array([number[t] for t, _ in account.classes], dtype=np.int64), account.class_lost)
    return lost


def _class_columns(number: int, account: PoolAccount, team_code: dict[str, int],
                   class_code: dict[str | None, int]) -> Columns:
    """Only the (team, class, interval) cells with use: a class's absence is no row."""
    width = len(account.interval_starts)
    used = np.nan_to_num(account.class_used) > 0
    kept = (np.broadcast_to(account.covered, used.shape) & used).ravel()
    rows, _ = np.divmod(np.flatnonzero(kept), width)
    return {"pool_code": np.full(len(rows), number, dtype=np.int32),
            "team_code": np.array([team_code[t] for t, _ in account.classes], dtype=np.int32)[rows],
            "class_code": np.array([class_code[c] for _, c in account.classes], dtype=np.int32)[rows],
            "interval_start": np.tile(account.interval_starts, len(account.classes))[kept],
            "used": account.class_used.ravel()[kept], "own": account.class_own.ravel()[kept],
            "borrowed": account.class_borrowed.ravel()[kept], "lost_to_preemption": account.class_lost.ravel()[kept]}


def _pool_columns(number: int, account: PoolAccount) -> Columns:
    width = len(account.interval_starts)
    guaranteed = sum(account.pool.guarantees.values())
    used = account.used.sum(axis=0) if len(account.teams) else np.zeros(width)
    return {"pool_code": np.full(width, number, dtype=np.int32),
            "interval_start": account.interval_starts, "missing": ~account.covered,
            "capacity": np.full(width, _interval_hours(account, account.pool.capacity)),
            "guaranteed": np.full(width, _interval_hours(account, guaranteed)),
            "used": used, "from_nobody": account.from_nobody}


def _concatenated(parts: Sequence[Columns]) -> Columns:
    if not parts:
        return {}
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
