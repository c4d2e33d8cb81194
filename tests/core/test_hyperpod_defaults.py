"""Defaults match AWS: a field left out of the tree means what HyperPod documents, in the model,
in every request the components write, in the capacity rules and in the simulator.

Expected values are HyperPod's documented defaults (SageMaker API Reference), typed here:
ResourceSharingConfig "Default is LendandBorrow" and BorrowLimit "Default is 50";
ComputeQuotaTarget "Weight 0 is the default"; ComputeQuotaConfig PreemptTeamTasks
"Default is LowerPriority"; SchedulerConfig FairShare "Default is Enabled".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from capacity.adapter import cluster_capacity
from capacity.spec import TeamName, TeamQuota
from components.kueue import cluster_queue
from hypergov.model.cluster import Cluster
from hypergov.model.project import ClusterQuota, Project
from hypergov.stack_views import effective_quota
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = read_tree_dir(REPO / "config")


def _doc(rel: str) -> Any:
    data = EXAMPLE[rel]
    assert isinstance(data, bytes)
    return yaml.safe_load(data)


def _minimal_project() -> dict[str, Any]:
    """speech.yaml with every defaulted field of its quota and of the project left out."""
    doc = _doc("projects/speech.yaml")
    doc["quotas"] = {"gpu-west": {"instances": {"ml.g5.12xlarge": 8}}}
    for key in ("fair_share_weight", "preempt_own_lower_priority"):
        doc.pop(key)
    return doc


def test_the_model_defaults_are_hyperpods() -> None:
    project = Project.model_validate(_minimal_project())
    quota = project.quotas["gpu-west"]
    assert quota.sharing == "LendAndBorrow"
    assert quota.borrow_limit_percent is None and quota.effective_borrow_limit_percent() == 50
    assert project.fair_share_weight == 0
    assert project.preempt_own_lower_priority is True
    scheduler = _doc("clusters/gpu-west.yaml")["scheduler"]
    del scheduler["fair_share"]
    assert Cluster.model_validate({**_doc("clusters/gpu-west.yaml"), "scheduler": scheduler}).scheduler.fair_share


def test_every_request_writes_the_defaults_explicitly() -> None:
    """The compute quota (task governance) and the ClusterQueue (plain EKS) carry the strategy,
    the borrow limit and the preemption policy, whatever the tree left out."""
    project = Project.model_validate(_minimal_project())
    quota = project.quotas["gpu-west"]
    gpu_west = Cluster.model_validate(_doc("clusters/gpu-west.yaml"))
    assert quota.borrow_limit_percent is None
    config = effective_quota("speech", project, "gpu-west", gpu_west).request(cluster_arn="arn")["ComputeQuotaConfig"]
    assert config["ResourceSharingConfig"] == {"Strategy": "LendAndBorrow", "BorrowLimit": 50}
    assert config["PreemptTeamTasks"] == "LowerPriority"
    trn_east = Cluster.model_validate(_doc("clusters/trn-east.yaml"))
    on_trn = project.model_copy(update={"quotas": {"trn-east": ClusterQuota.model_validate(
        {"instances": {"ml.trn1.32xlarge": 4}})}})
    spec = cluster_queue(effective_quota("speech", on_trn, "trn-east", trn_east),
                         fair_share=trn_east.scheduler.fair_share)["spec"]
    resources = spec["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert resources["borrowingLimit"] == resources["nominalQuota"] * 50 // 100
    assert "lendingLimit" not in resources  # LendAndBorrow lends all its idle quota
    assert spec["fairSharing"] == {"weight": 0}
    assert spec["preemption"]["withinClusterQueue"] == "LowerPriority"


def test_a_borrow_limit_without_sharing_is_now_coherent() -> None:
    """The corpus case `cap002-default-sharing-with-borrow-limit` expected CAP002 under the old
    default (Lend). Under HyperPod's default (LendAndBorrow) a borrow limit alone is valid."""
    doc = _doc("projects/research.yaml")
    doc["quotas"]["trn-east"].pop("sharing")
    doc["quotas"]["trn-east"]["borrow_limit_percent"] = 20
    report = validate_files({**EXAMPLE, "projects/research.yaml": yaml.safe_dump(doc).encode()})
    assert report.problems == []


def test_the_simulator_sees_the_same_defaults() -> None:
    files = {**EXAMPLE, "projects/speech.yaml": yaml.safe_dump(_minimal_project()).encode()}
    report = validate_files(files)
    assert report.ok, report.problems
    speech = next(t for t in cluster_capacity(report.tree, "gpu-west").teams if t.name == "speech")
    assert (speech.sharing, speech.borrow_limit_percent, speech.fair_share_weight) == ("LendAndBorrow", 50, 0)
    assert speech.preempt_own_lower_priority is True
    bare = TeamQuota(name=TeamName("t"), guaranteed_gpus={})
    assert (bare.sharing, bare.fair_share_weight, bare.preempt_own_lower_priority) == ("LendAndBorrow", 0, True)


def test_the_schema_states_each_default() -> None:
    project = json.loads((REPO / "schema" / "project.schema.json").read_text())
    cluster = json.loads((REPO / "schema" / "cluster.schema.json").read_text())
    quota = project["$defs"]["ClusterQuota"]["properties"]
    assert quota["sharing"]["default"] == "LendAndBorrow" and "default LendAndBorrow" in quota["sharing"]["description"]
    assert "default 50" in quota["borrow_limit_percent"]["anyOf"][0]["description"]
    assert project["properties"]["fair_share_weight"]["default"] == 0
    assert "default 0" in project["properties"]["fair_share_weight"]["description"]
    assert "default true" in project["properties"]["preempt_own_lower_priority"]["description"]
    scheduler = cluster["$defs"]["SchedulerPolicy"]["properties"]
    assert "default true" in scheduler["fair_share"]["description"]
    assert "always writes it" in scheduler["idle_resource_sharing"]["description"]
