"""`hypergov stacks generate`: deterministic files, no-op re-runs, orphaned stacks reported (never
deleted), administrator keys kept, dependencies org -> cluster -> project."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from example_tree import example_files

from cli.main import main
from hypergov.validate import validate_files
from stacks.files import generate_stacks, stack_file
from stacks.spec import plan_stacks


def _write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_rerun_is_byte_identical_noop(tmp_path: Path) -> None:
    tree = validate_files(example_files()).tree
    out = tmp_path / "stacks"
    first = generate_stacks(plan_stacks(tree), stacks_dir=out, config_dir="config")
    snapshot = {p.name: p.read_bytes() for p in out.iterdir()}
    second = generate_stacks(plan_stacks(tree), stacks_dir=out, config_dir="config")
    assert len(first.written) == 8 and second.written == () and len(second.unchanged) == 8
    assert {p.name: p.read_bytes() for p in out.iterdir()} == snapshot
    assert "Pulumi.project-vision.yaml" in snapshot


def test_removed_project_is_reported_as_orphan_not_deleted(tmp_path: Path) -> None:
    files = example_files()
    out = tmp_path / "stacks"
    generate_stacks(plan_stacks(validate_files(files).tree), stacks_dir=out, config_dir="config")
    smaller = {k: v for k, v in files.items() if k != "projects/recsys.yaml"}
    report = generate_stacks(plan_stacks(validate_files(smaller).tree), stacks_dir=out, config_dir="config")
    assert report.orphaned == ("project-recsys",)
    assert stack_file(out, "project-recsys").is_file()


def test_administrator_keys_survive_regeneration(tmp_path: Path) -> None:
    tree = validate_files(example_files()).tree
    out = tmp_path / "stacks"
    generate_stacks(plan_stacks(tree), stacks_dir=out, config_dir="config")
    path = stack_file(out, "project-vision")
    admin = "hypergov:kind: org\n  hypergov:assumeRoleName: Deployer"
    edited = path.read_text().replace("hypergov:kind: project", admin)
    path.write_text(edited)
    report = generate_stacks(plan_stacks(tree), stacks_dir=out, config_dir="config")
    assert report.written == ("project-vision",)
    text = path.read_text()
    assert "hypergov:assumeRoleName: Deployer" in text and "hypergov:kind: project" in text


@pytest.mark.parametrize(("stack", "after"), [
    pytest.param("org", (), id="org-first"),
    pytest.param("cluster-trn-east", ("org",), id="cluster-after-org"),
    pytest.param("project-nlp", ("org", "cluster-gpu-west", "cluster-trn-east"), id="project-after-its-clusters"),
])
def test_dependencies_are_explicit(stack: str, after: tuple[str, ...]) -> None:
    specs = plan_stacks(validate_files(example_files()).tree)
    order = [s.name for s in specs]
    spec = next(s for s in specs if s.name == stack)
    assert spec.depends_on == after
    assert all(order.index(dep) < order.index(stack) for dep in after)


def test_cli_generate_check_and_orphan_exit_codes(tmp_path: Path) -> None:
    config = _write_tree(tmp_path / "config", example_files())
    out = tmp_path / "stacks"
    runner = CliRunner()
    args = ["stacks", "generate", "--config", str(config), "--out", str(out)]
    assert runner.invoke(main, [*args, "--check"]).exit_code == 1
    assert runner.invoke(main, args).exit_code == 0
    assert runner.invoke(main, [*args, "--check"]).exit_code == 0
    (config / "projects" / "recsys.yaml").unlink()
    result = runner.invoke(main, [*args, "--check"])
    assert result.exit_code == 1 and "orphaned project-recsys" in result.output


def test_cli_refuses_an_invalid_tree_without_traceback(tmp_path: Path) -> None:
    files = example_files()
    files["projects/vision.yaml"] = files["projects/vision.yaml"] + b"\nunknown_key: 1\n"
    config = _write_tree(tmp_path / "config", files)
    result = CliRunner().invoke(main, ["stacks", "generate", "--config", str(config), "--out", str(tmp_path / "s")])
    assert result.exit_code == 1 and "error(s)" in result.output and result.exception is not None
    assert isinstance(result.exception, SystemExit)
