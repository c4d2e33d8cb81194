"""The governance summary and validation sections as Markdown: the order a reviewer reads them
in, nothing for what did not change, and text from the tree that cannot break the comment."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from hypergov.governance_diff import (
    Change,
    ClusterDiff,
    Entry,
    FieldChange,
    GovernanceDiff,
    OrgDiff,
    ProjectDiff,
    QuotaChange,
    SharingChange,
)
from hypergov.governance_markdown import code, escape_text, governance_markdown
from hypergov.identity_people import NotChecked, People, Person, not_checked
from hypergov.problems import Problem, RuleId, Severity, SourcePos
from hypergov.rules.catalog import RULES, RuleInfo
from hypergov.validation_markdown import invalid_tree_markdown, rules_ran, validation_markdown


def _project(**parts: object) -> ProjectDiff:
    fields: dict[str, object] = {"name": "vision", "status": "changed", "quotas": (), "sharing": (),
                                 "fair_share_weight": None, "allowed_priority_classes": (), "members": (),
                                 "permissions": (), "budget": None, "workload_classes": (), "fields": ()}
    fields.update(parts)
    return ProjectDiff(**fields)  # type: ignore[arg-type]


def test_no_change_is_one_line() -> None:
    assert governance_markdown(GovernanceDiff(org=None, clusters=(), projects=())) == (
        "### Governance summary\n\nNo governance changes.")


def test_guarantees_come_first_then_lending_permissions_members_and_other_fields() -> None:
    project = _project(
        quotas=(QuotaChange("vision", "gpu-west", "ml.p5.48xlarge", Change(8, 16), Change(64, 128)),),
        sharing=(SharingChange("gpu-west", Change[str | None]("Lend", "LendAndBorrow"), Change(None, 50)),),
        members=(Entry("identitycenter:user/bob", False, "Viewer"),),
        permissions=(Entry("s3:GetObject", True, "Engineer"),),
        fields=(FieldChange("description", "old", "new"),))
    cluster = ClusterDiff("gpu-west", "changed", Change(200, 264), Change(320, 320), (), (), ())
    text = governance_markdown(GovernanceDiff(org=None, clusters=(cluster,), projects=(project,)))
    order = ["| `vision` | `gpu-west` | `ml.p5.48xlarge` | 8 → 16 | 64 → 128 |",
             "| `gpu-west` | 200 → 264 | 320 | 62% → 82% |",
             "- **Sharing** on `gpu-west`: Lend → LendAndBorrow, borrow limit — → 50%",
             "  - `+ s3:GetObject` (Engineer)", "  - `- identitycenter:user/bob` (Viewer)",
             "- `description`: old → new"]
    positions = [text.index(line) for line in order]
    assert positions == sorted(positions)
    assert "Cluster `gpu-west`" not in text  # only its guarantees changed: the table says it


def test_a_project_whose_only_change_is_its_quota_gets_no_block() -> None:
    project = _project(quotas=(QuotaChange("vision", "gpu-west", "ml.p5.48xlarge", Change(8, 9), Change(64, 72)),))
    text = governance_markdown(GovernanceDiff(org=None, clusters=(), projects=(project,)))
    assert "**Project" not in text and "| 8 → 9 | 64 → 72 |" in text


def test_unknown_gpus_show_as_a_question_mark() -> None:
    project = _project(quotas=(QuotaChange("vision", "gpu-west", "ml.g7.12xlarge", Change(0, 2), Change(0, None)),))
    assert "| 0 → 2 | 0 → ? |" in governance_markdown(GovernanceDiff(org=None, clusters=(), projects=(project,)))


def test_free_text_cannot_break_a_table_hide_the_comment_or_link() -> None:
    hostile = "a | b <!-- `x` [y](http://e) *z*\nnext line"
    assert escape_text(hostile) == r"a \| b \<!-- \`x\` \[y\](http://e) \*z\* next line"
    assert code("a|b`c") == "`a\\|b'c`"
    assert escape_text("x" * 200).endswith("...") and len(escape_text("x" * 200)) == 120
    project = _project(fields=(FieldChange("description", None, hostile),))
    text = governance_markdown(GovernanceDiff(org=None, clusters=(), projects=(project,)))
    value = text.split("- `description`: ", 1)[1]
    assert not re.search(r"(?<!\\)[<|`\[*]", value), value  # every mark that acts mid-line is escaped


def _problem(file: str, line: int, rule: str, severity: Severity) -> Problem:
    return Problem(SourcePos(file, line, 3), RuleId(rule), f"{rule} | message", f"fix {rule}", severity)


def test_validation_lists_warnings_with_file_and_line_and_every_rule() -> None:
    text = validation_markdown([_problem("config/projects/a.yaml", 7, "CAP004", Severity.WARNING)])
    assert "no errors, 1 warning(s)" in text
    assert "| `CAP004` | `config/projects/a.yaml:7` | CAP004 \\| message | fix CAP004 |" in text
    assert f"{len(RULES)} rules ran" in text
    assert all(f"| `{r.id}` |" in text for r in RULES)


def test_rule_ids_compress_to_runs() -> None:
    rules = [RuleInfo("SYN001", "syntax", "a"), RuleInfo("SYN002", "syntax", "b"), RuleInfo("SYN004", "syntax", "c"),
             RuleInfo("CAP001", "capacity", "d")]
    assert rules_ran(rules)[0] == ("<details><summary>4 rules ran: syntax SYN001–SYN002, SYN004; capacity CAP001"
                                   "</summary>")


def test_an_invalid_tree_lists_errors_first_with_where_and_how_to_fix() -> None:
    problems = [_problem("config/org.yaml", 2, "IDN005", Severity.WARNING),
                _problem("config/clusters/c.yaml", 14, "CAP001", Severity.ERROR)]
    text = invalid_tree_markdown(problems)
    assert text.startswith("## hypergov plan: the config tree is invalid\n")
    assert "1 error(s) and 1 warning(s)" in text
    error = text.index("| error | `CAP001` | `config/clusters/c.yaml:14` | CAP001 \\| message | fix CAP001 |")
    warning = text.index("| warning | `IDN005` | `config/org.yaml:2` |")
    assert error < warning


# --- Identity Center members with what the identity store said --------------------------------

VISION = "identitycenter:group/vision-engineers"
RAVI = "identitycenter:user/ravi"
PEOPLE = (Person("dokonkwo", "David Okonkwo"), Person("imoreau", "Ines Moreau"), Person("ktanaka", "Kenji Tanaka"),
          Person("sgarcia", "Sofia Garcia"))


def _members(*entries: Entry, people: People | None) -> str:
    return governance_markdown(GovernanceDiff(org=None, clusters=(), projects=(_project(members=entries),)), people)


def test_a_group_shows_its_count_with_the_people_folded_inside_the_item() -> None:
    text = _members(Entry(VISION, True, "Engineer"), Entry("identitycenter:group/solo", True, "Viewer"),
                    people={VISION: PEOPLE, "identitycenter:group/solo": (Person("bchen", "Bo Chen"),)})
    assert ("  - `+ identitycenter:group/vision-engineers` (Engineer): 4 people\n"
            "    <details><summary>who</summary>\n\n"
            "    - `dokonkwo` David Okonkwo\n    - `imoreau` Ines Moreau\n    - `ktanaka` Kenji Tanaka\n"
            "    - `sgarcia` Sofia Garcia\n\n    </details>\n"
            "  - `+ identitycenter:group/solo` (Viewer): 1 person\n") in text
    # rendered as CommonMark: each <details> and the names in it lie inside its member's list item
    # (levels: Members' item 1, its list 2, a member's item 3, what is inside it 4, a person's item 5)
    tokens = MarkdownIt("commonmark").parse(text)
    items = [t.level for t in tokens if t.type == "list_item_open"]
    assert (items.count(3), items.count(5)) == (2, 4 + 1)
    html = [(t.level, t.content.strip()) for t in tokens if t.type == "html_block"]
    assert html == [(4, "<details><summary>who</summary>"), (4, "</details>")] * 2


def test_a_user_shows_one_person_and_their_display_name() -> None:
    text = _members(Entry(RAVI, False, "ProjectLead"), people={RAVI: (Person("ravi", "Ravi Shankar"),)})
    assert text.endswith("  - `- identitycenter:user/ravi` (ProjectLead): 1 person (Ravi Shankar)")
    assert "<details>" not in text


def test_a_member_the_store_lacks_or_a_group_without_people_is_flagged() -> None:
    ghosts, empty = "identitycenter:group/ghosts", "identitycenter:group/nobody-yet"
    text = _members(Entry(ghosts, True, "Viewer"), Entry(empty, True, "Viewer"), Entry(RAVI, False, "Viewer"),
                    people={ghosts: None, empty: (), RAVI: None})
    assert "  - `+ identitycenter:group/ghosts` (Viewer): **not in the identity store**\n" in text
    assert "  - `+ identitycenter:group/nobody-yet` (Viewer): **no members**\n" in text
    assert text.endswith("  - `- identitycenter:user/ravi` (Viewer): not in the identity store")  # it goes anyway


def test_not_checked_says_why_and_never_counts() -> None:
    admins = "identitycenter:group/ml-platform-admins"
    org = OrgDiff(permission_boundary=(), persona_actions=(), fields=(),
                  platform_admins=(Entry(admins, True), Entry("arn:aws:iam::111122223333:role/Admin", True)))
    text = governance_markdown(GovernanceDiff(org=org, clusters=(), projects=()),
                               not_checked([admins], "no AWS credentials"))
    assert ("  - `+ identitycenter:group/ml-platform-admins`: not checked (no AWS credentials)\n"
            "  - `+ arn:aws:iam::111122223333:role/Admin`") in text
    assert "person" not in text and "people" not in text


def test_display_names_and_reasons_are_escaped() -> None:
    hostile = Person("mallory", "Mal <!-- *x* [y](http://e) |")
    text = _members(Entry(VISION, True, "Engineer"), Entry(RAVI, True, "Viewer"),
                    people={VISION: (hostile, *PEOPLE), RAVI: NotChecked("AccessDenied <b>|</b>")})
    assert r"    - `mallory` Mal \<!-- \*x\* \[y\](http://e) \|" in text
    assert r"not checked (AccessDenied \<b\>\|\</b\>)" in text
    assert ": 5 people" in text


def test_without_people_the_member_lines_are_as_before() -> None:
    entries = (Entry(VISION, True, "Engineer"), Entry(RAVI, False, "Viewer"))
    assert _members(*entries, people=None).endswith(
        "- **Members**\n  - `+ identitycenter:group/vision-engineers` (Engineer)\n"
        "  - `- identitycenter:user/ravi` (Viewer)")
    # a principal the mapping does not hold (the caller did not look it up) is shown as before too
    assert _members(*entries, people={}) == _members(*entries, people=None)


def test_the_diff_names_its_identity_center_members_once() -> None:
    org = OrgDiff(permission_boundary=(), persona_actions=(), fields=(),
                  platform_admins=(Entry(VISION, False), Entry("arn:aws:iam::111122223333:role/Admin", True)))
    project = _project(members=(Entry(VISION, True, "Engineer"), Entry(RAVI, True, "Viewer"),
                                Entry("arn:aws:iam::111122223333:role/x", True, "Viewer")))
    assert GovernanceDiff(org=org, clusters=(), projects=(project,)).identity_center_members == (VISION, RAVI)
