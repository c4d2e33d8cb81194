"""Owners as Git-host handles: '@user', '@org/team' and e-mails pass through; the roles become the
handles the tree gives them; a role that cannot be mapped is refused, naming where to fix it, and
never written as a line without owners (GitHub: unowned; GitLab: auto-approved)."""

from __future__ import annotations

import pytest

from hypergov.codeowners import CodeownersRefused, Host, Refusal, codeowners
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from tests.core.codeowners_trees import EXAMPLE_RULES, edited, with_rules
from tests.example_tree import example_tree, valid_tree

ADMINS_ON_HOST = b"platform_admins_on_git_host: ['@acme/ml-platform']\n"
VISION_HANDLES = (b"  ProjectLead: ['@acme/vision-leads']\n  Engineer: ['@acme/vision-engineers', alice@example.com]\n"
                  b"  Viewer: []")


def _text(tree: GovernanceTree, host: Host = "github") -> str:
    return codeowners(tree, host=host, tree_dir="config", path=".github/CODEOWNERS").text()


def _refusals(tree: GovernanceTree, host: Host = "github") -> tuple[Refusal, ...]:
    with pytest.raises(CodeownersRefused) as refused:
        _text(tree, host)
    return refused.value.refusals


def test_handles_and_e_mails_pass_through() -> None:
    text = _text(with_rules("  - paths: [\"org.yaml\"]\n    owners: ['@alice', '@acme/security', bob@example.com]\n"))
    assert "/config/org.yaml @alice @acme/security bob@example.com\n" in text


def test_platform_admins_without_a_handle_are_refused_at_org_yaml() -> None:
    tree = valid_tree(edited({"org.yaml": (ADMINS_ON_HOST, b"")}))
    (refusal,) = _refusals(tree)
    assert refusal.kind == "owner-not-on-git-host" and refusal.pos is not None
    assert (refusal.pos.file, refusal.pos.line) == ("config/org.yaml", 135)  # the `platform_admins:` key
    assert "platform_admins_on_git_host" in refusal.fix


def test_a_persona_with_members_and_no_handles_is_refused_naming_the_rule_and_the_project_file() -> None:
    tree = valid_tree(edited({"projects/vision.yaml": (b"  ProjectLead: ['@acme/vision-leads']\n", b"")}))
    refusals = _refusals(tree)
    assert [(r.pos.file, r.pos.line) for r in refusals if r.pos] == [("config/projects/vision.yaml", 4)] * 2
    rule_2, rule_3 = refusals  # project-leads (rule 2) and project-members (rule 3) both need them
    assert "'project-leads' (config/org.yaml:144:" in rule_2.message and "vision's ProjectLead" in rule_2.message
    assert "'project-members' (config/org.yaml:146:" in rule_3.message
    assert "members_on_git_host: {ProjectLead:" in rule_2.fix


def test_an_empty_list_says_a_persona_has_no_git_host_account() -> None:
    """vision's Viewers (finance analysts) are `[]`: the workloads line names its leads and
    engineers; the Viewers cannot approve on the host, and nothing is refused."""
    assert "/config/workloads/vision/*.yaml @acme/vision-leads @acme/vision-engineers alice@example.com\n" in _text(
        example_tree())


def test_a_role_that_maps_to_no_handle_at_all_is_refused() -> None:
    no_leads = (b"  ProjectLead: ['@acme/vision-leads']", b"  ProjectLead: []")
    tree = valid_tree(edited({"projects/vision.yaml": no_leads}))
    refusals = _refusals(tree)
    assert len(refusals) == 1  # rule 2 names project-leads only for vision; rule 3 still has vision's engineers
    assert "none of vision's project-leads has a handle" in refusals[0].message
    assert refusals[0].pos is not None and refusals[0].pos.file == "config/projects/vision.yaml"


def test_a_persona_without_members_needs_no_handles() -> None:
    """recsys has no Viewer and no Viewer handles: project-members is its leads and engineers."""
    assert "/config/workloads/recsys/*.yaml @acme/recsys-leads @acme/recsys-engineers\n" in _text(example_tree())


def test_a_gitlab_subgroup_is_refused_for_github_and_written_for_gitlab() -> None:
    tree = valid_tree(edited({"org.yaml": (ADMINS_ON_HOST, b"platform_admins_on_git_host: ['@acme/ml/platform']\n")}))
    (refusal,) = _refusals(tree, "github")
    assert "GitHub names a team '@org/team'" in refusal.message and refusal.pos is not None
    assert refusal.pos.line == 160  # the handle in org.yaml
    assert "/config/org.yaml @acme/ml/platform\n" in _text(tree, "gitlab")


def test_every_refusal_is_reported_at_once() -> None:
    tree = valid_tree(edited({
        "org.yaml": (ADMINS_ON_HOST, b""),
        "projects/vision.yaml": (VISION_HANDLES, b"  Engineer: ['@acme/vision-engineers']"),
        "projects/nlp.yaml": (b"  ProjectLead: ['@acme/nlp-leads']\n", b""),
    }))
    refusals = _refusals(tree)
    assert {r.pos.file for r in refusals if r.pos} == {
        "config/org.yaml", "config/projects/vision.yaml", "config/projects/nlp.yaml"}
    assert len(refusals) == len(set(refusals))  # each once


def test_no_rules_leave_the_fallback_and_the_file_itself() -> None:
    tree = valid_tree(edited({"org.yaml": (EXAMPLE_RULES, b"")}))
    lines = [line for line in _text(tree).splitlines() if line and not line.startswith("#")]
    assert lines == ["/config/ @acme/ml-platform", "/.github/CODEOWNERS @acme/ml-platform"]


@pytest.mark.parametrize("handle", ["vision-leads", "@", "@@maintainer", "@a b", "identitycenter:group/x"])
def test_a_git_host_handle_is_a_handle_or_an_e_mail(handle: str) -> None:
    files = edited({"projects/vision.yaml": (b"['@acme/vision-leads']", f"['{handle}']".encode())})
    problems = validate_files(files).problems
    assert [(p.pos.line, p.rule) for p in problems] == [(30, "SCH004")], problems
