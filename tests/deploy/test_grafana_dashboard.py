"""deploy/grafana/hypergov-dashboard.json: a dashboard in Grafana's JSON model (no Grafana runs on
the build machines): its fields and panel types, a grid of 24 columns tiled without overlap, every
panel and query on the `${datasource}` variable, the reconciler's metrics each shown, and every
panel's PromQL parsed by promtool (Grafana's variables substituted; promtool has no command for a
bare expression, so each becomes a recording rule of a temporary rule file for `check rules`) and
reading only metrics, labels and label values the daemon exports."""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.promql import problems, run_promtool

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy" / "grafana" / "hypergov-dashboard.json"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
PANEL_TYPES = {"stat", "timeseries", "bargauge", "gauge", "table", "state-timeline", "text", "row"}
# Grafana's variables as promtool would see them after Grafana's interpolation.
VARIABLES = {"__rate_interval": "5m", "__interval": "1m", "__range": "1d", "job": ".*", "instance": ".*"}
SHOWN = ("hypergov_reconcile_passes_total", "hypergov_reconcile_pass_duration_seconds_bucket", "hypergov_applies_total",
         "hypergov_drift_items", "hypergov_audit_records_unpushed", "hypergov_reconcile_last_success_timestamp_seconds")


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels() -> list[dict[str, Any]]:
    return list(dashboard()["panels"])


def targets() -> list[tuple[str, dict[str, Any]]]:
    return [(f"panel {p['id']} {p['title']!r} {t['refId']}", t) for p in panels() for t in p.get("targets", [])]


def interpolated(expr: str) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        assert name in VARIABLES, f"{name}: a variable the dashboard does not define"
        return VARIABLES[name]

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, expr)


def test_the_dashboard_is_grafanas_json_model() -> None:
    board = dashboard()
    assert isinstance(board["schemaVersion"], int) and board["schemaVersion"] >= 36
    assert board["uid"] == "hypergov-reconciler" and len(board["uid"]) <= 40 and board["title"]
    assert board["id"] is None  # Grafana assigns it on import
    assert {"from", "to"} <= set(board["time"]) and isinstance(board["refresh"], str)
    ids = [p["id"] for p in panels()]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    for panel in panels():
        assert panel["type"] in PANEL_TYPES, panel["title"]
        assert panel["title"] and panel["description"]
        assert set(panel["fieldConfig"]) == {"defaults", "overrides"}, panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), panel["title"]


def test_the_datasource_is_a_templated_variable_every_query_uses() -> None:
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for name, variable in variables.items():
        if variable["type"] == "query":
            assert variable["datasource"] == DATASOURCE, name
            assert problems(variable["query"]["query"]) == [], name
    for panel in panels():
        assert panel["datasource"] == DATASOURCE, panel["title"]
    for where, target in targets():
        assert target["datasource"] == DATASOURCE, where
    assert "DS_" not in DASHBOARD.read_text()  # no export-for-sharing input left behind


def test_the_panels_tile_a_24_column_grid_without_overlap() -> None:
    boxes = []
    for panel in panels():
        grid = panel["gridPos"]
        assert set(grid) == {"h", "w", "x", "y"} and all(isinstance(v, int) for v in grid.values()), panel["title"]
        assert grid["w"] > 0 and grid["h"] > 0 and grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        boxes.append((panel["title"], grid))
    for (a, p), (b, q) in combinations(boxes, 2):
        apart = (p["x"] + p["w"] <= q["x"] or q["x"] + q["w"] <= p["x"] or
                 p["y"] + p["h"] <= q["y"] or q["y"] + q["h"] <= p["y"])
        assert apart, f"{a!r} and {b!r} overlap"


def test_each_reconciler_metric_is_shown() -> None:
    exprs = " ".join(t["expr"] for _, t in targets())
    missing = [m for m in SHOWN if m not in exprs]
    assert not missing
    assert "time() -" in exprs  # the last success's age, not its timestamp


def test_every_expression_parses_with_promtool(tmp_path: Path) -> None:
    rule_file = tmp_path / "dashboard-expressions.yaml"
    found = targets()
    records = [{"record": f"dashboard:panel_{n}", "expr": interpolated(t["expr"])} for n, (_, t) in enumerate(found)]
    rule_file.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": records}]}, sort_keys=False))
    output = run_promtool("check", "rules", rule_file)
    assert f"SUCCESS: {len(found)} rules found" in output


@pytest.mark.parametrize("where", [w for w, _ in targets()])
def test_every_expression_reads_what_the_daemon_exports(where: str) -> None:
    (target,) = [t for w, t in targets() if w == where]
    assert problems(target["expr"]) == []
