"""The usage charts of the hand-built period (tests/usage/report_fixtures.py): valid PNGs of the
documented size, byte-identical when drawn twice (whatever the caller's matplotlib settings),
and the daily figures they draw worked out by hand; missing days are gaps, never zeros."""

from __future__ import annotations

import struct
import zlib

import matplotlib
import pytest

from tests.usage.report_fixtures import C5, DAY, END, GPU, P5, START, VCPU, period
from usage.charts import DPI, cluster_png, cluster_utilisation, day_starts, team_png, team_series
from usage.summary import MissingPeriod

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of each chunk, each chunk's CRC checked."""
    assert png[:8] == PNG_SIGNATURE
    found, at = [], 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at:at + 4])
        kind, data = png[at + 4:at + 8], png[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", png[at + 8 + length:at + 12 + length])
        assert zlib.crc32(kind + data) == crc
        found.append((kind, data))
        at += 12 + length
    return found


def size(png: bytes) -> tuple[int, int]:
    kind, data = chunks(png)[0]
    assert kind == b"IHDR"
    width, height = struct.unpack(">II", data[:8])
    return width, height


def test_a_teams_chart_is_a_png_of_one_panel_per_pool_and_the_same_bytes_twice() -> None:
    first = team_png(period(), "alpha")
    # alpha has daily figures on two pools (east GPUs, west vCPUs): 10 in wide, 0.75 + 2 x 3.25 in high
    assert size(first) == (10 * DPI, int((0.75 + 2 * 3.25) * DPI)) == (1000, 725)
    with matplotlib.rc_context({"lines.linewidth": 7, "font.size": 20, "hatch.linewidth": 4}):
        second = team_png(period(), "alpha")
    assert second == first
    assert [kind for kind, _ in chunks(first)][-1] == b"IEND"
    assert not [kind for kind, _ in chunks(first) if kind in (b"tEXt", b"iTXt", b"zTXt", b"tIME")]
    assert size(team_png(period(), "gamma")) == (1000, 400)  # one pool


def test_a_clusters_chart_is_a_png_and_the_same_bytes_twice() -> None:
    first = cluster_png(period(), "east")
    assert size(first) == (1000, 450)
    assert cluster_png(period(), "east") == first
    assert cluster_png(period(), "west") != first


def test_the_team_series_is_per_pool_and_day() -> None:
    series = team_series(period(), "beta")
    assert list(series) == [("east", P5, GPU), ("west", C5, VCPU)]
    east = series[("east", P5, GPU)]
    assert [(d.own, d.lent, d.guarantee, d.missing_intervals) for d in east if d] == [
        (20.0, 30.0, 96.0, 0), (26.0, 30.0, 88.0, 24)]  # 4 GPUs x 24 h, then x 22 h collected


def test_the_cluster_utilisation_per_day_by_hand() -> None:
    """east: 16 GPUs (736 capacity hours / 46 collected). Day 1: (210 + 20) / (16 x 24);
    day 2, 22 hours collected: (166 + 26) / (16 x 22). west: (5,184 + 5,032) / (720 x 24) both days."""
    given = period()
    assert day_starts(given) == [START, START + DAY]
    assert cluster_utilisation(given, "east") == {("east", P5, GPU): [pytest.approx(230 / 384),
                                                                      pytest.approx(192 / 352)]}
    assert cluster_utilisation(given, "west") == {("west", C5, VCPU): [pytest.approx(10216 / 17280)] * 2}


def test_a_day_nothing_of_which_was_collected_is_a_gap_not_a_zero() -> None:
    """east's second day missing whole: its figures are gone (the warehouse sums nothing there)."""
    given = period()
    days = [d for d in given.days if not (d.cluster == "east" and d.day_start == START + DAY)]
    east_pool = next(p for p in given.pools if p.cluster == "east")
    # day 1 alone: 16 x 24 = 384 capacity, 16 x 14 = 336 guaranteed, 230 used
    pools = [p for p in given.pools if p.cluster != "east"] + [
        east_pool._replace(capacity_hours=384.0, guaranteed_hours=336.0, used=230.0, missing_intervals=288)]
    dark = given._replace(days=days, pools=pools, missing=[MissingPeriod("east", START + DAY, END)])
    assert team_series(dark, "alpha")[("east", P5, GPU)][1] is None
    assert cluster_utilisation(dark, "east") == {("east", P5, GPU): [pytest.approx(230 / 384), None]}
    assert size(team_png(dark, "alpha")) == (1000, 725)
    assert size(cluster_png(dark, "east")) == (1000, 450)


def test_a_period_filtered_by_team_has_no_cluster_chart_and_an_unknown_team_none() -> None:
    given = period()
    only_alpha = given._replace(teams=[t for t in given.teams if t.team == "alpha"],
                                days=[d for d in given.days if d.team == "alpha"])
    with pytest.raises(ValueError, match="filtered by team"):
        cluster_png(only_alpha, "east")
    with pytest.raises(ValueError, match="team nobody has no daily figures"):
        team_png(given, "nobody")
    with pytest.raises(ValueError, match="cluster north has no pool"):
        cluster_png(given, "north")
