"""`--drift-every DURATION`: parsed strictly (a typo is a usage error saying how to write one,
never a silent default), and the scan's due time; the watch loop runs `between` (the scheduled
scan) only in the gaps between passes, never during one. The scan against a live endpoint runs
in tests/integration/test_observe_daemon.py."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from engines.outcomes import Backoff
from reconciler.daemon import watch
from reconciler.drift_schedule import drift_due, parse_duration
from reconciler.pass_result import PassResult


@pytest.mark.parametrize(("text", "seconds"), [
    pytest.param("30s", 30, id="seconds"), pytest.param("10m", 600, id="minutes"),
    pytest.param("1h", 3600, id="hours"), pytest.param("1d", 86400, id="days"),
    pytest.param("1h30m", 5400, id="hours-and-minutes"), pytest.param(" 2m ", 120, id="spaces-around"),
])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(("text", "why"), [
    pytest.param("10", "is not a duration", id="no-unit"), pytest.param("10x", "is not a duration", id="bad-unit"),
    pytest.param("1.5h", "is not a duration", id="fraction"), pytest.param("-1m", "is not a duration", id="negative"),
    pytest.param("0s", "longer than zero", id="zero"), pytest.param("30m1h", "largest first", id="order"),
    pytest.param("1m1m", "each unit once", id="twice"), pytest.param("", "is not a duration", id="empty"),
    pytest.param("10 m", "is not a duration", id="inner-space"),
])
def test_bad_durations_say_how_to_write_one(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as raised:
        parse_duration(text)
    assert "30s" in str(raised.value)  # the example of how to write one


def test_due() -> None:
    assert drift_due(None, 5.0, 60.0)
    assert not drift_due(100.0, 159.9, 60.0)
    assert drift_due(100.0, 160.0, 60.0)


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--drift-every", "10x", "--watch", "5"], "'10x' is not a duration", id="bad-duration"),
    pytest.param(["--drift-every", "1m"], "--drift-every need --watch", id="drift-without-watch"),
    pytest.param(["--metrics-port", "0"], "--metrics-port need --watch", id="metrics-without-watch"),
    pytest.param(["--watch", "5", "--remediate-drift"], "--remediate-drift need --drift-every", id="remediate-alone"),
    pytest.param(["--watch", "5", "--drift-report", "r.md"], "--drift-report need --drift-every", id="report-alone"),
])
def test_daemon_options_are_usage_errors_exit_1(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["reconcile", *args], env={"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"),
                                                                "HYPERGOV_STATE_DIR": str(tmp_path / "state")})
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "state").exists()


def test_between_runs_only_in_the_gaps_between_passes() -> None:
    """The scheduled scan must never see a tree half applied: `between` and a pass never overlap,
    and it runs after every pass (also while the loop waits for a new commit)."""
    stop = threading.Event()
    events: list[str] = []
    in_pass = threading.Event()
    outcomes = [PassResult(head="a" * 40, base=None, status="invalid"),  # permanent: waits for a new commit
                PassResult(head="b" * 40, base=None, status="applied")]
    heads = iter(["a" * 40, "a" * 40, "b" * 40, "b" * 40])

    def run_pass() -> PassResult:
        in_pass.set()
        events.append("pass")
        in_pass.clear()
        return outcomes.pop(0)

    def between() -> None:
        assert not in_pass.is_set()
        events.append("between")
        if events.count("between") == 3:
            stop.set()

    watch(run_pass=run_pass, head_of=lambda: next(heads), interval_s=0.001, backoff=Backoff(base_s=0.001, cap_s=0.002),
          stop=stop, on_pass=lambda _: None, on_failure=lambda _: None, on_wait=lambda _: None, between=between)
    assert events == ["pass", "between", "between", "pass", "between"]
