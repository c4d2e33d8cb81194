"""The Microsoft Philly `cluster_job_log` reader, on the small sample shipped with hypergov."""

from __future__ import annotations

from pathlib import Path

import pytest

import capacity
from capacity.philly import parse_philly, read_philly
from capacity.trace import TraceError

SAMPLE = Path(capacity.__file__).parent / "samples" / "philly-sample.json"


def test_sample_maps_to_jobs() -> None:
    imported = read_philly(SAMPLE, instance_type="ml.p4d.24xlarge", priority="training",
                           team_map={"vc-alpha": "research", "vc-beta": "nlp"})
    by_id = {str(j.id): j for j in imported.jobs}
    assert sorted(by_id) == ["application_0001", "application_0002", "application_0003", "application_0006"]
    first = by_id["application_0001"]
    assert (first.submit, first.team, first.gpus, first.duration) == (0, "research", 8, 3600)
    retried = by_id["application_0002"]  # two attempts: 10 + 30 minutes of work
    assert (retried.submit, retried.gpus, retried.duration) == (600, 2, 2400)
    assert by_id["application_0003"].gpus == 16  # two machines of 8 GPUs
    assert by_id["application_0006"].team == "vc-gamma"  # unmapped virtual clusters keep their name
    assert {j.instance_type for j in imported.jobs} == {"ml.p4d.24xlarge"}
    assert imported.skipped == {"no complete attempt": 1, "no scheduling attempt": 1}


def test_one_object_per_line_is_accepted_too() -> None:
    line = ('{"status": "Pass", "vc": "v", "jobid": "j", "submitted_time": "2017-10-03 08:00:00", '
            '"attempts": [{"start_time": "2017-10-03 08:00:00", "end_time": "2017-10-03 08:01:00", '
            '"detail": [{"ip": "m", "gpus": ["gpu0"]}]}]}')
    imported = parse_philly(line + "\n", source="p", instance_type="x", priority="p", team_map={})
    assert [(j.id, j.duration, j.gpus) for j in imported.jobs] == [("j", 60, 1)]


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("[{", "not a Philly cluster_job_log", id="broken-json"),
    pytest.param('[{"vc": "v"}]', "does not follow the Philly schema", id="missing-jobid"),
])
def test_malformed_input_is_a_trace_error(text: str, expected: str) -> None:
    with pytest.raises(TraceError, match=expected):
        parse_philly(text, source="p", instance_type="x", priority="p", team_map={})
