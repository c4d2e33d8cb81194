"""deploy/prometheus/alerts.yaml, checked by Prometheus' own promtool: `promtool check rules` (the
file, every expression and template) and `promtool test rules` over deploy/prometheus/tests/*.yaml,
where every alert is seen firing and staying quiet (a blip below its `for:`, a recovery). Without
promtool these are skipped on a developer's machine and fail in CI (tests/deploy/promql.py).

The checks without promtool: every alert is tested both ways, carries a severity, a `for:`, a
summary and a description, and has its runbook in the README; every expression reads metrics,
labels and label values the daemon really exports."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.promql import problems, run_promtool

REPO = Path(__file__).resolve().parents[2]
PROMETHEUS = REPO / "deploy" / "prometheus"
ALERTS = PROMETHEUS / "alerts.yaml"
UNIT_TESTS = sorted((PROMETHEUS / "tests").glob("*.yaml"))
SEVERITIES = ("critical", "warning")
DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")  # Prometheus' duration, as the Operator's CRD also takes it


def rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def alert_names() -> list[str]:
    return [rule["alert"] for rule in rules()]


def test_promtool_checks_the_rule_file() -> None:
    output = run_promtool("check", "rules", ALERTS)
    assert f"SUCCESS: {len(rules())} rules found" in output


@pytest.mark.parametrize("unit_test", UNIT_TESTS, ids=[p.stem for p in UNIT_TESTS])
def test_promtool_unit_tests_pass(unit_test: Path) -> None:
    output = run_promtool("test", "rules", unit_test.name, cwd=unit_test.parent)
    assert "SUCCESS" in output


def test_every_alert_is_tested_firing_and_quiet() -> None:
    firing: set[str] = set()
    quiet: set[str] = set()
    for path in UNIT_TESTS:
        unit = yaml.safe_load(path.read_text())
        assert unit["rule_files"] == ["../alerts.yaml"], path.name
        for case in unit["tests"]:
            for check in case["alert_rule_test"]:
                (firing if check["exp_alerts"] else quiet).add(check["alertname"])
    assert set(alert_names()) - firing == set(), "alerts no unit test sees firing"
    assert set(alert_names()) - quiet == set(), "alerts no unit test sees quiet"
    assert (firing | quiet) <= set(alert_names()), "unit tests of alerts that do not exist"


def _readme_runbooks() -> dict[str, str]:
    """The README's "Alerts and dashboard" section, per `#### AlertName` heading."""
    text = (REPO / "README.md").read_text()
    section = text.split("\n### Alerts and dashboard\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    parts = re.split(r"^#### (\w+)\n", section, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_alert_says_how_bad_what_and_for_how_long_and_has_a_runbook() -> None:
    runbooks = _readme_runbooks()
    assert len(set(alert_names())) == len(alert_names()), "two alerts of one name"
    for rule in rules():
        name = rule["alert"]
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, name
        assert DURATION.match(rule["for"]), f"{name}: `for: {rule['for']}`"
        assert rule["labels"]["severity"] in SEVERITIES, name
        assert set(rule["annotations"]) == {"summary", "description"}, name
        assert f"README: Alerts and dashboard, {name}." in rule["annotations"]["description"], name
        assert name in runbooks, f"README: no `#### {name}` runbook under Alerts and dashboard"
        assert "What to do" in runbooks[name], f"README, {name}: say what to do"
    assert list(runbooks) == alert_names(), "the README's runbooks, in the rule file's order"


@pytest.mark.parametrize("name", alert_names())
def test_every_expression_reads_what_the_daemon_exports(name: str) -> None:
    (rule,) = [r for r in rules() if r["alert"] == name]
    assert problems(rule["expr"]) == []
