"""`hypergov usage collect` end to end through click: the clusters come from the tree and the
`kubeconfigs` setting, their clients from the drift scan's `kube_apis_of`. No kube-apiserver can
run here: a kubeconfig named `<cluster>.fake` loads a `FakeCluster` (every other goes through the
real kubernetes client, e.g. to a port nothing listens on)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli.main import main
from engines.kube import DynamicKubeApi, KubeApi, WatchEvent
from tests.engines.kube_fakes import FakeCluster
from tests.example_tree import CONFIG
from tests.usage.collector_fixtures import uid_of, workload
from usage.collector_store import CollectorStore

UNREACHABLE = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> dict[str, FakeCluster]:
    """The fake clusters by name; a kubeconfig file `<name>.fake` is theirs."""
    clusters: dict[str, FakeCluster] = {}
    real = DynamicKubeApi.from_kubeconfig

    def from_kubeconfig(path: Path) -> KubeApi:
        return clusters[path.stem] if path.suffix == ".fake" else real(path)  # type: ignore[return-value]

    monkeypatch.setattr(DynamicKubeApi, "from_kubeconfig", staticmethod(from_kubeconfig))
    return clusters


def _env(tmp_path: Path, kubeconfigs: dict[str, str]) -> dict[str, str]:
    shutil.copytree(CONFIG, tmp_path / "config", dirs_exist_ok=True)
    paths = {}
    for cluster, kind in kubeconfigs.items():
        path = tmp_path / f"{cluster}.{kind}"
        path.write_text(UNREACHABLE if kind == "kubeconfig" else "a fake cluster\n")
        paths[cluster] = str(path)
    (tmp_path / "hypergov.yaml").write_text(yaml.safe_dump({
        "config_dir": str(tmp_path / "config"), "state_dir": str(tmp_path / "state"), "kubeconfigs": paths}))
    return {"HYPERGOV_SETTINGS": str(tmp_path / "hypergov.yaml")}


def _collect(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(main, ["usage", "collect", *args], env=env)


def test_once_json_lists_every_cluster_with_a_kubeconfig(tmp_path: Path, fakes: dict[str, FakeCluster]) -> None:
    fakes["gpu-west"] = FakeCluster()
    for name in ("train-a", "train-b"):
        fakes["gpu-west"].apply(workload(name))
    env = _env(tmp_path, {"gpu-west": "fake"})  # trn-east (also in the tree) has no kubeconfig: not collected
    result = _collect(env, "--once", "--json")
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)["clusters"]
    assert {k: summary[k] for k in ("cluster", "workloads_kept", "workloads_deleted", "events_applied",
                                    "resource_version", "error")} == {
        "cluster": "gpu-west", "workloads_kept": 2, "workloads_deleted": 0, "events_applied": 0,
        "resource_version": "2", "error": None}
    assert [r["began"] for r in summary["covered"]] == ["list"]
    assert "gpu-west: listed 2 workload(s) at resourceVersion 2" in result.stderr
    kept = sorted(w.uid for w in CollectorStore.of(tmp_path / "state", "gpu-west").workloads())
    assert kept == sorted([uid_of("train-a"), uid_of("train-b")])


def test_an_unreachable_cluster_is_named_with_why_and_exits_1(tmp_path: Path, fakes: dict[str, FakeCluster]) -> None:
    fakes["gpu-west"] = FakeCluster()
    env = _env(tmp_path, {"gpu-west": "fake", "trn-east": "kubeconfig"})
    result = _collect(env, "--once")
    assert result.exit_code == 1, result.output
    assert "ERROR cluster trn-east: temporary error:" in result.stderr and "Traceback" not in result.output
    assert "gpu-west: 0 workload(s) on the cluster, 0 deleted one(s) retired, 0 event(s) applied, resourceVersion 0" \
        in result.stdout


def test_another_collector_on_the_cluster_exits_75_before_reading_anything(
        tmp_path: Path, fakes: dict[str, FakeCluster]) -> None:
    fakes["gpu-west"] = FakeCluster()
    env = _env(tmp_path, {"gpu-west": "fake"})
    with CollectorStore.of(tmp_path / "state", "gpu-west").held():
        result = _collect(env, "--once")
    assert result.exit_code == 75, result.output
    assert f"another usage collector (pid {os.getpid()}) holds the usage state of cluster gpu-west" in result.stderr
    assert fakes["gpu-west"].listings == []
    assert not (tmp_path / "state" / "usage" / "gpu-west" / "checkpoint.json").exists()


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--cluster", "nope"], "no cluster nope in the tree; clusters are: gpu-west, trn-east", id="unknown"),
    pytest.param(["--cluster", "trn-east"], "no kubeconfig configured for cluster trn-east", id="no-kubeconfig"),
    pytest.param(["--watch-seconds", "0"], "0.0 is not in the range x>=1", id="bad-option"),
])
def test_usage_errors_exit_1(tmp_path: Path, fakes: dict[str, FakeCluster], args: list[str], message: str) -> None:
    fakes["gpu-west"] = FakeCluster()
    result = _collect(_env(tmp_path, {"gpu-west": "fake"}), "--once", *args)
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert fakes["gpu-west"].listings == []


def test_no_cluster_with_a_kubeconfig_is_an_error_not_a_silent_success(tmp_path: Path) -> None:
    result = _collect(_env(tmp_path, {}), "--once")
    assert result.exit_code == 1 and "nothing to collect" in result.output


def test_following_stops_cleanly_on_sigterm(tmp_path: Path, fakes: dict[str, FakeCluster]) -> None:
    """Without --once the collector follows until SIGTERM: sent here while its second watch runs."""

    class TerminatedDuringSecondWatch(FakeCluster):
        def watch_kind(self, *args: Any, **kwargs: Any) -> Generator[WatchEvent, None, None]:
            if len(self.watches) == 1:
                os.kill(os.getpid(), signal.SIGTERM)
            yield from super().watch_kind(*args, **kwargs)

    fakes["gpu-west"] = TerminatedDuringSecondWatch()
    fakes["gpu-west"].apply(workload("train-a"))
    result = _collect(_env(tmp_path, {"gpu-west": "fake"}), "--json")
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)["clusters"]
    assert (summary["workloads_kept"], summary["error"]) == (1, None)
    assert len(fakes["gpu-west"].watches) == 2  # stopped during the second: no third


def test_help_says_what_it_reads_and_its_exit_codes() -> None:
    result = CliRunner().invoke(main, ["usage", "collect", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for expected in ("kueue.x-k8s.io/v1beta1", "resourceVersion", "<state_dir>/usage/<cluster>/", "0 collected",
                     "1 any error", "75 busy", "--once", "SIGTERM"):
        assert expected in text, expected
