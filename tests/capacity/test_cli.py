"""`hypergov capacity simulate | diff | generate` end to end on the example tree, a temporary git
repository and the shipped sample traces: output, plots and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

import capacity
from cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(capacity.__file__).parent / "samples"


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 400 jobs of the shipped sample: enough contention, fast."""
    path = tmp_path_factory.mktemp("trace") / "small.jsonl"
    path.write_text("".join((SAMPLES / "example-trace.jsonl").read_text().splitlines(keepends=True)[:400]))
    return path


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A git repository whose HEAD~1 is the example tree and HEAD cuts vision's p5 quota 12 -> 8."""
    shutil.copytree(ROOT / "config", tmp_path / "config")
    r = git.Repo.init(tmp_path)
    with r.config_writer() as cw:
        cw.set_value("user", "name", "test").set_value("user", "email", "test@example.com")
    r.index.add(["config"])
    r.index.commit("base")
    vision = tmp_path / "config" / "projects" / "vision.yaml"
    vision.write_text(vision.read_text().replace("ml.p5.48xlarge: 12", "ml.p5.48xlarge: 8"))
    r.index.add(["config/projects/vision.yaml"])
    r.index.commit("head")
    return tmp_path


def test_simulate_json_and_plots(small_trace: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["capacity", "simulate", "--config", str(ROOT / "config"), "--trace",
                                       str(small_trace), "--json", "--plots", str(tmp_path / "png")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["cluster"] for c in data["clusters"]] == ["gpu-west", "trn-east"]
    assert sum(c["jobs"] for c in data["clusters"]) == 400
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == [
        "gpu-west-utilisation.png", "gpu-west-wait-cdf.png", "trn-east-utilisation.png", "trn-east-wait-cdf.png"]
    assert (tmp_path / "png" / "gpu-west-utilisation.png").read_bytes()[:4] == b"\x89PNG"


def test_simulate_table_for_one_cluster(small_trace: Path) -> None:
    result = CliRunner().invoke(main, ["capacity", "simulate", "--config", str(ROOT / "config"), "--trace",
                                       str(small_trace), "--cluster", "trn-east", "--progress", "restart"])
    assert result.exit_code == 0, result.output
    assert "trn-east: 320 GPUs" in result.stdout and "gpu-west" not in result.stdout
    assert "research" in result.stdout and "utilisation" in result.stdout


def test_simulate_philly_sample() -> None:
    result = CliRunner().invoke(main, [
        "capacity", "simulate", "--config", str(ROOT / "config"), "--trace", str(SAMPLES / "philly-sample.json"),
        "--trace-format", "philly", "--instance-type", "ml.p4d.24xlarge", "--team-map", "vc-alpha=research",
        "--team-map", "vc-beta=nlp", "--json"])
    assert result.exit_code == 0, result.output
    trn = next(c for c in json.loads(result.stdout)["clusters"] if c["cluster"] == "trn-east")
    assert trn["jobs"] == 3 and trn["unroutable_jobs"] == {"vc-gamma": 1}  # vc-gamma is no team of the tree
    nlp = next(t for t in trn["teams"] if t["team"] == "nlp")
    assert nlp["never_admitted"] == 1  # nlp has no p4d guarantee on trn-east, so it cannot borrow p4d either


def test_diff_flags_the_team_that_loses_quota(repo: Path, small_trace: Path, tmp_path: Path) -> None:
    args = ["capacity", "diff", "--config", str(repo / "config"), "--base", "HEAD~1", "--head", "HEAD",
            "--trace", str(small_trace), "--cluster", "gpu-west"]
    shown = CliRunner().invoke(main, args)
    assert shown.exit_code == 0, shown.output
    assert "vision" in shown.stdout and "guaranteed ml.p5.48xlarge GPUs 96 -> 64" in shown.stdout
    strict = CliRunner().invoke(main, [*args, "--fail-on-regression", "--json", "--plots", str(tmp_path / "d")])
    assert strict.exit_code == 1
    worse = json.loads(strict.stdout)["worse"]
    assert ("gpu-west", "vision") in {(w["cluster"], w["team"]) for w in worse}
    assert (tmp_path / "d" / "gpu-west-wait-cdf-diff.png").exists()
    markdown = CliRunner().invoke(main, [*args, "--markdown"])
    assert markdown.stdout.startswith("### Capacity impact")


@pytest.mark.parametrize(("args", "code", "message"), [
    pytest.param(["simulate", "--trace", "{bad}"], 1, "the trace has problems", id="bad-trace"),
    pytest.param(["simulate", "--trace", "{good}", "--cluster", "nope"], 1, "unknown cluster(s) nope",
                 id="unknown-cluster"),
    pytest.param(["simulate", "--trace", "{good}", "--trace-format", "philly"], 1, "needs --instance-type",
                 id="philly-without-type"),
    pytest.param(["simulate", "--trace", "{good}", "--config", "{invalid}"], 1, "is invalid", id="invalid-tree"),
    pytest.param(["diff", "--base", "nope", "--head", "HEAD", "--trace", "{good}", "--config", "{repo-config}"], 1,
                 "'nope' is not a commit", id="unknown-ref"),
])
def test_user_errors_exit_cleanly(args: list[str], code: int, message: str, tmp_path: Path, small_trace: Path,
                                  repo: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"submit": "soon"}\n')
    invalid = tmp_path / "invalid"
    shutil.copytree(ROOT / "config", invalid)
    (invalid / "clusters" / "gpu-west.yaml").write_text("capacity: {}\n")
    values = {"{bad}": str(bad), "{good}": str(small_trace), "{invalid}": str(invalid),
              "{repo-config}": str(repo / "config")}
    result = CliRunner().invoke(main, ["capacity", *[values.get(a, a) for a in args]])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_generate_is_deterministic(tmp_path: Path) -> None:
    outs = []
    for name in ("one.jsonl", "two.jsonl"):
        result = CliRunner().invoke(main, ["capacity", "generate", "--config", str(ROOT / "config"), "--out",
                                           str(tmp_path / name), "--jobs", "300", "--days", "2", "--seed", "4"])
        assert result.exit_code == 0, result.output
        outs.append((tmp_path / name).read_text())
    assert outs[0] == outs[1] and len(outs[0].splitlines()) == 300
