"""The diff of two configs on one trace: a team whose guarantee shrinks, or whose jobs wait
longer, is flagged; the Markdown section for the merge request says so."""

from __future__ import annotations

from capacity_builders import cluster, job, team

from capacity.diff import Thresholds, diff_reports, format_duration, team_regressions
from capacity.render import diff_dict, render_markdown
from capacity.runner import run
from capacity.spec import Job


def _trace() -> list[Job]:
    # a and b each run ten 8-GPU jobs of one hour, submitted together.
    return [job(f"{name}{n}", at=0, team=name, gpus=8, duration=3600) for name in ("a", "b") for n in range(10)]


def test_shrinking_a_guarantee_flags_that_team_only() -> None:
    base = run([cluster(team("a", 16), team("b", 16), capacity=32)], _trace())
    head = run([cluster(team("a", 8), team("b", 16), capacity=32)], _trace())
    diff = diff_reports(base, head, base_ref="main", head_ref="mr-1", trace="t.jsonl", jobs=20)
    flagged = {t.team: t.reasons for _, t in diff.regressions}
    assert list(flagged) == ["a"]
    assert "guaranteed gpu GPUs 16 -> 8" in flagged["a"]
    assert "p50 wait 2.0 h -> 4.0 h" in flagged["a"]  # two jobs at a time, then one (a only lends)


def test_no_change_no_regression() -> None:
    config = [cluster(team("a", 16), team("b", 16), capacity=32)]
    diff = diff_reports(run(config, _trace()), run(config, _trace()), base_ref="x", head_ref="y", trace="t",
                        jobs=20)
    assert diff.regressions == []
    assert "No team gets worse." in render_markdown(diff)


def test_losing_the_quota_is_a_regression() -> None:
    base = run([cluster(team("a", 16), team("b", 16), capacity=32)], _trace())
    head = run([cluster(team("b", 16), capacity=32)], _trace())
    diff = diff_reports(base, head, base_ref="main", head_ref="mr", trace="t", jobs=20)
    assert [(t.team, t.reasons) for _, t in diff.regressions] == [
        ("a", ("loses its quota on this cluster (16 guaranteed GPUs)",))]


def test_small_changes_are_not_regressions() -> None:
    base = run([cluster(team("a", 16), capacity=16)], [job("a1", at=0, team="a", gpus=16, duration=60),
                                                       job("a2", at=0, team="a", gpus=16, duration=60)])
    slower = run([cluster(team("a", 16), capacity=16)], [job("a1", at=0, team="a", gpus=16, duration=100),
                                                         job("a2", at=0, team="a", gpus=16, duration=60)])
    b, h = base.clusters[0].team("a"), slower.clusters[0].team("a")
    assert team_regressions(b, h, Thresholds()) == []  # p90 wait 60 s -> 100 s: under 5 minutes
    assert team_regressions(b, h, Thresholds(wait_seconds=10)) == ["p90 wait 1.0 m -> 1.7 m"]


def test_markdown_section() -> None:
    base = run([cluster(team("a", 16), team("b", 16), capacity=32)], _trace())
    head = run([cluster(team("a", 8), team("b", 24), capacity=32)], _trace())
    diff = diff_reports(base, head, base_ref="main", head_ref="mr-1", trace="week.jsonl", jobs=20)
    text = render_markdown(diff)
    assert text.startswith("### Capacity impact\n")
    assert "**1 team(s) get worse:** `test/a`." in text
    assert "| a | 16 → 8 |" in text and "**worse**: guaranteed gpu GPUs 16 → 8" in text
    assert "| b | 16 → 24 |" in text
    data = diff_dict(diff)
    assert data["worse"][0]["team"] == "a" and data["clusters"][0]["cluster"] == "test"


def test_format_duration() -> None:
    assert [format_duration(s) for s in (None, 5, 100, 1200, 5400, 3 * 86400)] == [
        "-", "5 s", "1.7 m", "20 m", "1.5 h", "3.0 d"]
