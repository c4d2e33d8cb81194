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


def test_a_trust_policy_names_exactly_its_iam_principals() -> None:
    doc = trust_policy(["arn:aws:iam::111122223333:role/x", "arn:aws:iam::111122223333:user/a"])
    assert doc["Statement"] == [{"Sid": "IamPrincipals", "Effect": "Allow", "Action": "sts:AssumeRole",
                                 "Principal": {"AWS": ["arn:aws:iam::111122223333:role/x",
                                                       "arn:aws:iam::111122223333:user/a"]}}]


def test_identity_center_members_are_never_trusted_by_a_role() -> None:
    """They reach a persona through its permission set (components.identity_center); a condition
    on `AWSReservedSSO_<name>_*` would also match any permission set named `<name>_anything`."""
    doc = trust_policy(["arn:aws:iam::111122223333:role/x", "identitycenter:user/ravi", "identitycenter:group/ml"])
    assert "identitycenter" not in str(doc) and "AWSReservedSSO" not in str(doc)
    with pytest.raises(ValueError, match="at least one IAM principal"):
        trust_policy(["identitycenter:group/ml"])


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
