"""`pulumi up --stack <name>` runs `__main__.py` for every generated stack file, and declares what
the terraform engine's graph capture declares.

The Pulumi CLI cannot be installed on the build machines, so this runs the program under Pulumi's
own mock monitor (`pulumi.runtime.set_mocks`), the boundary the CLI would drive, set up the way
the CLI's Python language host sets it up (`pulumi-language-python-exec`): project `hypergov`,
the stack's name, the stack file's config in `PULUMI_CONFIG` (`hypergov:<key>` -> string,
structured values as JSON) loaded with `set_all_config`, the working directory at the project
root, and `__main__.py` run with `runpy.run_path(..., run_name="__main__")`.

With the generated files' empty `hypergov:kubeconfig`, the program must declare no Kubernetes
provider and no Kubernetes object (and warn, per cluster, how many it skipped): a provider
without a kubeconfig would use the ambient kubectl context (or $KUBECONFIG) of the admin's
machine. Everything else must equal the captured graph resource for resource, inputs included.
"""

from __future__ import annotations

import json
import logging
import runpy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.runtime import get_config_env, get_config_secret_keys_env
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from engines.settings import Settings
from hypergov.validate import load_valid_tree
from stacks.files import STACK_CONFIG_DIR
from stacks.graph import PROJECT, capture_graph, mocked_runtime
from stacks.program import skipped_message
from stacks.resource_graph import GraphResource, ResourceGraph

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "__main__.py"
STACK_FILES = sorted((REPO / STACK_CONFIG_DIR).glob("Pulumi.*.yaml"))
K8S_PROVIDER = "pulumi:providers:kubernetes"
AMBIENT = "/home/admin/.kube/config-of-some-other-cluster"  # what an admin's machine may have in $KUBECONFIG


def _stack(path: Path) -> str:
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml")


def _is_kubernetes(resource: GraphResource) -> bool:
    return resource.type == K8S_PROVIDER or resource.type.startswith("kubernetes:")


def _cli_config(path: Path) -> dict[str, str]:
    """A stack file's config as the CLI hands it to the program: every value a string, structured
    values (e.g. `hypergov:dependsOn`) JSON-encoded."""
    config: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def warnings(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno == logging.WARNING]


def run_program(stack: str, config: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[ResourceGraph, _Messages]:
    """`__main__.py` of stack `stack` with `config`; its resources and what it logged."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", "[]")
    messages = _Messages()
    logger = logging.Logger(f"pulumi-program-{stack}")
    logger.addHandler(messages)

    def program() -> None:  # what the language host's run_in_stack(...) runs
        runpy.run_path(str(MAIN), run_name="__main__")

    with mocked_runtime(stack, config=get_config_env(), logger=logger) as monitor:
        assert get_config_secret_keys_env() == []
        _sync_await(run_pulumi_func(program))
    errors = [r.getMessage() for r in messages.records if r.levelno >= logging.ERROR]
    assert errors == []
    return monitor.graph(), messages


def _captured(stack: str, config: dict[str, str], *, kubeconfig: str = "") -> ResourceGraph:
    # The role the terraform engine assumes by default (its `aws.account_access_role` setting), as
    # `pulumi up` does without `hypergov:assumeRoleName` (the generated stack files set none).
    return capture_graph(REPO / config["hypergov:configDir"], stack, kubeconfig=kubeconfig,
                         assume_role_name=Settings().aws.account_access_role)


def test_the_stack_files_are_the_projects() -> None:
    """The program is found as Pulumi finds it: this project, its stack files where Pulumi.yaml says."""
    project = yaml.safe_load((REPO / "Pulumi.yaml").read_text(encoding="utf-8"))
    assert project["name"] == PROJECT
    assert Path(project["stackConfigDir"]) == STACK_CONFIG_DIR
    assert {_stack(p) for p in STACK_FILES} >= {"org", "cluster-gpu-west", "cluster-trn-east", "project-vision"}


@pytest.mark.parametrize("stack_file", [pytest.param(p, id=_stack(p)) for p in STACK_FILES])
def test_pulumi_up_declares_the_captured_graph_without_kubernetes(stack_file: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty `hypergov:kubeconfig` (as generated): the captured graph minus exactly the Kubernetes
    provider and objects, one warning per cluster that had any, and $KUBECONFIG never read."""
    stack, config = _stack(stack_file), _cli_config(stack_file)
    assert config["hypergov:kubeconfig"] == ""
    monkeypatch.setenv("KUBECONFIG", AMBIENT)
    captured = _captured(stack, config)
    program, messages = run_program(stack, config, monkeypatch)

    assert [r for r in program.resources if _is_kubernetes(r)] == []
    assert program.resources == tuple(r for r in captured.resources if not _is_kubernetes(r))
    per_cluster: dict[str, int] = {}
    for r in captured.resources:
        if r.type.startswith("kubernetes:"):
            cluster = (r.provider or "").rsplit("::k8s-", 1)[1]
            per_cluster[cluster] = per_cluster.get(cluster, 0) + 1
    tree = load_valid_tree(REPO / config["hypergov:configDir"])
    expected = [skipped_message(stack=stack, cluster=c, count=n, context=tree.clusters[c].model.eks.cluster_name)
                for c, n in sorted(per_cluster.items())]
    assert messages.warnings() == expected
    for warning in expected:  # the count, the cluster, and how to enable them
        assert " for cluster '" in warning and "ambient kubectl context" in warning
        assert "set hypergov:kubeconfig" in warning and f"stacks/generated/Pulumi.{stack}.yaml" in warning

def test_some_stacks_have_kubernetes_objects_to_skip() -> None:
    """The test above is not vacuous: the example tree's stacks do declare Kubernetes objects."""
    kinds = {r.type for p in STACK_FILES for r in _captured(_stack(p), _cli_config(p)).resources if _is_kubernetes(r)}
    assert K8S_PROVIDER in kinds and "kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue" in kinds


@pytest.mark.parametrize(("stack", "clusters"), [
    pytest.param("project-nlp", {"gpu-west": "gpu-west-eks", "trn-east": "trn-east-eks"}, id="project-two-clusters"),
    pytest.param("cluster-trn-east", {"trn-east": "trn-east-eks"}, id="plain-eks-cluster"),
])
def test_pulumi_up_with_a_kubeconfig_declares_every_kubernetes_object(
        stack: str, clusters: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hypergov:kubeconfig` set in (a copy of) the stack file: the whole captured graph, each
    cluster's provider pointed at that kubeconfig and the EKS cluster's context, and no warning."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    original = yaml.safe_load((REPO / STACK_CONFIG_DIR / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
    original["config"]["hypergov:kubeconfig"] = str(kubeconfig)
    copy = tmp_path / f"Pulumi.{stack}.yaml"
    copy.write_text(yaml.safe_dump(original), encoding="utf-8")
    config = _cli_config(copy)
    monkeypatch.setenv("KUBECONFIG", AMBIENT)  # the stack's own kubeconfig wins

    program, messages = run_program(stack, config, monkeypatch)

    assert program.resources == _captured(stack, config, kubeconfig=str(kubeconfig)).resources
    providers = {r.name: r.inputs for r in program.of_type(K8S_PROVIDER)}
    assert providers == {f"k8s-{c}": {"context": eks, "kubeconfig": "<redacted>"} for c, eks in clusters.items()}
    assert sum(1 for r in program.resources if r.type.startswith("kubernetes:")) > 0
    assert messages.warnings() == []
