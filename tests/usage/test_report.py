"""The usage report's Markdown, CSV and JSON of a period built by hand (tests/usage/report_fixtures.py:
its docstring gives every input). Each expected figure is worked out here from the inputs, not
copied from the output; the golden file pins the whole Markdown (regenerate with
`python -m tests.usage.regen_report_golden` and review the diff)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.usage.report_fixtures import END, GAP_END, GAP_START, GOLDEN, START, TITLE, period
from usage.report import (
    CSV_COLUMNS,
    CSV_TABLES,
    DASH,
    PERIOD_COLUMNS,
    UNIT,
    as_json,
    csv_rows,
    duration_text,
    markdown,
    period_text,
)
from usage.resources import ResourceKind
from usage.summary import MissingPeriod, PoolUsage, TeamUsage, UsagePeriod

NEURONCORE = ResourceKind.NEURONCORE


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_the_team_tables_hold_the_hand_computed_figures() -> None:
    lines = _lines(markdown(period(), title=TITLE))
    expected = [
        # east, 46 collected hours; guarantee used = own / (guarantee x 46 h)
        "| alpha | 376.0 | 276.0 | 100.0 | 0.0 | 92.0 | 20.5 | 75.0 % |",  # 276 / (8 x 46 = 368)
        "| beta | 46.0 | 46.0 | 0.0 | 60.0 | 78.0 | 0.0 | 25.0 % |",  # 46 / (4 x 46 = 184): lent is not own use
        "| gamma | 0.0 | 0.0 | 0.0 | 0.0 | 92.0 | 0.0 | 0.0 % |",  # 0 / (2 x 46)
        # west, 48 hours, thousands separated
        "| alpha | 10,368.0 | 10,368.0 | 0.0 | 1,152.0 | 2,304.0 | 0.0 | 75.0 % |",  # 10,368 / (288 x 48 = 13,824)
        "| beta | 10,064.0 | 6,912.0 | 3,152.0 | 0.0 | 0.0 | 500.5 | 100.0 % |",  # 6,912 / (144 x 48)
    ]
    assert [line for line in lines if line.startswith("| alpha") or line.startswith("| beta")
            or line.startswith("| gamma")] == expected
    assert not any(line.startswith("| delta") for line in lines)
    assert "Not shown, no use and no guarantee here: delta." in lines


def test_the_pool_lines_and_the_header() -> None:
    lines = _lines(markdown(period(), title=TITLE))
    # east: 16 x 46 = 736 capacity, 14 x 46 = 644 guaranteed, 422 / 736 = 57.34 %, idle 736 - 644 - 40 = 52
    assert ("**Pool:** capacity 736.0 GPU-hours, guaranteed 644.0, used 422.0 (57.3 % utilisation), borrowed from "
            "nobody 40.0, unguaranteed idle 52.0; 552 of 576 intervals collected.") in lines
    # west: 720 x 48 = 34,560, 432 x 48 = 20,736, 20,432 / 34,560 = 59.12 %, 34,560 - 20,736 - 2,000 = 11,824
    assert ("**Pool:** capacity 34,560.0 vCPU-hours, guaranteed 20,736.0, used 20,432.0 (59.1 % utilisation), "
            "borrowed from nobody 2,000.0, unguaranteed idle 11,824.0.") in lines
    assert lines[:5] == [
        f"# {TITLE}", "",
        "- **Period:** 2026-03-02 to 2026-03-03 (2 days, UTC)",
        # 2 missing hours of 48 on east: 552 of 576 intervals, 95.83 %
        "- **Coverage** (five-minute intervals collected): `east` 95.8 % (552 of 576); `west` 100.0 % (576 of 576)",
        "- **Missing data:** 1 period, 2 h (listed at the end; not counted as idle)"]
    assert "| `east` | 2026-03-03 10:00 | 2026-03-03 12:00 | 2 h |" in lines


def test_sections_are_sorted_whatever_the_input_order() -> None:
    given = period()
    shuffled = given._replace(teams=list(reversed(given.teams)), pools=list(reversed(given.pools)))
    text = markdown(shuffled, title=TITLE)
    assert text == markdown(given, title=TITLE)
    order = [text.index(s) for s in ("## Cluster `east`", "| alpha | 376.0", "| beta | 46.0", "| gamma",
                                     "## Cluster `west`", "| alpha | 10,368.0", "| beta | 10,064.0",
                                     "## Missing data")]
    assert order == sorted(order)


def test_a_team_without_guarantee_shows_a_dash_and_zero_rows_stay_when_nothing_was_collected() -> None:
    """epsilon borrowed 5 NeuronCore-hours with no guarantee; on a pool none of whose intervals was
    collected, zeros say nothing, so zeta's row stays."""
    usage = UsagePeriod(START, START + 3600,
                        [TeamUsage("epsilon", "trn", "ml.trn1.32xlarge", NEURONCORE, 5.0, 0.0, 5.0, 0.0, 0.0, 0.0),
                         TeamUsage("zeta", "dark", "ml.trn1.32xlarge", NEURONCORE, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)],
                        [PoolUsage("trn", "ml.trn1.32xlarge", NEURONCORE, 32.0, 0.0, 5.0, 5.0, 12, 0),
                         PoolUsage("dark", "ml.trn1.32xlarge", NEURONCORE, 0.0, 0.0, 0.0, 0.0, 12, 12)],
                        [], [MissingPeriod("dark", START, START + 3600)])
    lines = _lines(markdown(usage, title="t"))
    assert f"| epsilon | 5.0 | 0.0 | 5.0 | 0.0 | 0.0 | 0.0 | {DASH} |" in lines
    assert f"| zeta | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | {DASH} |" in lines
    assert "### `ml.trn1.32xlarge`, NeuronCores (NeuronCore-hours)" in lines
    # 5 of 32 NeuronCore-hours = 15.625 %; the dark pool has no collected capacity: no utilisation
    assert any("used 5.0 (15.6 % utilisation)" in line for line in lines)
    assert any(f"used 0.0 ({DASH} utilisation)" in line and "0 of 12 intervals collected" in line for line in lines)


