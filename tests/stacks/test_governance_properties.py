"""Governance properties proven on the captured resource graphs of every stack of the example
tree (not counts: what each object says)."""

from __future__ import annotations

import json
from typing import Any

from components.policies import policy_actions
from components.tags import LAYER_TAG, ORG_TAG
from hypergov import naming
from hypergov.model.common import PERSONAS
from hypergov.model.tree import GovernanceTree
from hypergov.rules.iam_patterns import overlapping_action, uncovered_action
from stacks.resource_graph import GraphResource, ResourceGraph

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
QUOTA = "aws-native:sagemaker:ComputeQuota"
UNTAGGABLE = {ROLE_POLICY, "aws:organizations/policyAttachment:PolicyAttachment", "aws:sns/topicPolicy:TopicPolicy",
              "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
              # no tags in the Identity Center API: only the permission set itself carries them
              "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy",
              "aws:ssoadmin/permissionsBoundaryAttachment:PermissionsBoundaryAttachment",
              "aws:ssoadmin/accountAssignment:AccountAssignment"}


def _all(graphs: dict[str, ResourceGraph]) -> list[GraphResource]:
    return [r for g in graphs.values() for r in g.resources]


def _project_roles(graphs: dict[str, ResourceGraph], kind: str = ROLE) -> list[GraphResource]:
    """Every role (or role policy) of the project layer: the roles the maximum boundary caps."""
    return [r for name, g in graphs.items() if name.startswith("project-") for r in g.of_type(kind)]


def _tags(resource: GraphResource) -> dict[str, str]:
    tags: Any = resource.inputs.get("tags", {})
    return {t["key"]: t["value"] for t in tags} if isinstance(tags, list) else dict(tags)


