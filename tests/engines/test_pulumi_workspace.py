"""The pulumi engine runs the program on exactly the tree it is given, and creates a stack that
does not exist yet.

The Pulumi CLI cannot be installed here, so the Automation API's workspace and stacks are the
mocked boundary (`FakeWorkspace`, `FakeStack` of test_pulumi_engine: they answer with Pulumi's own
types and record the program input they were opened on). Everything on this side of it is real:
a Git commit read from a bare clone, the tree written into the workspace, and that directory
loaded by the program's own loader."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

import git
import pytest
import yaml

from engines.hyperpod.cluster_executor import with_cluster_arns
from engines.plan import Plan, StackName
from engines.pulumi.workspace import PROGRAM_DIR
from engines.settings import Settings
from hypergov.gitsource import read_tree_at
from hypergov.validate import load_valid_tree
from tests.clusters.cluster_files import GPU_WEST_GROUPS, declared_cluster
from tests.engines.test_pulumi_engine import FakeStack, FakeWorkspace, fake_engine
from tests.example_tree import CONFIG, example_files, valid_tree

# What SageMaker gave the cluster the cluster phase created (its last part is generated).
REPO = Path(__file__).resolve().parents[2]
LIVE_ARN = "arn:aws:sagemaker:us-west-2:111122223333:cluster/l1v3c1u5t3r0"


def _commit_in_bare_clone(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, str]:
    """`files` committed under config/ and pushed to a bare repository (what `--repo URL` clones)."""
    work = git.Repo.init(tmp_path / "work", initial_branch="main")
    for rel, body in files.items():
        path = tmp_path / "work" / "config" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    work.index.add([f"config/{rel}" for rel in files])
    actor = git.Actor("dev", "dev@example.com")
    sha = work.index.commit("a tree that is not the checkout's", author=actor, committer=actor).hexsha
    bare = git.Repo.clone_from(str(tmp_path / "work"), tmp_path / "remote.git", bare=True)
    return Path(bare.git_dir), sha


def test_the_engine_plans_the_commit_it_is_given(tmp_path: Path) -> None:
    files = example_files()
    files["projects/ranking.yaml"] = files.pop("projects/recsys.yaml")  # recsys renamed in this commit only
    files["clusters/gpu-west.yaml"] = declared_cluster(GPU_WEST_GROUPS, example="gpu-west", name="gpu-west")
    bare, sha = _commit_in_bare_clone(tmp_path, files)
    tree = with_cluster_arns(valid_tree(read_tree_at(bare, sha)), {"gpu-west": LIVE_ARN})
    kubeconfig = tmp_path / "trn-east.kubeconfig"
    settings = Settings(state_dir=tmp_path / "state", engine="pulumi", kubeconfigs={"trn-east": kubeconfig})
    opened: list[FakeWorkspace] = []
    engine = fake_engine(settings, tree, {}, opened)
    engine.source_commit = sha

    outcomes = engine.plan_many([StackName("project-ranking"), StackName("cluster-gpu-west")])
    assert all(isinstance(o, Plan) and o.source_commit == sha for o in outcomes.values()), outcomes
    (workspace,) = opened
    config = workspace.configs["project-ranking"]
    given = load_valid_tree(config["hypergov:configDir"])  # what the program loads
    assert "recsys" in load_valid_tree(CONFIG).projects  # the checkout's config/ ...
    assert sorted(given.projects) == ["nlp", "ranking", "research", "speech", "vision"]  # ... is not planned
    assert given.clusters["gpu-west"].model.hyperpod.arn == LIVE_ARN  # imported, never created twice
    assert (config["hypergov:kind"], config["hypergov:name"]) == ("project", "ranking")
    assert workspace.configs["cluster-gpu-west"]["hypergov:configDir"] == config["hypergov:configDir"]
    assert json.loads(config["hypergov:kubeconfigs"]) == {"trn-east": str(kubeconfig)}
    assert config["hypergov:assumeRoleName"] == "OrganizationAccountAccessRole"  # as the terraform engine

    work_dir = workspace.program.work_dir
    assert Path(config["hypergov:configDir"]).is_relative_to(work_dir) and not work_dir.is_relative_to(CONFIG)
    project = yaml.safe_load((work_dir / "Pulumi.yaml").read_text())
    assert project["name"] == "hypergov" and project["runtime"]["options"]["virtualenv"] == sys.prefix
    assert "stacks.program import main" in (work_dir / "__main__.py").read_text()


def test_a_new_project_stack_is_created_and_an_existing_one_selected(tmp_path: Path) -> None:
    stacks = {"org": FakeStack("org")}  # the backend has the org's stack, not the new project's
    opened: list[FakeWorkspace] = []
    engine = fake_engine(Settings(state_dir=tmp_path, engine="pulumi"), valid_tree(example_files()), stacks, opened)
    outcomes = engine.plan_many([StackName("org"), StackName("project-vision")])
    assert all(isinstance(o, Plan) for o in outcomes.values()), outcomes
    (workspace,) = opened
    assert sorted(workspace.calls) == [("create", "project-vision"), ("select", "org"),
                                       ("select", "project-vision")]
    assert [c for c, _ in stacks["project-vision"].calls] == ["preview"]


def test_auto_is_terraform_even_with_the_pulumi_cli_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = tmp_path / "bin" / "pulumi"
    cli.parent.mkdir()
    cli.write_text("#!/bin/sh\necho v3.140.0\n")
    cli.chmod(0o755)
    monkeypatch.setenv("PATH", f"{cli.parent}:/usr/bin:/bin")
    assert shutil.which("pulumi") == str(cli)
    assert Settings(engine="auto").resolved_engine() == "terraform"
    assert Settings(engine="auto").resolved_engine(owner="pulumi") == "pulumi"  # the org's record decides
    assert Settings(engine="pulumi").resolved_engine(owner=None) == "pulumi"


def test_the_program_ships_in_the_package() -> None:
    """A wheel has no checkout: the program is package data (a `pip wheel` of the project lists
    engines/pulumi/program/Pulumi.yaml and __main__.py), and the checkout's entry point is the same program."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["package-data"]["engines.pulumi"]
    package = REPO / "engines" / "pulumi"
    assert sorted(p.name for g in shipped for p in package.glob(g)) == ["Pulumi.yaml", "__main__.py"]
    assert (PROGRAM_DIR / "__main__.py").read_text() == (REPO / "__main__.py").read_text()
