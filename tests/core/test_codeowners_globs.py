"""change_control globs as CODEOWNERS patterns: anchored under the tree's folder, `**` as the hosts
read it, `{a,b}` as one line per alternative, `<project>` per project where the owners depend on
it; what CODEOWNERS cannot say exactly is refused, naming the org.yaml line."""

from __future__ import annotations

import pytest

from hypergov.codeowners import CodeownersRefused, NotExpressible, codeowners, expand_braces, host_pattern
from tests.core.codeowners_trees import with_rules

PROJECTS = ("nlp", "recsys", "research", "speech", "vision")


@pytest.mark.parametrize(("glob", "tree_dir", "pattern"), [
    pytest.param("org.yaml", "config", "/config/org.yaml", id="a-file"),
    pytest.param("clusters/*.yaml", "config", "/config/clusters/*.yaml", id="star-in-a-segment"),
    pytest.param("projects/v?sion.yaml", "config", "/config/projects/v?sion.yaml", id="question-mark"),
    pytest.param("org.yaml", "gov/config", "/gov/config/org.yaml", id="nested-folder"),
    pytest.param("org.yaml", "", "/org.yaml", id="tree-at-the-root"),
    # change_control's `**` alone matches every path: the tree's folder (everything under it)
    pytest.param("**", "config", "/config/", id="everything"),
    pytest.param("**", "", "*", id="everything-at-the-root"),
    # a final `**`: everything under the folder before it
    pytest.param("workloads/**", "config", "/config/workloads/", id="everything-under"),
    # change_control's `**` segment is one or more segments (regex `/.*/`), the hosts' zero or more
    pytest.param("workloads/**/*.yaml", "config", "/config/workloads/*/**/*.yaml", id="one-or-more-segments"),
    pytest.param("**/*.yaml", "config", "/config/*/**/*.yaml", id="leading-double-star"),
])
def test_globs_become_anchored_patterns(glob: str, tree_dir: str, pattern: str) -> None:
    assert host_pattern(glob, tree_dir) == pattern


@pytest.mark.parametrize("glob", [
    pytest.param("/org.yaml", id="leading-slash"),
    pytest.param("workloads/", id="trailing-slash"),
    pytest.param("workloads//x.yaml", id="empty-segment"),
    pytest.param("../org.yaml", id="dot-dot"),
    pytest.param("./org.yaml", id="dot"),
    pytest.param("workloads/**.yaml", id="double-star-inside-a-segment"),
    pytest.param("a**b/x.yaml", id="double-star-between-letters"),
])
def test_globs_no_pattern_says_exactly_are_refused(glob: str) -> None:
    with pytest.raises(NotExpressible):
        host_pattern(glob, "config")


@pytest.mark.parametrize(("glob", "alternatives"), [
    pytest.param("clusters/*.yaml", ["clusters/*.yaml"], id="no-braces"),
    pytest.param("clusters/{gpu,trn}-*.yaml", ["clusters/gpu-*.yaml", "clusters/trn-*.yaml"], id="two"),
    pytest.param("{clusters,projects}/{a,b}.yaml",
                 ["clusters/a.yaml", "clusters/b.yaml", "projects/a.yaml", "projects/b.yaml"], id="left-to-right"),
    pytest.param("org.{yaml,yml}", ["org.yaml", "org.yml"], id="suffix"),
    pytest.param("x{,y}.yaml", ["x.yaml", "xy.yaml"], id="empty-alternative"),
    pytest.param("projects/{<project>}.yaml", None, id="placeholder-inside-braces"),
    pytest.param("{a,*}.yaml", None, id="star-inside-braces"),
    pytest.param("{a,{b,c}}.yaml", None, id="nested"),
    pytest.param("{a,b.yaml", None, id="unclosed"),
    pytest.param("a,b}.yaml", None, id="unopened"),
])
def test_braces_expand_into_one_glob_per_alternative(glob: str, alternatives: list[str] | None) -> None:
    if alternatives is None:  # change_control reads these literally or not at all: no exact line
        with pytest.raises(NotExpressible):
            expand_braces(glob)
    else:
        assert expand_braces(glob) == alternatives


def _lines(rules: str) -> list[str]:
    text = codeowners(with_rules(rules), host="github", tree_dir="config", path=".github/CODEOWNERS").text()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_braces_become_adjacent_lines_with_the_rules_owners() -> None:
    lines = _lines('  - paths: ["clusters/{gpu,trn}-*.yaml"]\n    owners: [\'@acme/sre\']\n')
    assert lines[1:3] == ["/config/clusters/gpu-*.yaml @acme/sre", "/config/clusters/trn-*.yaml @acme/sre"]


def test_project_expands_to_a_line_per_project_when_the_owners_depend_on_it() -> None:
    lines = _lines('  - paths: ["projects/<project>.yaml"]\n    owners: [project-leads]\n')
    assert lines[1:-1] == ["/config/projects/?*.yaml @acme/ml-platform",  # a new project: the platform admins
                           *(f"/config/projects/{p}.yaml @acme/{p}-leads" for p in PROJECTS)]


def test_project_is_one_line_for_every_project_when_the_owners_do_not_depend_on_it() -> None:
    lines = _lines('  - paths: ["workloads/<project>/*.yaml"]\n    owners: [\'@acme/sre\', platform-admins]\n')
    assert lines[1:-1] == ["/config/workloads/?*/*.yaml @acme/sre @acme/ml-platform"]


def test_a_glob_without_project_in_a_rule_naming_project_roles_goes_to_the_platform_admins() -> None:
    """change_control: "it names project owners but its glob has no <project>, so the platform admins approve"."""
    lines = _lines('  - paths: ["workloads/**"]\n    owners: [project-members]\n')
    assert lines[1:-1] == ["/config/workloads/ @acme/ml-platform"]


def test_rules_keep_their_order_and_each_rules_globs_go_last_to_first() -> None:
    lines = _lines('  - paths: ["org.yaml", "clusters/*.yaml"]\n    owners: [\'@acme/a\']\n'
                   '  - paths: ["**"]\n    owners: [\'@acme/b\']\n')
    assert lines == ["/config/ @acme/ml-platform", "/config/clusters/*.yaml @acme/a", "/config/org.yaml @acme/a",
                     "/config/ @acme/b", "/.github/CODEOWNERS @acme/b"]  # the file: org.yaml's owners, rule 2's


def test_every_glob_refusal_names_its_org_yaml_line_at_once() -> None:
    rules = ('  - paths: ["org.yaml"]\n    owners: [platform-admins]\n'
             '  - paths: ["workloads/**.yaml", "{a,{b}}.yaml"]\n    owners: [platform-admins]\n')
    with pytest.raises(CodeownersRefused) as refused:
        _lines(rules)
    assert [(r.kind, r.pos.line if r.pos else None) for r in refused.value.refusals] == [
        ("glob-not-expressible", 143), ("glob-not-expressible", 143)]
    assert {str(r.pos.file) for r in refused.value.refusals if r.pos} == {"config/org.yaml"}
    assert "'**' inside a segment" in refused.value.refusals[1].message