def test_every_role_carries_the_org_permissions_boundary(tree: GovernanceTree,
                                                         graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    roles = _project_roles(graphs)
    assert roles
    # The only other roles are the org layer's Platform Administrators (tests/stacks/test_platform_admin.py).
    assert {r.inputs["name"] for r in _all(graphs) if r.type == ROLE and r not in roles} == {
        naming.platform_admin_role_name(org.name)}
    for role in roles:
        account = role.name.split("@")[1]
        account_id = org.account(account).id  # type: ignore[union-attr]
        assert role.inputs["permissionsBoundary"] == (
            f"arn:aws:iam::{account_id}:policy/{naming.boundary_policy_name(org.name)}")
    boundaries = {r.inputs["name"] for r in graphs["org"].of_type("aws:iam/policy:Policy")}
    assert boundaries == {naming.boundary_policy_name(org.name)}
    assert len(graphs["org"].of_type("aws:iam/policy:Policy")) == len(org.accounts)


def test_no_role_policy_grants_an_action_outside_the_boundary(tree: GovernanceTree,
                                                              graphs: dict[str, ResourceGraph]) -> None:
    boundary = tree.org.model.permission_boundary  # type: ignore[union-attr]
    policies = _project_roles(graphs, ROLE_POLICY)
    assert len(policies) == len(_project_roles(graphs))
    for policy in policies:
        for action in policy_actions(json.loads(policy.inputs["policy"])):
            assert uncovered_action(action, tuple(boundary.allow)) is None, (policy.name, action)
            assert all(overlapping_action(action, d) is None for d in boundary.deny), (policy.name, action)


def test_every_taggable_resource_has_its_projects_cost_tags(tree: GovernanceTree,
                                                            graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    alloc = org.cost_allocation
    checked = 0
    for stack, graph in graphs.items():
        for r in graph.resources:
            if not r.custom or r.type in UNTAGGABLE or r.type.startswith(("kubernetes:", "pulumi:")):
                continue
            tags = _tags(r)
            assert tags[ORG_TAG] == org.name and LAYER_TAG in tags, (stack, r.name)
            team = stack.removeprefix("project-") if stack.startswith("project-") else None
            if r.type == QUOTA:
                team = r.inputs["computeQuotaTarget"]["teamName"]
            if team is not None:
                project = tree.projects[team].model
                assert tags[alloc.project_tag] == team, (stack, r.name)
                assert tags[alloc.cost_centre_tag] == project.cost_centre, (stack, r.name)
                assert all(tags[k] == v for k, v in project.tags.items()), (stack, r.name)
            checked += 1
    assert checked > 20


def test_every_team_on_a_cluster_has_exactly_one_quota_equal_to_its_config(
        tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    for name, cluster in tree.clusters.items():
        if not cluster.model.task_governance:
            continue
        quotas = graphs[naming.cluster_stack(name)].of_type(QUOTA)
        teams = sorted(t for t, p in tree.projects.items() if name in p.model.quotas)
        assert sorted(q.inputs["computeQuotaTarget"]["teamName"] for q in quotas) == teams
        for q in quotas:
            team = q.inputs["computeQuotaTarget"]["teamName"]
            want = tree.projects[team].model.quotas[name]
            got = {r["instanceType"]: r["count"] for r in q.inputs["computeQuotaConfig"]["computeQuotaResources"]}
            assert got == dict(want.instances)
            assert q.inputs["computeQuotaConfig"]["resourceSharingConfig"]["strategy"] == want.sharing
            assert q.inputs["name"] == naming.compute_quota_name(team, name)
            assert q.inputs["clusterArn"] == cluster.model.hyperpod.arn
        assert not [r for r in graphs[naming.cluster_stack(name)].resources if "kueue" in r.type]


def test_the_scp_content_equals_the_org_boundary(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    scp = graphs["org"].named("scp")
    assert scp.inputs["type"] == "SERVICE_CONTROL_POLICY" and scp.inputs["name"] == naming.scp_name(org.name)
    statements = json.loads(scp.inputs["content"])["Statement"]
    assert statements[0]["NotAction"] == org.permission_boundary.allow
    assert statements[1]["Action"] == org.permission_boundary.deny
    assert all(s["Effect"] == "Deny" for s in statements)
    attachment = graphs["org"].named("scp-attachment")
    assert attachment.inputs["targetId"] == org.organizational_unit
    assert attachment.property_dependencies["policyId"] == (scp.urn,)


def test_names_are_the_deterministic_ones(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    for team, project in tree.projects.items():
        graph = graphs[naming.project_stack(team)]
        personas = [p for p in PERSONAS if project.model.members.of(p)]
        accounts = {tree.clusters[c].model.account for c in project.model.quotas}
        # an IAM role for a persona with IAM members; Identity Center members have a permission set
        with_iam = [p for p in personas if any(m.startswith("arn:") for m in project.model.members.of(p))]
        want = sorted(naming.role_name(org.name, team, p) for p in with_iam for _ in accounts)
        assert sorted(r.inputs["name"] for r in graph.of_type(ROLE)) == want
        assert {r.inputs["path"] for r in graph.of_type(ROLE)} == {naming.ROLE_PATH}
        with_ic = [p for p in personas if any(m.startswith("identitycenter:") for m in project.model.members.of(p))]
        assert sorted(r.inputs["name"] for r in graph.of_type("aws:ssoadmin/permissionSet:PermissionSet")) == sorted(
            naming.permission_set_name(org.name, team, p) for p in with_ic)
        assert {r.inputs["name"] for r in graph.of_type("aws:budgets/budget:Budget")} == {
            naming.budget_name(org.name, team)}
        clusters = len(project.model.quotas)
        roles = graph.of_type("kubernetes:rbac.authorization.k8s.io/v1:Role")
        assert sorted(r.inputs["metadata"]["name"] for r in roles) == sorted(
            naming.persona_role(team, p) for p in personas for _ in range(clusters))
        assert {r.inputs["metadata"]["namespace"] for r in roles} == {naming.namespace(team)}
        bindings = graph.of_type("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
        assert sorted((b.inputs["metadata"]["name"], b.inputs["roleRef"]["name"], b.inputs["subjects"][0]["name"])
                      for b in bindings) == sorted(
            (naming.persona_role_binding(team, p), naming.persona_role(team, p), naming.persona_group(team, p))
            for p in personas for _ in range(clusters))
        # the persona's IAM role and its permission set's role, each in the persona's group
        assert sorted(g for e in graph.of_type("aws:eks/accessEntry:AccessEntry")
                      for g in e.inputs["kubernetesGroups"]) == sorted(
            naming.persona_group(team, p) for p in [*with_iam, *with_ic] for _ in range(clusters))
    scheduler = graphs["cluster-gpu-west"].named("scheduler-config")
    assert scheduler.inputs["request"]["Name"] == naming.scheduler_config_name("gpu-west")
