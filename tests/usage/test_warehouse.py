"""The warehouse (Parquet files read by DuckDB) gives back the accounted figures, summed per team,
pool and day, with the missing periods; and the ingest accounts a collector's store month by
month, keeping final months. Figures are GPU-hours computed by hand: g GPUs for s seconds are
g * s / 3600 GPU-hours. T0 = 2026-03-02T10:00:00Z."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from tests.usage.collector_fixtures import T0, workload
from usage.accounting import Pool, account
from usage.collector_state import Checkpoint, KeptWorkload
from usage.collector_store import CollectorStore
from usage.coverage import CoveredRange
from usage.ingest import ClusterJob, account_cluster
from usage.resources import GPU_UNITS, ResourceKind
from usage.spans import Span
from usage.warehouse import (
    CLASS_TABLE,
    PART_FILE,
    POOL_TABLE,
    TABLE_COLUMNS,
    TEAM_TABLE,
    Warehouse,
    month_of,
    month_window,
)

T = int(T0.timestamp())
P5 = "ml.p5.48xlarge"
GPU = ResourceKind.GPU
HOUR = 3600


def gpu_pool(cluster: str = "east") -> Pool:
    """16 GPUs; a is guaranteed 8 (Lend), b 8 (LendAndBorrow)."""
    return Pool(cluster, P5, GPU, 16 * GPU_UNITS, {"a": 8 * GPU_UNITS, "b": 8 * GPU_UNITS},
                {"a": "Lend", "b": "LendAndBorrow"})


def write(warehouse: Warehouse, spans: list[Span], *, hours: int = 2, coverage: list[tuple[int, int]] | None = None,
          cluster: str = "east") -> None:
    accounts = account(spans, [gpu_pool(cluster)], start=T, end=T + hours * HOUR,
                       coverage={cluster: coverage if coverage is not None else [(T, T + hours * HOUR)]})
    warehouse.write_month(cluster, month_of(T), accounts, final=False)


def test_the_period_sums_the_accounted_intervals(tmp_path: Path) -> None:
    """b runs 12 GPUs for the first hour (preempted at its end), a 4 GPUs for the second.
    b: used 12, own 8, borrowed 4 (lent by a, the only lender with idle guarantee), lost 12;
    idle guarantee 8 * 2 - 8 = 8. a: used 4, own 4, lent 4, idle 8 * 2 - 4 - 4 = 8.
    The pool: capacity 16 * 2 = 32, guaranteed 32, used 16, nothing borrowed from nobody."""
    warehouse = Warehouse(tmp_path)
    write(warehouse, [Span("b", "east", P5, GPU, "training", 12 * GPU_UNITS, T, T + HOUR, True),
                      Span("a", "east", P5, GPU, "inference", 4 * GPU_UNITS, T + HOUR, T + 2 * HOUR)])
    period = warehouse.period(T, T + 2 * HOUR)
    figures = {t.team: t[4:] for t in period.teams}
    assert figures["a"] == pytest.approx((4, 4, 0, 4, 8, 0))
    assert figures["b"] == pytest.approx((12, 8, 4, 0, 8, 12))
    (pool,) = period.pools
    assert (pool.capacity_hours, pool.guaranteed_hours, pool.used, pool.from_nobody) == pytest.approx((32, 32, 16, 0))
    assert (pool.intervals, pool.missing_intervals) == (24, 0)
    assert pool.unguaranteed_idle == pytest.approx(0)
    assert period.missing == []
    (day_a,) = [d for d in period.days if d.team == "a"]
    assert day_a.day_start == int(datetime(2026, 3, 2, tzinfo=UTC).timestamp())
    assert (day_a.used, day_a.guarantee) == pytest.approx((4, 16))


def test_a_gap_in_collection_is_a_missing_period_and_adds_nothing(tmp_path: Path) -> None:
    """Covered: the first 30 minutes and the second hour; 10:30-11:00 is missing (6 intervals).
    a runs 8 GPUs all along: counted 8 * 1.5 = 12 GPU-hours, not 16."""
    warehouse = Warehouse(tmp_path)
    write(warehouse, [Span("a", "east", P5, GPU, None, 8 * GPU_UNITS, T, T + 2 * HOUR)],
          coverage=[(T, T + 1800), (T + HOUR, T + 2 * HOUR)])
    period = warehouse.period(T, T + 2 * HOUR)
    (a,) = [t for t in period.teams if t.team == "a"]
    assert a.used == pytest.approx(12)
    assert [(m.cluster, m.start, m.end) for m in period.missing] == [("east", T + 1800, T + HOUR)]
    (pool,) = period.pools
    assert (pool.missing_intervals, pool.capacity_hours) == (6, pytest.approx(16 * 1.5))
    (day,) = [d for d in period.days if d.team == "a"]
    assert (day.missing_intervals, day.guarantee) == (6, pytest.approx(8 * 1.5))


def test_filters_and_a_partition_written_again_replaces_the_old(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path)
    write(warehouse, [Span("a", "east", P5, GPU, None, 2 * GPU_UNITS, T, T + HOUR)])
    write(warehouse, [Span("a", "east", P5, GPU, None, 3 * GPU_UNITS, T, T + HOUR)])  # the same month again
    write(warehouse, [Span("b", "west", P5, GPU, None, 5 * GPU_UNITS, T, T + HOUR)], cluster="west")
    both = warehouse.period(T, T + 2 * HOUR)
    assert {(t.cluster, t.team): t.used for t in both.teams if t.used} == {("east", "a"): 3, ("west", "b"): 5}
    only_b = warehouse.period(T, T + 2 * HOUR, teams=["b"])
    assert {(t.cluster, t.team) for t in only_b.teams} == {("east", "b"), ("west", "b")}
    assert {p.cluster for p in only_b.pools} == {"east", "west"}  # a pool is everyone's
    west = warehouse.period(T, T + 2 * HOUR, clusters=["west"])
    assert {t.cluster for t in west.teams} == {p.cluster for p in west.pools} == {"west"}
    quoted = warehouse.period(T, T + 2 * HOUR, teams=["x' OR '1'='1"])
    assert quoted.teams == []
    assert sorted(p.name for p in (tmp_path / TEAM_TABLE).rglob(PART_FILE)) == [PART_FILE, PART_FILE]


def test_the_files_are_plain_hive_partitioned_parquet(tmp_path: Path) -> None:
    """What Athena reads: one directory per table, `cluster=` and `month=` partitions, plain types."""
    warehouse = Warehouse(tmp_path)
    write(warehouse, [Span("a", "east", P5, GPU, "training", 2 * GPU_UNITS, T, T + HOUR)])
    for table in (TEAM_TABLE, CLASS_TABLE, POOL_TABLE):
        (part,) = (tmp_path / table).rglob(PART_FILE)
        assert part.parent.relative_to(tmp_path / table) == Path("cluster=east/month=2026-03")
    for table in (TEAM_TABLE, CLASS_TABLE, POOL_TABLE):
        described = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{tmp_path / table}/*/*/{PART_FILE}', "
                               "hive_partitioning = false)").fetchall()
        assert tuple((row[0], row[1]) for row in described) == TABLE_COLUMNS[table]  # what Athena is told


def test_an_empty_warehouse_is_an_empty_period(tmp_path: Path) -> None:
    period = Warehouse(tmp_path / "nothing").period(T, T + HOUR)
    assert (period.teams, period.pools, period.days, period.missing) == ([], [], [], [])


def test_month_windows() -> None:
    assert month_window("2026-12") == (int(datetime(2026, 12, 1, tzinfo=UTC).timestamp()),
                                       int(datetime(2027, 1, 1, tzinfo=UTC).timestamp()))
    with pytest.raises(ValueError, match="YYYY-MM"):
        month_window("March")


def _store(tmp_path: Path, covered_until: datetime) -> CollectorStore:
    """vision ran 8 GPUs from T0 + 1 h for 2 h, 2026-03-02; the collector watched from T0 on."""
    store = CollectorStore.of(tmp_path / "state", "east")
    body = workload("train-1", admitted=T0 + timedelta(hours=1), finished=T0 + timedelta(hours=3)).body
    store.put(KeptWorkload(uid=body["metadata"]["uid"], body=body, deleted=False))
    store.save(Checkpoint(resource_version="9", coverage=(CoveredRange(T0, covered_until, "list"),)))
    return store


def _job(tmp_path: Path, now: datetime, **options: object) -> ClusterJob:
    pool = Pool("east", P5, GPU, 16 * GPU_UNITS, {"vision": 8 * GPU_UNITS})
    return ClusterJob("east", (pool,), tmp_path / "state", tmp_path / "warehouse", now=int(now.timestamp()),
                      **options)  # type: ignore[arg-type]


def test_ingest_accounts_the_store_and_keeps_a_final_month(tmp_path: Path) -> None:
    """16 GPU-hours for vision in March. While the collector has covered March only in part the
    month is open and accounted again on every run; once its coverage passes the month's end the
    month is final: kept as it is, even if the tree changes (here: vision's guarantee dropped),
    unless asked to account it again."""
    april = datetime(2026, 4, 1, tzinfo=UTC)
    _store(tmp_path, covered_until=T0 + timedelta(hours=4))
    first = account_cluster(_job(tmp_path, now=T0 + timedelta(hours=4)))
    assert (first.accounted, first.kept_final, first.spans) == (("2026-03",), (), 1)
    warehouse = Warehouse(tmp_path / "warehouse")
    assert not warehouse.is_final("east", "2026-03")
    _store(tmp_path, covered_until=april + timedelta(hours=1))
    done = account_cluster(_job(tmp_path, now=april + timedelta(hours=1)))
    assert done.accounted == ("2026-03", "2026-04") and warehouse.is_final("east", "2026-03")
    march = warehouse.period(*month_window("2026-03"))
    (vision,) = march.teams
    assert (vision.used, vision.own) == pytest.approx((16, 16))
    assert march.missing[0].start == int(month_window("2026-03")[0])  # before the collector started
    changed = ClusterJob("east", (Pool("east", P5, GPU, 16 * GPU_UNITS, {}),), tmp_path / "state",
                         tmp_path / "warehouse", now=int((april + timedelta(hours=2)).timestamp()))
    again = account_cluster(changed)
    assert again.kept_final == ("2026-03",) and again.accounted == ("2026-04",)
    assert warehouse.period(*month_window("2026-03")).teams[0].own == pytest.approx(16)
    account_cluster(ClusterJob(**{**changed.__dict__, "refinalise": True}))
    assert warehouse.period(*month_window("2026-03")).teams[0].own == pytest.approx(0)
    assert math.isclose(warehouse.period(*month_window("2026-03")).teams[0].borrowed, 16)

