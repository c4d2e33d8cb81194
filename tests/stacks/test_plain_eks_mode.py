"""Plain-EKS mode (a cluster without task governance): Kueue objects with the semantics the
HyperPod quotas have, and no SageMaker scheduler config or compute quota; and the reverse on a
task-governance cluster."""

from __future__ import annotations

from hypergov import naming
from hypergov.model.tree import GovernanceTree
from stacks.resource_graph import ResourceGraph

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta1:"


def test_plain_eks_cluster_declares_kueue_not_sagemaker(graphs: dict[str, ResourceGraph]) -> None:
    types = {r.type for r in graphs["cluster-trn-east"].resources}
    assert not any(t.startswith(("aws-native:", "pulumi-python:dynamic")) for t in types)
    assert {f"{KUEUE}ClusterQueue", f"{KUEUE}ResourceFlavor", f"{KUEUE}WorkloadPriorityClass"} <= types


def test_cluster_queues_carry_the_quota_semantics(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    cluster = tree.clusters["trn-east"].model
    queues = {r.inputs["metadata"]["name"]: r for r in graphs["cluster-trn-east"].of_type(f"{KUEUE}ClusterQueue")}
    teams = sorted(t for t, p in tree.projects.items() if "trn-east" in p.model.quotas)
    assert sorted(queues) == sorted(naming.kueue_cluster_queue(t) for t in teams)
    for team in teams:
        quota = tree.projects[team].model.quotas["trn-east"]
        spec = queues[naming.kueue_cluster_queue(team)].inputs["spec"]
        assert spec["cohort"] == naming.kueue_cohort("trn-east")
        resources = {f["name"]: f["resources"][0] for g in spec["resourceGroups"] for f in g["flavors"]}
        assert {t: r["nominalQuota"] for t, r in resources.items()} == {
            t: c * (cluster.accelerators(t) or 0) for t, c in quota.instances.items()}
        for r in resources.values():
            if quota.sharing == "Lend":
                assert r["borrowingLimit"] == 0 and "lendingLimit" not in r
            elif quota.sharing == "LendAndBorrow":
                assert r["borrowingLimit"] == r["nominalQuota"] * (quota.borrow_limit_percent or 50) // 100


def test_local_queue_only_in_plain_eks_projects(graphs: dict[str, ResourceGraph]) -> None:
    research = graphs["project-research"].of_type(f"{KUEUE}LocalQueue")
    assert [q.inputs["spec"]["clusterQueue"] for q in research] == [naming.kueue_cluster_queue("research")]
    assert graphs["project-vision"].of_type(f"{KUEUE}LocalQueue") == []


def test_access_policies_are_scoped_to_the_team_namespace(graphs: dict[str, ResourceGraph]) -> None:
    for association in graphs["project-vision"].of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation"):
        assert association.inputs["accessScope"] == {"namespaces": [naming.namespace("vision")], "type": "namespace"}
