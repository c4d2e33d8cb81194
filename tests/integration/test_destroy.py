"""Destroys are complete: a removed stack's objects outside terraform's state go too, found
through the stack's inventory. Against the embedded endpoint with the real terraform, checked
with boto3 against the endpoint (not hypergov's records).

No kube-apiserver can run on this machine, so the project's Kubernetes objects live in a fake of
the `KubeApi` Protocol seam (`tests/engines/kube_fakes.py`), injected through the engine's
`kube_api_for`; terraform, the HyperPod driver and the endpoint are real."""

from __future__ import annotations

from typing import Any

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.kube import KubeObject
from engines.plan import Action, Plan, StackName
from hypergov import naming
from tests.engines.kube_fakes import FakeCluster
from tests.integration.conftest import PROD, REGION, EngineFactory, example_files

pytestmark = pytest.mark.integration

GPU_WEST = StackName("cluster-gpu-west")
SPEECH = StackName("project-speech")
ORG = StackName("org")
GPU_WEST_ARN = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"
GONE = ("Deleted", "Deleting")  # the driver counts these as absent, as SageMaker lists them for a while


def _without_gpu_west() -> dict[str, bytes]:
    """The example tree without cluster gpu-west and the projects (and workload classes) on it:
    what is left is the plain-EKS cluster and its one project."""
    kept = ("org.yaml", "clusters/trn-east.yaml", "projects/research.yaml", "workloads/research/")
    return {k: v for k, v in example_files().items() if k.startswith(kept)}


def _live(summaries: list[dict[str, Any]]) -> list[str]:
    return sorted(s["Name"] for s in summaries if s.get("Status") not in GONE)


def _on_gpu_west(endpoint: EmbeddedAwsProcess) -> tuple[list[str], list[str]]:
    sagemaker = endpoint.client("sagemaker", account=PROD, region=REGION)
    configs = sagemaker.list_cluster_scheduler_configs(ClusterArn=GPU_WEST_ARN)["ClusterSchedulerConfigSummaries"]
    quotas = sagemaker.list_compute_quotas(ClusterArn=GPU_WEST_ARN)["ComputeQuotaSummaries"]
    return _live(configs), _live(quotas)


def test_destroying_a_cluster_stack_deletes_its_scheduler_config_and_quotas(engine_for: EngineFactory,
                                                                            endpoint: EmbeddedAwsProcess) -> None:
    engine = engine_for(example_files())
    assert engine.apply(GPU_WEST, engine.plan(GPU_WEST)).ok
    configs, quotas = _on_gpu_west(endpoint)
    assert configs == [naming.scheduler_config_name("gpu-west")]
    assert quotas == ["nlp-on-gpu-west", "recsys-on-gpu-west", "speech-on-gpu-west", "vision-on-gpu-west"]

    removed = engine_for(_without_gpu_west())
    (destroy,) = removed.plan_many([], destroy=[GPU_WEST]).values()  # how a reconciler pass plans it
    assert isinstance(destroy, Plan), destroy
    assert sorted((c.address, c.action, c.executor) for c in destroy.actionable) == sorted(
        [(f"hyperpod:ClusterSchedulerConfig:{configs[0]}", Action.DELETE, "hyperpod")]
        + [(f"hyperpod:ComputeQuota:{q}", Action.DELETE, "hyperpod") for q in quotas])
    (result,) = removed.apply_many([destroy])
    assert result.ok, (result.error, result.failed)
    assert _on_gpu_west(endpoint) == ([], [])
    assert removed.plan_destroy(GPU_WEST).is_empty


def test_destroying_a_project_stack_prunes_its_kubernetes_objects(engine_for: EngineFactory,
                                                                   endpoint: EmbeddedAwsProcess) -> None:
    cluster = FakeCluster()
    engine = engine_for(example_files())
    engine.kube_api_for = {"gpu-west": cluster}.get
    # the org stack first, as a pass orders them: speech's permission sets name the org's boundary
    # policy, which Identity Center needs in the account to provision them
    assert engine.apply(ORG, engine.plan(ORG)).ok
    applied = engine.apply(SPEECH, engine.plan(SPEECH))
    assert applied.ok, (applied.error, applied.failed)
    created = sorted(c.address for c in applied.applied if c.executor == "kubernetes")
    # speech has members in its 3 personas (config/projects/speech.yaml): a Role + RoleBinding each,
    # then the admission policy (+ binding), the LimitRange and the ResourceQuota
    assert len(created) == 3 * 2 + 4 and sorted(cluster.live) == created
    # on the same cluster: another project's object of a kind speech declares, and one nobody manages
    others = [KubeObject("rbac.authorization.k8s.io/v1", "Role", "hyperpod-ns-vision-namespace-role",
                         "hyperpod-ns-vision", {"metadata": {"labels": {"hypergov.dev/stack": "project-vision"}}}),
              KubeObject("v1", "LimitRange", "default", "hyperpod-ns-speech", {"metadata": {"name": "default"}})]
    for obj in others:
        cluster.apply(obj)
    cluster.calls.clear()

    files = {k: v for k, v in example_files().items() if "speech" not in k}
    removed = engine_for(files)
    removed.kube_api_for = {"gpu-west": cluster}.get
    destroy = removed.plan_destroy(SPEECH)
    kube = sorted((c.address, c.action) for c in destroy.actionable if c.executor == "kubernetes")
    assert kube == [(a, Action.DELETE) for a in created]
    assert {c.action for c in destroy.actionable} == {Action.DELETE}
    assert any(c.executor == "terraform" for c in destroy.actionable)
    result = removed.apply(SPEECH, destroy)
    assert result.ok, (result.error, result.failed)
    assert sorted(cluster.calls) == sorted(f"delete {a}" for a in created)  # nothing else was deleted
    assert sorted(cluster.live) == sorted(o.address for o in others)
    roles = endpoint.client("iam", account=PROD, region=REGION).list_roles(PathPrefix="/hypergov/")["Roles"]
    assert not [r["RoleName"] for r in roles if "speech" in r["RoleName"]]
    assert removed.plan_destroy(SPEECH).is_empty
