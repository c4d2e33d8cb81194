"""The job-trace format: JSONL and CSV round-trip, and bad records are reported with file and
line, all at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from capacity.spec import InstanceTypeName, Job, JobId, TeamName
from capacity.trace import TraceError, format_trace, parse_trace, read_trace, write_trace

JOBS = [Job(id=JobId("a"), submit=0, team=TeamName("nlp"), instance_type=InstanceTypeName("ml.p5.48xlarge"), gpus=8,
            duration=3600, priority="training", cluster="gpu-west"),
        Job(id=JobId("b"), submit=30, team=TeamName("vision"), instance_type=InstanceTypeName("ml.g5.12xlarge"),
            gpus=1, duration=60, priority="experimentation"),
        Job(id=JobId("c"), submit=60, team=TeamName("recsys"),
            instance_type=InstanceTypeName("ml.p5.48xlarge:mig-3g.40gb"), gpus=4, duration=60,
            priority="experimentation", pods=2)]


@pytest.mark.parametrize("suffix", [pytest.param(".jsonl", id="jsonl"), pytest.param(".csv", id="csv")])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"trace{suffix}"
    write_trace(path, JOBS)
    assert read_trace(path) == JOBS


def test_csv_without_optional_columns_gets_line_ids() -> None:
    text = "submit,team,instance_type,gpus,duration,priority\n0,nlp,ml.p5.48xlarge,8,60,training\n"
    (job,) = parse_trace(text, source="t.csv", fmt="csv")
    assert job.id == "line-2" and job.cluster is None and job.gpus == 8


@pytest.mark.parametrize(("text", "fmt", "expected"), [
    pytest.param('{"submit": 0, "team": "a", "instance_type": "x", "gpus": 0, "duration": 5, "priority": "p"}\n',
                 "jsonl", "t:1: gpus: Input should be greater than or equal to 1", id="zero-gpus"),
    pytest.param('{"submit": 1.5, "team": "a", "instance_type": "x", "gpus": 1, "duration": 5, "priority": "p"}\n',
                 "jsonl", "t:1: submit: Input should be a valid integer", id="fractional-seconds"),
    pytest.param('{"submit": 0}\n\nnot json\n', "jsonl", "t:3: not valid JSON", id="not-json"),
    pytest.param('{"submit": 0, "team": "a", "instance_type": "x", "gpus": 1, "duration": 5, "priority": "p",'
                 ' "colour": "red"}\n', "jsonl", "colour: Extra inputs are not permitted", id="unknown-field"),
    pytest.param("submit,team\n0,a\n", "csv", "the CSV header lacks column(s) instance_type", id="csv-header"),
    pytest.param('{"id": "x", "submit": 0, "team": "a", "instance_type": "x", "gpus": 1, "duration": 5, '
                 '"priority": "p"}\n' * 2, "jsonl", "t:2: job id 'x' was already used on line 1", id="duplicate-id"),
])
def test_bad_records_are_located(text: str, fmt: str, expected: str) -> None:
    with pytest.raises(TraceError) as caught:
        parse_trace(text, source="t", fmt=fmt)  # type: ignore[arg-type]
    assert expected in str(caught.value)


def test_every_problem_is_reported_at_once() -> None:
    bad = '{"submit": -1, "team": "a", "instance_type": "x", "gpus": 1, "duration": 5, "priority": "p"}\n'
    with pytest.raises(TraceError) as caught:
        parse_trace(bad * 3, source="t", fmt="jsonl")
    assert [f"t:{n}: submit" in str(caught.value) for n in (1, 2, 3)] == [True, True, True]


def test_format_is_stable() -> None:
    assert format_trace(JOBS[:1], fmt="jsonl") == (
        '{"id":"a","submit":0,"team":"nlp","instance_type":"ml.p5.48xlarge","gpus":8,"duration":3600,'
        '"priority":"training","cluster":"gpu-west"}\n')


def test_unreadable_file_is_a_trace_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot read the trace"):
        read_trace(tmp_path / "missing.jsonl")