def test_no_missing_data_and_no_pools_are_said() -> None:
    empty = UsagePeriod(START, END, [], [], [], [])
    lines = _lines(markdown(empty, title="t"))
    assert "- **Missing data:** none" in lines
    assert "None: every interval of the period was collected." in lines
    assert "No usage was accounted in this period: no pool has figures." in lines


def test_numbers_round_to_one_decimal_and_never_show_minus_zero() -> None:
    usage = UsagePeriod(START, END, [TeamUsage("a", "c", "t", ResourceKind.GPU, 1234.56, 1234.56, -1e-12, 0.04,
                                               0.0, 0.0)], [], [], [])
    assert "| a | 1,234.6 | 1,234.6 | 0.0 | 0.0 | 0.0 | 0.0 | 100.0 % |" in _lines(markdown(usage, title="t"))


def test_every_kind_has_a_unit() -> None:
    assert UNIT == {ResourceKind.GPU: "GPU-hours", ResourceKind.NEURON_DEVICE: "Neuron-device-hours",
                    ResourceKind.NEURONCORE: "NeuronCore-hours", ResourceKind.VCPU: "vCPU-hours"}


def test_period_and_duration_texts() -> None:
    assert period_text(START, START + 86400) == "2026-03-02 (1 day, UTC)"
    assert period_text(START + 36000, START + 37830) == "2026-03-02 10:00 to 2026-03-02 10:30:30 UTC (30 min 30 s)"
    assert duration_text(GAP_END - GAP_START) == "2 h"
    assert duration_text(86400 + 3 * 3600 + 300) == "1 d 3 h 5 min"


def test_the_markdown_matches_its_golden_file() -> None:
    assert GOLDEN.exists(), "run 'python -m tests.usage.regen_report_golden'"
    assert markdown(period(), title=TITLE) == GOLDEN.read_text(encoding="utf-8"), (
        f"{GOLDEN.name} is stale: run 'python -m tests.usage.regen_report_golden' and review the diff")


# --- CSV ---------------------------------------------------------------------------------------

