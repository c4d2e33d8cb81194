"""`import_cmd` (to be `hypergov usage import`) through click on a local copy of the operator's
bucket: the report, the exit status, nothing written on a dry run or when a record is unreadable,
nothing new the second time, and a running collector refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from cli.usage_import import import_cmd
from tests.usage.operator_checks import CLUSTER, accounted_period, assert_example_figures, settings_file
from tests.usage.operator_fixtures import (
    FILE,
    OPERATOR_CLUSTER,
    at,
    example_rows,
    partition,
    write_example,
    write_heartbeats,
    write_workloads,
)
from usage.collector_store import CHECKPOINT_FILE, CollectorStore, usage_dir


def _run(tmp_path: Path, source: Path, *args: str, mapping: str = f"{CLUSTER}={OPERATOR_CLUSTER}") -> Any:
    return CliRunner().invoke(import_cmd, ["--settings", str(settings_file(tmp_path)), "--from", str(source),
                                           "--cluster", mapping, *args])


def test_import_reports_and_a_second_run_finds_nothing_new(tmp_path: Path) -> None:
    bucket = write_example(tmp_path / "bucket")
    result = _run(tmp_path, bucket, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["written"] and not report["dry_run"] and report["not_read"] == {"clusterqueue": 1, "pod": 1}
    [cluster] = report["clusters"]
    assert {k: cluster[k] for k in ("cluster", "operator_cluster", "workloads", "attempts", "lines_added")} == {
        "cluster": CLUSTER, "operator_cluster": OPERATOR_CLUSTER, "workloads": 2, "attempts": 2, "lines_added": 2}
    assert [(r["start"], r["end"]) for r in cluster["covered"]] == [
        ("2025-04-16T09:00:00Z", "2025-04-16T11:00:00Z"), ("2025-04-16T12:00:00Z", "2025-04-16T13:00:00Z")]
    [entry] = report["entries"]
    assert entry["at"] == f"{partition(bucket, 'workload', at(10), OPERATOR_CLUSTER) / FILE} row 4"
    assert not entry["error"] and "namespace default is no team's" in entry["reason"]
    assert_example_figures(accounted_period(tmp_path / "state"))

    again = _run(tmp_path, bucket)
    assert again.exit_code == 0, again.output
    assert f"{CLUSTER} (operator cluster {OPERATOR_CLUSTER}): 2 workload(s), 2 attempt(s), 2 covered range(s); " \
           "nothing new" in again.stdout
    assert "not read: raw/clusterqueue/ (1 object(s))" in again.stdout


def test_a_dry_run_writes_nothing(tmp_path: Path) -> None:
    result = _run(tmp_path, write_example(tmp_path / "bucket"), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "dry run, nothing written" in result.stdout
    assert not (usage_dir(tmp_path / "state", CLUSTER) / CHECKPOINT_FILE).exists()


def test_an_unreadable_record_is_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    rows = example_rows()
    rows[0]["GPU"] = -64.0
    write_workloads(tmp_path / "bucket", rows)
    write_heartbeats(tmp_path / "bucket", (9, 10, 12))
    result = _run(tmp_path, tmp_path / "bucket" / "raw")  # the raw/ folder itself is a source too
    assert result.exit_code == 1
    where = partition(tmp_path / "bucket", "workload", at(9), OPERATOR_CLUSTER) / FILE
    assert f"ERROR {where} row 1: gpu -64.0 is not an amount" in result.stdout
    assert "nothing written: fix the errors above" in result.stdout
    assert CollectorStore.of(tmp_path / "state", CLUSTER).retired() == {}
    assert not (usage_dir(tmp_path / "state", CLUSTER) / CHECKPOINT_FILE).exists()


def test_records_of_an_operator_cluster_not_mapped_are_listed(tmp_path: Path) -> None:
    bucket = write_example(tmp_path / "bucket")
    write_heartbeats(bucket, (9,), cluster="trn-east-op")
    result = _run(tmp_path, bucket)
    assert result.exit_code == 0, result.output
    assert "operator cluster trn-east-op is not mapped (--cluster NAME=trn-east-op): its 2 row(s) not imported" \
        in result.stdout


def test_mappings_name_clusters_of_the_tree(tmp_path: Path) -> None:
    bucket = write_example(tmp_path / "bucket")
    assert _run(tmp_path, bucket, mapping="gpu-east=x").exit_code == 2
    assert _run(tmp_path, bucket, mapping=CLUSTER).exit_code == 2


def test_a_running_collector_is_not_written_beside(tmp_path: Path) -> None:
    bucket = write_example(tmp_path / "bucket")
    store = CollectorStore.of(tmp_path / "state", CLUSTER)
    store.root.mkdir(parents=True)
    with store.held():
        result = _run(tmp_path, bucket)
    assert result.exit_code == 1
    assert "another usage collector" in result.stderr and "(stop it while importing)" in result.stderr
    assert store.retired() == {}


def test_a_source_without_the_operators_objects_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    result = _run(tmp_path, tmp_path / "elsewhere")
    assert result.exit_code == 1
    assert f"ERROR {tmp_path / 'elsewhere' / 'raw' / 'workload'}: no object of the operator's workload" \
        in result.stdout
