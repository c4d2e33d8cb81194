"""The Platform Administrator persona, as the org stack declares it: one role per org account,
trusted by exactly the org's `platform_admins`, with exactly org.yaml's policy, outside the maximum
boundary on purpose (no permissions boundary, not matched by the SCP's condition), and cluster
admin (`AmazonEKSClusterAdminPolicy`, cluster scope) on every governed EKS cluster."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

from components import arns
from hypergov import naming
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from stacks.affected import affected_stacks
from stacks.graph import capture_graph
from stacks.resource_graph import ResourceGraph
from tests.example_tree import example_files

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
# AWS's published access policy for full cluster administration (EKS User Guide, "Review access
# policy permissions": AmazonEKSClusterAdminPolicy).
CLUSTER_ADMIN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def _admin_roles(graph: ResourceGraph, org: str) -> list[dict[str, object]]:
    return [dict(r.inputs) for r in graph.of_type(ROLE) if r.inputs["name"] == naming.platform_admin_role_name(org)]


def test_one_role_per_account_outside_the_boundary(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    roles = {r.name: r for r in graphs["org"].of_type(ROLE)}
    assert sorted(roles) == sorted(f"platform-admin@{a.name}" for a in org.accounts)
    for account in org.accounts:
        role = roles[f"platform-admin@{account.name}"]
        assert role.provider is not None and role.provider.endswith(f"aws-{account.name}-{org.home_region}")
        assert role.inputs["path"] == "/hypergov-platform/"
        assert "permissionsBoundary" not in role.inputs
        # The SCP applies the boundary to principals matching this ArnLike pattern; this role is not one.
        arn = arns.platform_admin_role_arn(org, str(account.id))
        assert arn == f"arn:aws:iam::{account.id}:role/hypergov-platform/acme-platform-administrator"
        assert not fnmatchcase(arn, arns.hypergov_roles_pattern(org))
        assert fnmatchcase(arns.role_arn(org, account=str(account.id), team="vision", persona="Engineer"),
                           arns.hypergov_roles_pattern(org))


def test_trusted_by_exactly_the_platform_admins(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    for account in org.accounts:
        role = graphs["org"].named(f"platform-admin@{account.name}")
        trust = json.loads(str(role.inputs["assumeRolePolicy"]))["Statement"]
        # org.yaml's IAM platform admin, by ARN; its Identity Center group is not trusted by the role
        # (it has the Platform Administrator's permission set: test_identity_center_platform_admins)
        assert trust == [{"Sid": "IamPrincipals", "Effect": "Allow", "Action": "sts:AssumeRole",
                          "Principal": {"AWS": ["arn:aws:iam::111122223333:role/PlatformAdministrator"]}}]


def test_identity_center_platform_admins_get_the_permission_set_in_every_account(
        tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    (permission_set,) = graphs["org"].of_type("aws:ssoadmin/permissionSet:PermissionSet")
    assert permission_set.inputs["name"] == "acme-platform-admin"
    (policy,) = graphs["org"].of_type("aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy")
    assert json.loads(str(policy.inputs["inlinePolicy"]))["Statement"] == [
        {"Sid": "PlatformAdministrator", "Effect": "Allow",
         "Action": list(org.personas.PlatformAdministrator.actions), "Resource": "*"}]
    # outside the boundary, like the role: no boundary attachment
    assert graphs["org"].of_type("aws:ssoadmin/permissionsBoundaryAttachment:PermissionsBoundaryAttachment") == []
    assignments = graphs["org"].of_type("aws:ssoadmin/accountAssignment:AccountAssignment")
    assert sorted(a.inputs["targetId"] for a in assignments) == sorted(str(a.id) for a in org.accounts)
    assert {a.inputs["principalType"] for a in assignments} == {"GROUP"}


def test_policy_is_exactly_org_yaml(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    assert org.personas.PlatformAdministrator is not None
    policies = graphs["org"].of_type(ROLE_POLICY)
    assert sorted(p.name for p in policies) == sorted(f"platform-admin-access@{a.name}" for a in org.accounts)
    for policy in policies:
        assert policy.inputs["role"] == naming.platform_admin_role_name(org.name)
        assert policy.inputs["name"] == "acme-platform-administrator-access"
        assert json.loads(str(policy.inputs["policy"]))["Statement"] == [
            {"Sid": "PlatformAdministrator", "Effect": "Allow",
             "Action": list(org.personas.PlatformAdministrator.actions), "Resource": "*"}]
        role = graphs["org"].named(policy.name.replace("-access@", "@"))
        assert role.urn in policy.depends_on


def test_cluster_admin_on_every_governed_cluster(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    org = tree.org.model  # type: ignore[union-attr]
    entries = {r.name: r for r in graphs["org"].of_type(ENTRY)}
    associations = {r.name: r for r in graphs["org"].of_type(ASSOCIATION)}
    # the role's, and the Identity Center platform admins' permission set's role
    assert sorted(entries) == sorted([*(f"platform-admin-access@{c}" for c in tree.clusters),
                                      *(f"access-sso-platform-admin@{c}" for c in tree.clusters)])
    assert sorted(associations) == sorted([*(f"platform-admin-cluster-admin@{c}" for c in tree.clusters),
                                           *(f"access-sso-policy-platform-admin@{c}" for c in tree.clusters)])
    for name in tree.clusters:
        sso = associations[f"access-sso-policy-platform-admin@{name}"]
        assert sso.inputs["policyArn"] == CLUSTER_ADMIN and sso.inputs["accessScope"] == {"type": "cluster"}
    for name, sourced in tree.clusters.items():
        cluster = sourced.model
        account = org.account(cluster.account)
        assert account is not None
        principal = arns.platform_admin_role_arn(org, str(account.id))
        entry = entries[f"platform-admin-access@{name}"]
        association = associations[f"platform-admin-cluster-admin@{name}"]
        region = cluster.region or org.home_region
        for r in (entry, association):
            assert r.provider is not None and r.provider.endswith(f"aws-{account.name}-{region}")
            assert r.inputs["clusterName"] == cluster.eks.cluster_name
            assert r.inputs["principalArn"] == principal
        assert entry.inputs["type"] == "STANDARD" and "kubernetesGroups" not in entry.inputs
        assert association.inputs["policyArn"] == CLUSTER_ADMIN
        assert association.inputs["accessScope"] == {"type": "cluster"}
        assert entry.urn in association.depends_on
        assert graphs["org"].named(f"platform-admin@{account.name}").urn in entry.depends_on


def _without_platform_administrator() -> dict[str, bytes]:
    files = example_files()
    text = files["org.yaml"].decode()
    start = text.index("  # The org layer's role in every account")
    end = text.index("\ncost_allocation:")
    files["org.yaml"] = (text[:start] + text[end:]).encode()
    return files


def test_no_platform_administrator_persona_declares_no_role_and_no_entry() -> None:
    report = validate_files(_without_platform_administrator())
    assert report.ok, report.problems
    graph = capture_graph(report.tree, "org")
    assert not graph.of_type(ROLE) and not graph.of_type(ROLE_POLICY)
    assert not graph.of_type(ENTRY) and not graph.of_type(ASSOCIATION)


def test_the_org_stack_reads_each_clusters_eks_name_account_and_region_only() -> None:
    base = validate_files(example_files()).tree
    renamed = example_files()
    renamed["clusters/gpu-west.yaml"] = renamed["clusters/gpu-west.yaml"].replace(
        b"cluster_name: gpu-west-eks", b"cluster_name: gpu-west-eks2")
    assert "org" in affected_stacks(base, validate_files(renamed).tree).changed
    resized = example_files()
    resized["clusters/gpu-west.yaml"] = resized["clusters/gpu-west.yaml"].replace(b"instances: 32", b"instances: 40")
    assert "org" not in affected_stacks(base, validate_files(resized).tree).changed
    assert affected_stacks(base, validate_files(_without_platform_administrator()).tree).changed == ("org",)
