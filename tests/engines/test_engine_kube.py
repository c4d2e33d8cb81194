"""The terraform engine's Kubernetes objects end to end through `plan` and `apply`: the decisions
shown are the decisions carried out (never made again at apply time) and the plan's artifact
hash covers them. The plain-EKS cluster stack (Kueue objects only) runs without terraform; the
cluster is a fake (`tests/engines/kube_fakes.py`): no kube-apiserver can run here."""

from __future__ import annotations

from pathlib import Path

from engines.plan import Action, StackName
from hypergov.validate import validate_files
from tests.engines.kube_fakes import FakeCluster, engine_without_terraform
from tests.example_tree import example_files, example_tree

TRN_EAST = StackName("cluster-trn-east")


def test_apply_carries_out_exactly_the_planned_decisions(tmp_path: Path) -> None:
    cluster = FakeCluster()
    engine = engine_without_terraform(example_tree(), tmp_path, {"trn-east": cluster})
    plan = engine.plan(TRN_EAST)
    planned = [c.address for c in plan.actionable]
    assert planned and {c.action for c in plan.actionable} == {Action.CREATE}
    cluster.frozen = True  # any get or list now fails the test: apply must not plan again
    result = engine.apply(TRN_EAST, plan)
    assert result.ok, result.failed
    assert cluster.calls == [f"apply {a}" for a in planned]
    assert [c.address for c in result.applied] == planned


def test_a_run_whose_kubernetes_decisions_differ_is_refused(tmp_path: Path) -> None:
    """Two runs whose plans read the same (a create of the same objects) but would send different
    bodies: the reviewed plan is not applied with the other run's bodies."""
    files = example_files()
    files["clusters/trn-east.yaml"] = files["clusters/trn-east.yaml"].replace(b"weight: 60", b"weight: 61")
    changed = validate_files(files)
    assert changed.ok, changed.problems
    reviewed = engine_without_terraform(example_tree(), tmp_path, {"trn-east": FakeCluster()}).plan(TRN_EAST)
    cluster = FakeCluster()
    other = engine_without_terraform(changed.tree, tmp_path, {"trn-east": cluster})
    again = other.plan(TRN_EAST)
    assert again.changes == reviewed.changes  # the same changes are shown ...
    assert again.artifact_sha256 != reviewed.artifact_sha256  # ... but not the same bodies,
    assert again.fingerprint() != reviewed.fingerprint()  # which the plan's fingerprint covers
    result = other.apply(TRN_EAST, reviewed)
    assert result.refusal is not None and not result.applied
    assert cluster.calls == []
