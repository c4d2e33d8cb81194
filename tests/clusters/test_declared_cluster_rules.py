"""A cluster file that declares its HyperPod cluster: its capacity is its groups' (one source),
the documented limits hold, a scale-down below the teams' guarantees is CAP001, and a managed
cluster leaves the tree only after its decommission (CLU003, base against head)."""

from __future__ import annotations

import pytest

from hypergov.rules.clusters import removed_managed_clusters
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from tests.clusters.cluster_files import CONFIG, TRN_EAST_GROUPS, declared_cluster, with_files


def _example() -> dict[str, bytes]:
    return {k: v for k, v in read_tree_dir(CONFIG).items() if isinstance(v, bytes)}


def _rules(files: dict[str, bytes]) -> list[str]:
    return sorted(str(p.rule) for p in validate_files(files).problems)


def test_capacity_is_derived_from_the_groups() -> None:
    """Groups trn1 x16 and p4d x8 plus a second p4d group x4: capacity trn1 16, p4d 8 + 4 = 12."""
    files = with_files(_example(), clusters__trn_east=declared_cluster(
        [*TRN_EAST_GROUPS, ("p4d-extra", "ml.p4d.24xlarge", 4)]))
    report = validate_files(files)
    assert report.ok, report.problems
    capacity = report.tree.clusters["trn-east"].model.capacity
    assert {t: c.instances for t, c in capacity.items()} == {"ml.trn1.32xlarge": 16, "ml.p4d.24xlarge": 12}


def test_the_example_groups_validate_as_the_example_capacity_did() -> None:
    files = with_files(_example(), clusters__trn_east=declared_cluster())
    assert _rules(files) == []


@pytest.mark.parametrize(("groups", "settings", "why"), [
    pytest.param([("p4d_24", "ml.p4d.24xlarge", 8)], {}, "'_' is outside ClusterInstanceGroupName's pattern",
                 id="group-name-pattern"),
    pytest.param([("p4d", "ml.p4d.24xlarge", 6759)], {}, "ClusterInstanceCount is at most 6758", id="count-max"),
    pytest.param([(f"g{i}", "ml.p4d.24xlarge", 0) for i in range(101)], {},
                 "CreateCluster takes at most 100 instance groups", id="101-groups"),
    pytest.param([], {}, "a managed cluster declares at least one group", id="no-groups"),
    pytest.param([("a", "ml.p4d.24xlarge", 4), ("a", "ml.p4d.24xlarge", 4)], {},
                 "instance group names are unique (UpdateCluster/CreateCluster)", id="duplicate-names"),
    pytest.param(TRN_EAST_GROUPS, {"managed": False}, "groups without managed: true", id="groups-unmanaged"),
    pytest.param(TRN_EAST_GROUPS, {"node_recovery": "Manual"}, "ClusterNodeRecovery is Automatic | None",
                 id="node-recovery-enum"),
])
def test_documented_limits_are_schema_errors(groups: list[tuple[str, str, int]], settings: dict[str, object],
                                             why: str) -> None:
    files = with_files(_example(), clusters__trn_east=declared_cluster(groups, **settings))
    assert {r[:3] for r in _rules(files)} == {"SCH"}, why


def test_capacity_and_groups_both_written_is_refused() -> None:
    """Two sources for one fact: the file may not keep a hand-written capacity beside its groups."""
    import yaml
    doc = yaml.safe_load(declared_cluster())
    doc["capacity"] = {"ml.trn1.32xlarge": {"instances": 16}}
    files = with_files(_example(), clusters__trn_east=yaml.safe_dump(doc).encode())
    problems = validate_files(files).problems
    assert any("capacity is derived from hyperpod.instance_groups" in p.message for p in problems), problems


