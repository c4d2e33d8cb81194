"""The merge-request comment's validation results: for a valid tree, its warnings and the rules
that ran; for an invalid one, the whole comment, every problem with file:line and how to fix it,
so the merge request shows why nothing was planned. Pure: problems in, Markdown out.

Every rule of the catalogue (`hypergov.rules.catalog`) runs on every validation: loading checks
syntax and schema for each file, the governance rules run over the whole tree, so the rules that
ran are the catalogue."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby

from hypergov.governance_markdown import code, escape_text
from hypergov.problems import Problem, Severity
from hypergov.rules.catalog import RULES, RuleInfo

TITLE = "### Validation"
INVALID_TITLE = "## hypergov plan: the config tree is invalid"
_ID = re.compile(r"^([A-Z]+)(\d+)$")


def _where(problem: Problem) -> str:
    return code(f"{problem.pos.file}:{problem.pos.line}")


def _id_ranges(ids: Sequence[str]) -> str:
    """SYN001–SYN010 for a run of consecutive numbers, each id alone otherwise (plain text: it
    goes into an HTML <summary>, where Markdown does not render)."""
    parts: list[str] = []
    numbered = [(m.group(1), int(m.group(2)), rid) for rid in ids if (m := _ID.match(rid))]
    start = 0
    for index in range(1, len(numbered) + 1):
        ends = index == len(numbered) or numbered[index][0] != numbered[index - 1][0] \
            or numbered[index][1] != numbered[index - 1][1] + 1
        if ends:
            first, last = numbered[start][2], numbered[index - 1][2]
            parts.append(first if first == last else f"{first}–{last}")
            start = index
    return ", ".join(parts)


def rules_ran(rules: Sequence[RuleInfo] = RULES) -> list[str]:
    """The rules that ran, by family, with each rule's title behind a disclosure."""
    families = [f"{family} {_id_ranges([r.id for r in group])}"
                for family, group in groupby(rules, key=lambda r: r.family)]
    rows = [f"| {code(r.id)} | {escape_text(r.title, limit=None)} |" for r in rules]
    return [f"<details><summary>{len(rules)} rules ran: {'; '.join(families)}</summary>", "",
            "| rule | checks |", "|---|---|", *rows, "", "</details>"]


def validation_markdown(problems: Sequence[Problem], rules: Sequence[RuleInfo] = RULES) -> str:
    """The section for a tree that passed: its warnings (rule, file:line, message, hint), then
    the rules that ran."""
    warnings = [p for p in problems if p.severity is Severity.WARNING]
    lines = [TITLE, "", f"The changed tree is valid: no errors, {len(warnings)} warning(s)."]
    if warnings:
        lines += ["", "| rule | where | warning | hint |", "|---|---|---|---|",
                  *(f"| {code(p.rule)} | {_where(p)} | {escape_text(p.message, limit=None)} | "
                    f"{escape_text(p.hint, limit=None)} |" for p in warnings)]
    return "\n".join([*lines, "", *rules_ran(rules)])


def invalid_tree_markdown(problems: Sequence[Problem], rules: Sequence[RuleInfo] = RULES) -> str:
    """The whole comment for a change whose tree fails validation: nothing was planned, and
    every problem, errors first, with where it is and how to fix it."""
    errors = [p for p in problems if p.severity is Severity.ERROR]
    warnings = [p for p in problems if p.severity is Severity.WARNING]
    lines = [INVALID_TITLE, "",
             f"Nothing was planned: the tree in this change has {len(errors)} error(s) and {len(warnings)} "
             "warning(s). Fix the errors (`hypergov validate` lists the same problems).", "",
             "| | rule | where | problem | how to fix |", "|---|---|---|---|---|",
             *(f"| {p.severity.value} | {code(p.rule)} | {_where(p)} | {escape_text(p.message, limit=None)} | "
               f"{escape_text(p.hint, limit=None)} |" for p in [*errors, *warnings]),
             "", *rules_ran(rules)]
    return "\n".join(lines) + "\n"
