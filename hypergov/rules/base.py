"""What every governance rule shares: its signature and how it reports."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem, RuleId, Severity, SourcePos

Rule = Callable[[GovernanceTree], Iterable[Problem]]


def problem(pos: SourcePos, rule: str, message: str, hint: str,
            severity: Severity = Severity.ERROR) -> Problem:
    return Problem(pos, RuleId(rule), message, hint, severity)