def test_scale_down_below_the_guarantees_is_cap001() -> None:
    """research is guaranteed 8 p4d on trn-east (config/projects/research.yaml); a p4d group
    scaled 8 -> 4 leaves 4 < 8: CAP001 at the group's instance_count."""
    files = with_files(_example(), clusters__trn_east=declared_cluster(
        [("trn1-32xlarge", "ml.trn1.32xlarge", 16), ("p4d-24xlarge", "ml.p4d.24xlarge", 4)]))
    problems = [p for p in validate_files(files).problems if p.rule == "CAP001"]
    assert len(problems) == 1
    assert "guaranteed 8 instances" in problems[0].message and "instance groups have 4" in problems[0].message
    text = declared_cluster([("trn1-32xlarge", "ml.trn1.32xlarge", 16),
                             ("p4d-24xlarge", "ml.p4d.24xlarge", 4)]).decode().splitlines()
    assert text[problems[0].pos.line - 1].strip() == "instance_count: 4"


def test_instance_group_of_a_type_the_org_does_not_allow() -> None:
    files = with_files(_example(), clusters__trn_east=declared_cluster(
        [*TRN_EAST_GROUPS, ("cpu", "ml.c5.large", 2)]))
    assert _rules(files) == ["CLU001"]


def test_decommission_names_every_project_with_quota_there() -> None:
    """nlp and research hold trn-east quotas in the example tree."""
    files = with_files(_example(), clusters__trn_east=declared_cluster(decommission=True))
    problems = validate_files(files).problems
    assert [p.rule for p in problems] == ["CLU002"]
    assert "nlp, research" in problems[0].message


def _without_trn_east_quotas(files: dict[str, bytes]) -> dict[str, bytes]:
    import yaml
    out = dict(files)
    for team in ("nlp", "research"):
        doc = yaml.safe_load(out[f"projects/{team}.yaml"])
        doc["quotas"].pop("trn-east")
        out[f"projects/{team}.yaml"] = yaml.safe_dump(doc, sort_keys=False).encode()
    out.pop("workloads/research/sweep.yaml", None)  # its only cluster was trn-east (CAP006 otherwise)
    return out


def test_decommission_once_no_project_has_quota_there_is_valid() -> None:
    files = _without_trn_east_quotas(with_files(_example(), clusters__trn_east=declared_cluster(decommission=True)))
    report = validate_files(files)
    assert not [p for p in report.problems if p.rule.startswith(("CLU", "CAP001"))], report.problems


@pytest.mark.parametrize(("base_settings", "refused"), [
    pytest.param({}, True, id="managed-removed-without-decommission"),
    pytest.param({"decommission": True}, False, id="removed-after-decommission"),
])
def test_removing_a_managed_cluster_file(base_settings: dict[str, object], refused: bool) -> None:
    base_files = _without_trn_east_quotas(with_files(_example(), clusters__trn_east=declared_cluster(**base_settings)))
    head_files = with_files(base_files, clusters__trn_east=None)
    base, head = validate_files(base_files), validate_files(head_files)
    found = list(removed_managed_clusters(base.tree, head.tree))
    assert [p.rule for p in found] == (["CLU003"] if refused else [])


def test_removing_a_referenced_cluster_file_is_not_clu003() -> None:
    base_files = _without_trn_east_quotas(_example())
    head_files = with_files(base_files, clusters__trn_east=None)
    assert list(removed_managed_clusters(validate_files(base_files).tree, validate_files(head_files).tree)) == []


def test_a_managed_task_governance_cluster_needs_no_arn_a_referenced_one_does() -> None:
    """gpu-west runs task governance (its quotas bind to the cluster ARN). Declared with
    `managed: true` and no `hyperpod.arn`, it validates: hypergov creates it and reads the ARN
    back. Referenced (not managed) without the ARN, it is REF007 as before."""
    from tests.clusters.cluster_files import GPU_WEST_GROUPS

    managed = with_files(_example(), clusters__gpu_west=declared_cluster(GPU_WEST_GROUPS, example="gpu-west",
                                                                         name="gpu-west"))
    report = validate_files(managed)
    assert report.ok, report.problems
    assert report.tree.clusters["gpu-west"].model.hyperpod.arn is None
    referenced = _example()["clusters/gpu-west.yaml"].decode()
    without_arn = "\n".join(line for line in referenced.splitlines() if not line.strip().startswith("arn:"))
    assert _rules(with_files(_example(), clusters__gpu_west=without_arn.encode())) == ["REF007"]
