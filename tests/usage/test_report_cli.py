"""`hypergov usage account` and `hypergov usage report` through click, on the example tree and a
collector's store for gpu-west: vision's job held 8 GPUs of ml.p5.48xlarge from 10:01 to 10:31 on
2026-03-02 (4 GPU-hours, within vision's guarantee of 12 instances, so all its own), and the
collector watched gpu-west that day only: the rest of March is missing, never idle.

The example org prices ml.p5.48xlarge at 55.04 USD per instance-hour (org.yaml `pricing`): 8 GPUs,
so 6.88 per GPU-hour. Over the one collected day vision's guarantee is 96 GPUs x 24 h = 2,304
GPU-hours: 4 used (own), nothing lent (nobody borrowed), 2,300 idle. Its charge: own 4 x 6.88 =
27.52, idle guarantee 2,300 x 6.88 = 15,824.00, total 15,851.52. The p5 pool (32 instances, 256
GPUs) cost 256 x 24 x 6.88 = 42,270.72 that day."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cli.main import main
from tests.example_tree import CONFIG
from tests.usage.collector_fixtures import T0, workload
from usage.collector_state import Checkpoint, KeptWorkload
from usage.collector_store import CollectorStore
from usage.coverage import CoveredRange

DAY = timedelta(days=1)


def _env(tmp_path: Path) -> dict[str, str]:
    shutil.copytree(CONFIG, tmp_path / "config", dirs_exist_ok=True)
    (tmp_path / "hypergov.yaml").write_text(yaml.safe_dump({
        "config_dir": str(tmp_path / "config"), "state_dir": str(tmp_path / "state")}))
    store = CollectorStore.of(tmp_path / "state", "gpu-west")
    body = workload("train-a", admitted=T0 + timedelta(minutes=1), finished=T0 + timedelta(minutes=31)).body
    store.retire(KeptWorkload(uid=body["metadata"]["uid"], body=body, deleted=True), T0 + timedelta(hours=1))
    midnight = T0.replace(hour=0)
    store.save(Checkpoint(resource_version="7", coverage=(CoveredRange(midnight, midnight + DAY, "list"),)))
    return {"HYPERGOV_SETTINGS": str(tmp_path / "hypergov.yaml")}


def test_the_report_shows_the_hours_and_the_missing_days(tmp_path: Path) -> None:
    env = _env(tmp_path)
    result = CliRunner().invoke(main, ["usage", "report", "--month", "2026-03", "--json",
                                       "--charts", str(tmp_path / "charts")], env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (vision,) = [t for t in report["teams"] if t["team"] == "vision" and t["kind"] == "gpu"]
    assert (vision["cluster"], vision["instance_type"]) == ("gpu-west", "ml.p5.48xlarge")
    assert (vision["used"], vision["own"], vision["borrowed"]) == pytest.approx((4.0, 4.0, 0.0))
    assert [(m["cluster"], m["start"], m["end"]) for m in report["missing"]] == [
        ("gpu-west", "2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z"),
        ("gpu-west", "2026-03-03T00:00:00Z", "2026-04-01T00:00:00Z")]
    (charge,) = [t for t in report["chargeback"]["teams"] if t["team"] == "vision"]
    assert (charge["own"], charge["idle_guarantee"], charge["borrowed"], charge["total"]) == (
        "27.52", "15824.00", "0.00", "15851.52")
    (p5,) = [p for p in report["chargeback"]["pools"] if p["instance_type"] == "ml.p5.48xlarge"]
    assert p5["capacity_cost"] == "42270.72" and report["chargeback"]["currency"] == "USD"
    charts = {p.name for p in (tmp_path / "charts").iterdir()}
    assert {"cluster-gpu-west.png", "team-vision.png"} <= charts and all(p.endswith(".png") for p in charts)
    markdown = CliRunner().invoke(main, ["usage", "report", "--month", "2026-03", "--no-account", "--team", "vision"],
                                  env=env)
    assert markdown.exit_code == 0 and "| vision | 4.0 | 4.0 | 0.0 |" in markdown.stdout, markdown.output


def test_account_keeps_an_open_month_open_and_names_what_it_did(tmp_path: Path) -> None:
    env = _env(tmp_path)
    result = CliRunner().invoke(main, ["usage", "account"], env=env)
    assert result.exit_code == 0, result.output
    assert "gpu-west: accounted 2026-03" in result.stdout
    months = json.loads((tmp_path / "state" / "usage" / "warehouse" / "months.json").read_text())
    assert months == {"gpu-west": {"2026-03": {"final": False}}}  # the collector never reached April


def test_bad_input_is_named_without_a_traceback(tmp_path: Path) -> None:
    env = _env(tmp_path)
    bad_month = CliRunner().invoke(main, ["usage", "report", "--month", "March"], env=env)
    assert bad_month.exit_code == 1 and "YYYY-MM" in bad_month.output and "Traceback" not in bad_month.output
    unknown = CliRunner().invoke(main, ["usage", "account", "--cluster", "nowhere"], env=env)
    assert unknown.exit_code == 1 and "no cluster nowhere in the tree" in unknown.output
