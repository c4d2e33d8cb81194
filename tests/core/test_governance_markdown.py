"""The governance summary and validation sections as Markdown: the order a reviewer reads them
in, nothing for what did not change, and text from the tree that cannot break the comment."""

from __future__ import annotations

import re

from hypergov.governance_diff import (
    Change,
    ClusterDiff,
    Entry,
    FieldChange,
    GovernanceDiff,
    ProjectDiff,
    QuotaChange,
    SharingChange,
)
from hypergov.governance_markdown import code, escape_text, governance_markdown
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
