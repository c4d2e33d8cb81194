"""Plain-EKS mode: a guarantee in accelerators is the ClusterQueue's nominalQuota, and an absolute
borrow limit in instances or accelerators its borrowingLimit, regardless of the percentage (Kueue:
"borrowingLimit ... the maximum amount of quota for the [flavor, resource] combination that this
ClusterQueue is allowed to borrow from the unused quota of other ClusterQueues in the same
cohort"); a type the team may only borrow gets nominalQuota 0. Each queue is valid against Kueue's
ClusterQueue CRD (tests/schemas/kueue)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import yaml

from components.kueue import cluster_queue
from hypergov.stack_views import effective_quota
from hypergov.validate import validate_files
from tests.example_tree import example_files

CRD = Path(__file__).resolve().parents[1] / "schemas" / "kueue" / "kueue.x-k8s.io_clusterqueues.yaml"
NLP = """    instances:
      ml.trn1.32xlarge: 8
    sharing: LendAndBorrow
    absolute_borrow_limits:
      ml.trn1.32xlarge: {accelerators: 128}
      ml.p4d.24xlarge: {instances: 1}
"""
RESEARCH = """    instances:
      ml.p4d.24xlarge: 8
    resources:
      ml.trn1.32xlarge: {accelerators: 48}
"""


def _queues() -> dict[str, dict[str, Any]]:
    files = example_files()
    nlp = files["projects/nlp.yaml"].decode()
    start = nlp.index("    instances:\n      ml.trn1.32xlarge: 8\n")
    end = nlp.index("fair_share_weight")
    files["projects/nlp.yaml"] = (nlp[:start] + NLP + nlp[end:]).encode()
    research = files["projects/research.yaml"].decode()
    files["projects/research.yaml"] = research.replace(
        "    instances:\n      ml.trn1.32xlarge: 6\n      ml.p4d.24xlarge: 8\n", RESEARCH).encode()
    report = validate_files(files)
    assert report.ok, report.problems
    tree = report.tree
    cluster = tree.clusters["trn-east"].model
    return {team: cluster_queue(effective_quota(team, tree.projects[team].model, "trn-east", cluster),
                                fair_share=cluster.scheduler.fair_share)
            for team in ("nlp", "research")}


def _resources(queue: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {flavor["name"]: flavor["resources"][0] for group in queue["spec"]["resourceGroups"]
            for flavor in group["flavors"]}


def test_absolute_limits_are_borrowing_limits_and_accelerators_are_nominal() -> None:
    queues = _queues()

    nlp, research = _resources(queues["nlp"]), _resources(queues["research"])

    # nlp: 8 trn1 (16 Trainium each) = 128 nominal, borrows at most 128 (not the default 50 % = 64);
    # p4d only borrowable: 1 instance of 8 A100 = 8
    assert {f: (r["nominalQuota"], r["borrowingLimit"]) for f, r in nlp.items()} == {
        "ml.trn1.32xlarge": (128, 128), "ml.p4d.24xlarge": (0, 8)}
    # research lends (Lend): 48 Trainium chips guaranteed, nothing borrowed
    assert {f: (r["nominalQuota"], r["borrowingLimit"]) for f, r in research.items()} == {
        "ml.trn1.32xlarge": (48, 0), "ml.p4d.24xlarge": (64, 0)}


def test_the_queues_are_valid_cluster_queues() -> None:
    crd = yaml.safe_load(CRD.read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta1")
    schema = version["schema"]["openAPIV3Schema"]

    for queue in _queues().values():
        jsonschema.validate(queue, schema)
