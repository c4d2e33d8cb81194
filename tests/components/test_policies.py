"""The policy documents, as pure functions: trust forms, ABAC scoping, boundary containment."""

from __future__ import annotations

import pytest
from tests_paths import CONFIG

from components.policies import (
    boundary_document,
    policy_actions,
    role_policy,
    scope_actions,
    trust_policy,
)
from hypergov.validate import load_valid_tree

TREE = load_valid_tree(CONFIG)
ORG = TREE.org.model  # type: ignore[union-attr]


@pytest.mark.parametrize(("principal", "sid"), [
    pytest.param("arn:aws:iam::111122223333:role/x", "IamPrincipals", id="iam-role"),
    pytest.param("identitycenter:user/ravi", "IdentityCenterUsers", id="ic-user"),
    pytest.param("identitycenter:group/ml", "IdentityCenterGroups", id="ic-group"),
])
def test_trust_policy_statement_per_principal_kind(principal: str, sid: str) -> None:
    doc = trust_policy([principal], org=ORG, account="111122223333")
    assert [s["Sid"] for s in doc["Statement"]] == [sid]
    statement = doc["Statement"][0]
    if sid == "IamPrincipals":
        assert statement["Principal"] == {"AWS": [principal]}
    else:
        assert statement["Principal"] == {"AWS": "arn:aws:iam::111122223333:root"}
        assert "AWSReservedSSO_" in str(statement["Condition"]["ArnLike"]["aws:PrincipalArn"])
    if sid == "IdentityCenterUsers":
        assert statement["Condition"]["StringLike"]["aws:userid"] == ["*:ravi"]


@pytest.mark.parametrize(("action", "scope"), [
    pytest.param("eks:DescribeCluster", "shared", id="eks-cluster-action"),
    pytest.param("logs:GetLogEvents", "shared", id="cluster-logs"),
    pytest.param("sagemaker:ListClusters", "unscoped", id="list"),
    pytest.param("cloudwatch:GetMetricData", "unscoped", id="no-resource-level"),
    pytest.param("sagemaker:CreateTrainingJob", "tagged", id="team-resource"),
    pytest.param("s3:GetObject", "tagged", id="s3-object"),
])
def test_actions_are_scoped_by_kind(action: str, scope: str) -> None:
    scoped = scope_actions([action], project_tag="Project")
    found = {"shared": action in scoped.shared_cluster, "unscoped": action in scoped.unscoped,
             "tagged": any(a == action for a, _ in scoped.tagged)}
    assert [k for k, v in found.items() if v] == [scope]


def test_describe_wildcard_reaches_shared_clusters_only_by_arn() -> None:
    scoped = scope_actions(["sagemaker:Describe*"], project_tag="Project")
    assert "sagemaker:DescribeCluster" in scoped.shared_cluster
    assert scoped.tagged == (("sagemaker:Describe*", "aws:ResourceTag/Project"),)


def test_role_policy_tags_team_resources_with_the_team() -> None:
    project = TREE.projects["vision"].model
    doc = role_policy(ORG, team="vision", project=project, persona="Engineer",
                      clusters=[TREE.clusters["gpu-west"].model])
    conditions = [s["Condition"]["StringEquals"] for s in doc["Statement"] if "Condition" in s]
    assert conditions and all(list(c.values()) == ["vision"] for c in conditions)
    shared = next(s for s in doc["Statement"] if s["Sid"] == "SharedClusters")
    assert "arn:aws:eks:us-west-2:111122223333:cluster/gpu-west-eks" in shared["Resource"]
    assert set(policy_actions(doc)) >= set(project.extra_permissions.Engineer)


def test_boundary_document_is_the_org_boundary() -> None:
    doc = boundary_document(ORG.permission_boundary)
    assert doc["Statement"][0]["Action"] == ORG.permission_boundary.allow
    assert doc["Statement"][1] == {"Sid": "BoundaryDeny", "Effect": "Deny",
                                   "Action": ORG.permission_boundary.deny, "Resource": "*"}
