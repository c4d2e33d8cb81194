"""`pulumi up` by an admin on the README's example tree, run as the Pulumi CLI runs the program
(the program shipped in the package, `engines/pulumi/program/__main__.py`, under Pulumi's own mock
monitor, `pulumi.runtime.set_mocks`: the CLI cannot be installed here, so the engine is mocked at
its gRPC boundary, which is exactly what `set_mocks` replaces).

- A managed task-governance cluster (no `hyperpod.arn`, as the README allows): SageMaker generates
  the ARN's last part, so the compute quotas and the scheduler config must bind to the declared
  cluster resource's ARN output (Pulumi orders them after the cluster and fills it in).
- The two-account example: every account's AWS provider assumes the org's account access role
  there (AWS Organizations' OrganizationAccountAccessRole, the terraform engine's default), with
  the generated stack files, which set no `hypergov:assumeRoleName`. The role is read as the aws
  provider's schema names it (`assumeRole.roleArn`): a plain dict with `role_arn` would be sent
  as written, a key the provider does not know.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import mocks
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from stacks.graph import EchoMocks, mocked_runtime
from stacks.resource_graph import GraphResource, ResourceGraph
from tests.clusters.cluster_files import GPU_WEST_GROUPS, declared_cluster
from tests.example_tree import CONFIG

PROGRAM = Path(__file__).resolve().parents[2] / "engines" / "pulumi" / "program" / "__main__.py"
# What SageMaker answers CreateCluster with: an ARN whose last part it generates (ARN format from the
# SageMaker API reference, arn:aws:sagemaker:<region>:<account>:cluster/<12 characters>).
GENERATED_ARN = "arn:aws:sagemaker:us-west-2:111122223333:cluster/x9w8v7u6t5s4"
ACCOUNTS = {"111122223333", "444455556666"}  # config/org.yaml: ml-prod, ml-research


class _SageMakerMocks(EchoMocks):
    """The graph's mocks (inputs echoed, reads as placeholders), and for a HyperPod cluster the ARN
    SageMaker would generate."""

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        resource_id, outputs = super().new_resource(args)
        if args.typ == "aws-native:sagemaker:Cluster":
            outputs["clusterArn"] = GENERATED_ARN
        return resource_id, outputs


def _tree(tmp_path: Path, **replaced: bytes) -> Path:
    """config/ copied, with `replaced` files (tree-relative path -> content)."""
    for source in CONFIG.rglob("*.yaml"):
        rel = source.relative_to(CONFIG).as_posix()
        target = tmp_path / "config" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(replaced.pop(rel, source.read_bytes()))
    assert not replaced
    return tmp_path / "config"


def _run(stack: str, kind: str, name: str, config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> ResourceGraph:
    """The program as `pulumi up --stack <stack>` runs it with a generated stack file's config
    (hypergov:kind/name/configDir/dependsOn, empty kubeconfig, no assumeRoleName)."""
    config = {"hypergov:kind": kind, "hypergov:name": name, "hypergov:configDir": str(config_dir),
              "hypergov:dependsOn": "[]", "hypergov:kubeconfig": ""}
    monkeypatch.chdir(config_dir.parent)
    with mocked_runtime(stack, config=config) as monitor:
        monitor.mocks = _SageMakerMocks()
        _sync_await(run_pulumi_func(lambda: runpy.run_path(str(PROGRAM), run_name="__main__")))
    return monitor.graph()


def test_a_managed_task_governance_cluster_binds_its_quotas_to_the_declared_cluster(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster_file = declared_cluster(GPU_WEST_GROUPS, example="gpu-west", name="gpu-west")
    assert b"arn: arn:aws:sagemaker" not in cluster_file  # as the README allows: no hyperpod.arn
    graph = _run("cluster-gpu-west", "cluster", "gpu-west",
                 _tree(tmp_path, **{"clusters/gpu-west.yaml": cluster_file}), monkeypatch)

    (cluster,) = graph.of_type("aws-native:sagemaker:Cluster")
    quotas = graph.of_type("aws-native:sagemaker:ComputeQuota")
    # config/projects: vision, nlp, recsys and speech have quota on gpu-west
    assert sorted(q.name for q in quotas) == ["quota-nlp", "quota-recsys", "quota-speech", "quota-vision"]
    for quota in quotas:
        assert quota.inputs["clusterArn"] == GENERATED_ARN
        assert cluster.urn in quota.property_dependencies["clusterArn"]  # Pulumi waits for the cluster
    (config,) = [r for r in graph.resources if r.name == "scheduler-config"]
    assert config.inputs["request"]["ClusterArn"] == GENERATED_ARN
    assert cluster.urn in config.property_dependencies["request"]


def _provider_input(provider: GraphResource, key: str) -> Any:
    """A provider's input; Pulumi sends a provider's structured inputs JSON-encoded."""
    value = provider.inputs.get(key)
    return json.loads(value) if isinstance(value, str) else value


def test_the_two_account_example_assumes_the_account_access_role_in_each_account(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graph = _run("org", "org", "acme", _tree(tmp_path), monkeypatch)
    providers = [p for p in graph.of_type("pulumi:providers:aws") if p.name != "aws-management"]
    # One provider per account and region (the org's home region, and each cluster's region)
    assert {_provider_input(p, "allowedAccountIds")[0] for p in providers} == ACCOUNTS
    for provider in providers:
        (account,) = _provider_input(provider, "allowedAccountIds")
        role = _provider_input(provider, "assumeRole")
        assert role["roleArn"] == f"arn:aws:iam::{account}:role/OrganizationAccountAccessRole", provider.name
