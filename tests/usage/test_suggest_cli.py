"""`hypergov capacity suggest` on the example org after a month of its jobs (the capacity
simulator's replay of its trace, as Workloads in the collector's stores: no cluster runs here).
Every proposal follows its rule from its own evidence, the change lands exactly on the amounts it
names, the proposed tree validates, and the collected jobs are replayed under both trees."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import cli.capacity_suggest
import cli.usage
from cli.demo_usage import seed_last_month
from cli.main import main
from hypergov.validate import validate_dir
from tests.example_tree import CONFIG

APRIL = int(datetime(2026, 4, 1, tzinfo=UTC).timestamp())


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    shutil.copytree(CONFIG, tmp_path / "config")
    (tmp_path / "hypergov.yaml").write_text(yaml.safe_dump({
        "config_dir": str(tmp_path / "config"), "state_dir": str(tmp_path / "state")}))
    seed_last_month(validate_dir(tmp_path / "config").tree, tmp_path / "state", "2026-03")
    for module in (cli.usage, cli.capacity_suggest):
        monkeypatch.setattr(module, "utc_now_seconds", lambda: float(APRIL))
    return {"HYPERGOV_SETTINGS": str(tmp_path / "hypergov.yaml")}


def test_proposals_follow_their_rules_and_land_on_the_amounts(tmp_path: Path, env: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["capacity", "suggest", "--json"], env=env)
    assert result.exit_code == 2, result.output
    report = json.loads(result.stdout)
    assert (report["since"], report["until"]) == ("2026-03-02", "2026-04-01")
    assert report["proposals"], "a month of the example org's jobs proposes something"
    for proposal in report["proposals"]:
        evidence = proposal["evidence"]
        if proposal["proposed"] > proposal["current"]:
            assert evidence["borrow_days"] >= 0.8 * evidence["days"]
        else:
            assert evidence["median_guarantee_use"] < 0.5
        assert f"projects/{proposal['team']}.yaml" in report["diff"]
    assert report["impact"] is not None and report["impact"]["jobs"] > 1000

    written = CliRunner().invoke(main, ["capacity", "suggest", "--write", "--no-impact"], env=env)
    assert written.exit_code == 2, written.output
    assert validate_dir(tmp_path / "config").ok
    for proposal in report["proposals"]:
        quotas = yaml.safe_load((tmp_path / "config" / "projects" / f"{proposal['team']}.yaml").read_text())["quotas"]
        assert quotas[proposal["cluster"]][proposal["unit"]][proposal["instance_type"]] == proposal["proposed"]
    changed = {(p["team"], p["cluster"], p["instance_type"]) for p in report["proposals"]}
    original = validate_dir(CONFIG).tree
    for team, project in original.projects.items():  # nothing else moved
        for cluster, quota in project.model.quotas.items():
            for itype, count in quota.instances.items():
                if (team, cluster, itype) not in changed:
                    now = yaml.safe_load((tmp_path / "config" / "projects" / f"{team}.yaml").read_text())
                    assert now["quotas"][cluster]["instances"][itype] == count
