"""Destroying a stack removes what it owns outside terraform's state, found through its inventory:
here the Kueue objects of the plain-EKS cluster stack (no terraform resources, so no terraform
runs; the cluster is a fake of the `KubeApi` seam, `tests/engines/kube_fakes.py`, because no
kube-apiserver can run here). HyperPod objects: tests/integration/test_destroy.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.inventory import INVENTORY_FILE, InventoryError
from engines.kube import KubeObject
from engines.outcomes import classify
from engines.plan import Action, StackName
from engines.terraform.engine import NO_INVENTORY
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from tests.engines.kube_fakes import FakeCluster, engine_without_terraform
from tests.example_tree import example_files, example_tree

TRN_EAST = StackName("cluster-trn-east")
NLP = StackName("project-nlp")
NLP_ON_TRN = b"""  trn-east:
    instances:
      ml.trn1.32xlarge: 8
    sharing: LendAndBorrow
    borrow_limit_percent: 100
"""


def _without_trn_east() -> GovernanceTree:
    files = {k: v for k, v in example_files().items()  # nlp's workload class runs on trn1: it goes too
             if k != "clusters/trn-east.yaml" and "research" not in k and not k.startswith("workloads/nlp/")}
    assert NLP_ON_TRN in files["projects/nlp.yaml"]
    files["projects/nlp.yaml"] = files["projects/nlp.yaml"].replace(NLP_ON_TRN, b"")
    report = validate_files(files)
    assert report.ok, report.problems
    return report.tree


def _applied(tmp_path: Path, cluster: FakeCluster) -> list[str]:
    """cluster-trn-east applied from the example tree; the addresses it created."""
    engine = engine_without_terraform(example_tree(), tmp_path, {"trn-east": cluster})
    result = engine.apply(TRN_EAST, engine.plan(TRN_EAST))
    assert result.ok and result.applied, result.failed
    return sorted(c.address for c in result.applied)


def test_destroy_deletes_exactly_the_stacks_objects_and_a_second_destroy_is_empty(tmp_path: Path) -> None:
    cluster = FakeCluster()
    created = _applied(tmp_path, cluster)
    # objects of kinds this stack searches that are not its own: another stack's, and nobody's
    neighbour = KubeObject("kueue.x-k8s.io/v1beta1", "ClusterQueue", "other", None,
                           {"metadata": {"labels": {"hypergov.dev/stack": "cluster-other"}}})
    unmanaged = KubeObject("v1", "Namespace", "kube-system", None, {"metadata": {"name": "kube-system"}})
    cluster.apply(neighbour)
    cluster.apply(unmanaged)
    cluster.calls.clear()
    engine = engine_without_terraform(_without_trn_east(), tmp_path, {"trn-east": cluster})
    destroy = engine.plan_destroy(TRN_EAST)
    assert sorted(c.address for c in destroy.actionable) == created
    assert {c.action for c in destroy.actionable} == {Action.DELETE}
    assert destroy.notes == ("stack removed from the tree",)
    result = engine.apply(TRN_EAST, destroy)
    assert result.ok, result.failed
    assert sorted(cluster.calls) == sorted(f"delete {a}" for a in created)
    assert sorted(cluster.live) == sorted([neighbour.address, unmanaged.address])
    assert engine.plan_destroy(TRN_EAST).is_empty
    inventory = json.loads((tmp_path / "stacks" / TRN_EAST / INVENTORY_FILE).read_text())
    assert inventory["kubernetes"] == [] and inventory["hyperpod"] == []


def test_a_failed_delete_stays_in_the_inventory_and_is_retried(tmp_path: Path) -> None:
    cluster = FakeCluster()
    created = _applied(tmp_path, cluster)
    engine = engine_without_terraform(_without_trn_east(), tmp_path, {"trn-east": cluster})
    broken = created[0]
    real_delete = cluster.delete

    def refuse_one(api_version: str, kind: str, name: str, namespace: str | None) -> None:
        if KubeObject(api_version, kind, name, namespace, {}).address == broken:
            raise RuntimeError("admission webhook denied the request")
        real_delete(api_version, kind, name, namespace)

    cluster.delete = refuse_one  # type: ignore[method-assign]
    result = engine.apply(TRN_EAST, engine.plan_destroy(TRN_EAST))
    assert [c.address for c, _ in result.failed] == [broken]
    cluster.delete = real_delete  # type: ignore[method-assign]
    retry = engine.plan_destroy(TRN_EAST)
    assert [c.address for c in retry.actionable] == [broken]
    assert engine.apply(TRN_EAST, retry).ok and not cluster.live


def test_without_a_kubeconfig_the_destroy_lists_the_objects_for_a_person(tmp_path: Path) -> None:
    created = _applied(tmp_path, FakeCluster())
    destroy = engine_without_terraform(_without_trn_east(), tmp_path, {}).plan_destroy(TRN_EAST)
    assert destroy.is_empty  # nothing hypergov can carry out ...
    assert sorted(c.address for c in destroy.changes if c.action is Action.DELETE) == created  # ... but all shown
    assert {c.note for c in destroy.changes} == {"not applied: no kubeconfig for trn-east"}


def test_a_stack_planned_without_inventory_records_what_is_live(tmp_path: Path) -> None:
    """A stack last applied by a hypergov that kept no inventory: its next plan records what it
    finds live, so its destroy later is complete; a destroy without any inventory says what it
    cannot do."""
    cluster = FakeCluster()
    created = _applied(tmp_path, cluster)
    (tmp_path / "stacks" / TRN_EAST / INVENTORY_FILE).unlink()
    engine = engine_without_terraform(_without_trn_east(), tmp_path, {"trn-east": cluster})
    blind = engine.plan_destroy(TRN_EAST)
    assert blind.is_empty and NO_INVENTORY in blind.notes
    assert engine_without_terraform(example_tree(), tmp_path, {"trn-east": cluster}).plan(TRN_EAST).is_empty
    destroy = engine.plan_destroy(TRN_EAST)
    assert sorted(c.address for c in destroy.actionable) == created and NO_INVENTORY not in destroy.notes


def test_an_unreadable_inventory_fails_the_plan_permanently(tmp_path: Path) -> None:
    _applied(tmp_path, FakeCluster())
    (tmp_path / "stacks" / TRN_EAST / INVENTORY_FILE).write_text("{not json")
    engine = engine_without_terraform(_without_trn_east(), tmp_path, {"trn-east": FakeCluster()})
    with pytest.raises(InventoryError) as raised:
        engine.plan_destroy(TRN_EAST)
    assert classify(raised.value).kind == "permanent"
    assert isinstance(engine.plan_many([], destroy=[TRN_EAST])[TRN_EAST], type(classify(raised.value)))


def test_a_project_that_leaves_a_cluster_prunes_its_objects_there(tmp_path: Path) -> None:
    """The project stack no longer declares anything on trn-east; its inventory still names that
    cluster, so its objects there are found (by label) and deleted. Terraform plans no changes
    here (a stand-in binary): only the Kubernetes side is under test."""
    cluster = FakeCluster()
    before = engine_without_terraform(example_tree(), tmp_path, {"trn-east": cluster}, quiet_terraform=True)
    created = before.apply(NLP, before.plan(NLP))
    assert created.ok and created.applied, created.failed
    files = {k: v for k, v in example_files().items() if not k.startswith("workloads/nlp/")}
    files["projects/nlp.yaml"] = files["projects/nlp.yaml"].replace(NLP_ON_TRN, b"")
    left = validate_files(files)
    assert left.ok, left.problems
    engine = engine_without_terraform(left.tree, tmp_path, {"trn-east": cluster}, quiet_terraform=True)
    plan = engine.plan(NLP)
    assert sorted((c.address, c.action) for c in plan.actionable) == sorted(
        (c.address, Action.DELETE) for c in created.applied)
    assert engine.apply(NLP, plan).ok and not cluster.live
    assert engine.plan(NLP).is_empty