def _read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_the_team_csv_parses_back_to_the_same_numbers() -> None:
    given = period()
    text = csv_rows(given)
    assert text.splitlines()[0].split(",") == [*PERIOD_COLUMNS, *CSV_COLUMNS["teams"]]
    assert text.endswith("\r\n") and "\r\n" in text  # RFC 4180 line ends
    rows = _read(text)
    by_key = {(r["cluster"], r["team"]): r for r in rows}
    assert len(rows) == len(given.teams)
    for team in given.teams:
        row = by_key[(team.cluster, team.team)]
        assert (row["period_start"], row["period_end"]) == ("2026-03-02T00:00:00Z", "2026-03-04T00:00:00Z")
        assert (row["instance_type"], row["kind"]) == (team.instance_type, team.kind.value)
        assert [float(row[f]) for f in ("used", "own", "borrowed", "lent", "idle_guarantee",
                                        "lost_to_preemption")] == list(team[4:])
    assert by_key[("west", "alpha")]["used"] == "10368.0"  # no thousands separator
    assert float(by_key[("east", "alpha")]["guarantee_utilisation"]) == 276 / 368
    assert by_key[("east", "delta")]["guarantee_utilisation"] == ""  # no guarantee
    assert [(r["cluster"], r["team"]) for r in rows] == sorted((t.cluster, t.team) for t in given.teams)


def test_the_other_csv_tables() -> None:
    given = period()
    pools = _read(csv_rows(given, table="pools"))
    assert [(r["cluster"], float(r["capacity_hours"]), float(r["used"]), int(r["missing_intervals"]))
            for r in pools] == [("east", 736.0, 422.0, 24), ("west", 34560.0, 20432.0, 0)]
    assert float(pools[0]["unguaranteed_idle"]) == 736 - 644 - 40
    days = _read(csv_rows(given, table="days"))
    assert len(days) == len(given.days)
    alpha_east = [(r["day"], float(r["own"]), int(r["missing_intervals"])) for r in days
                  if (r["team"], r["cluster"]) == ("alpha", "east")]
    assert alpha_east == [("2026-03-02", 150.0, 0), ("2026-03-03", 126.0, 24)]
    assert _read(csv_rows(given, table="missing")) == [{
        "period_start": "2026-03-02T00:00:00Z", "period_end": "2026-03-04T00:00:00Z", "cluster": "east",
        "start": "2026-03-03T10:00:00Z", "end": "2026-03-03T12:00:00Z", "seconds": "7200"}]
    with pytest.raises(ValueError, match="no CSV table 'bogus'"):
        csv_rows(given, table="bogus")  # type: ignore[arg-type]


def test_csv_numbers_are_plain_decimals_that_parse_back_exactly() -> None:
    tiny, big = 1e-05, 12345678.125
    usage = UsagePeriod(START, END, [TeamUsage("a", "c", "t", ResourceKind.VCPU, big, tiny, 0.1, 0.0, 0.0, 0.0)],
                        [], [], [])
    (row,) = _read(csv_rows(usage))
    assert (row["used"], row["own"], row["borrowed"]) == ("12345678.125", "0.00001", "0.1")
    assert (float(row["used"]), float(row["own"])) == (big, tiny)


def test_every_table_has_a_header_even_when_empty() -> None:
    empty = UsagePeriod(START, END, [], [], [], [])
    for table in CSV_TABLES:
        assert csv_rows(empty, table=table) == ",".join([*PERIOD_COLUMNS, *CSV_COLUMNS[table]]) + "\r\n"


# --- JSON --------------------------------------------------------------------------------------

def test_the_json_round_trips_with_stable_keys() -> None:
    data = as_json(period())
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert list(data) == ["start", "end", "interval_seconds", *CSV_TABLES]
    assert (data["start"], data["end"], data["interval_seconds"]) == ("2026-03-02T00:00:00Z", "2026-03-04T00:00:00Z",
                                                                      300)
    for table in CSV_TABLES:
        assert all(list(row) == list(CSV_COLUMNS[table]) for row in data[table])
    first = data["teams"][0]
    assert (first["team"], first["kind"], first["unit"], first["used"]) == ("alpha", "gpu", "GPU-hours", 376.0)
    assert first["guarantee_utilisation"] == 0.75  # 276 / 368
    assert [t["guarantee_utilisation"] for t in data["teams"] if t["team"] == "delta"] == [None]
    assert data["pools"][0]["utilisation"] == 422 / 736
    assert data["missing"] == [{"cluster": "east", "start": "2026-03-03T10:00:00Z", "end": "2026-03-03T12:00:00Z",
                                "seconds": 7200}]
    assert json.dumps(as_json(period())) == json.dumps(data)  # same input, same text
