"""Problems: the one currency every check in hypergov pays in.

Loading, schema validation and the governance rules all report `Problem` values instead of
raising, so that `hypergov validate` can show every mistake in a tree at once, sorted by file and
line, and so that no user error ever surfaces as a Python traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NewType

RuleId = NewType("RuleId", str)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class SourcePos:
    """A 1-based position in a file of the config tree, as editors and compilers print it."""

    file: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the tree: where, which rule, what is wrong, and how to fix it."""

    pos: SourcePos
    rule: RuleId
    message: str
    hint: str
    severity: Severity = Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.pos.file, self.pos.line, self.pos.column, self.rule, self.message)

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.pos.file,
            "line": self.pos.line,
            "column": self.pos.column,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
        }


def format_problem(p: Problem) -> str:
    """`file:line:column  RULE  message` and the hint beneath: the terminal form of a problem."""
    sev = "" if p.severity is Severity.ERROR else " (warning)"
    return f"{p.pos}  {p.rule}  {p.message}{sev}\n    hint: {p.hint}"


def sorted_problems(problems: list[Problem]) -> list[Problem]:
    """Deterministic order (file, line, column, rule), duplicates removed."""
    unique = {(p.sort_key(), p.hint, p.severity): p for p in problems}
    return sorted(unique.values(), key=Problem.sort_key)


def has_errors(problems: list[Problem]) -> bool:
    return any(p.severity is Severity.ERROR for p in problems)
