"""Policy documents as the live IAM scan weighs them: compared in the one canonical spelling of
`engines.live.documents`, and checked against org.yaml's permission boundary with the validation
rules' containment (`hypergov.rules.iam_patterns`, as `hypergov.rules.permissions` uses it). Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from engines.live.documents import canonical
from hypergov.rules.iam_patterns import SearchBudget, decide_containment, decide_overlap

# What one account's boundary checks may spend together: the example tree's ~20 distinct patterns
# need a few hundred steps (each verdict is kept); past this, what is left undecided is outside.
ACCOUNT_SEARCH_STEPS = 300_000
NOT_READ = "(document not read: not a customer managed policy of this account)"


class BoundaryCheck:
    """Whether an allowed action pattern lies inside org.yaml's permission boundary: contained in
    `allow` and overlapping no `deny` (as `hypergov.rules.permissions` decides it); verdicts kept."""

    def __init__(self, allow: Sequence[str], deny: Sequence[str], steps: int = ACCOUNT_SEARCH_STEPS) -> None:
        self.allow, self.deny = tuple(allow), tuple(deny)
        self.budget = SearchBudget(steps)
        self._verdicts: dict[str, str | None] = {}

    def outside(self, action: str) -> str | None:
        """None when inside; else how the report shows it (the pattern, marked when undecidable)."""
        if action not in self._verdicts:
            self._verdicts[action] = self._decide(action)
        return self._verdicts[action]

    def _decide(self, action: str) -> str | None:
        inside = decide_containment(action, self.allow, budget=self.budget)
        if not inside.decided:
            return f"{action} (undecidable)"
        if inside.witness is not None:
            return action
        for denied in self.deny:
            both = decide_overlap(action, denied, budget=self.budget)
            if not both.decided:
                return f"{action} (undecidable)"
            if both.witness is not None:
                return action
        return None

    def actions_outside(self, document: Any) -> list[str]:
        """The allowed actions of a policy document outside the boundary (resources and conditions
        are not weighed: an action allowed anywhere counts)."""
        if not isinstance(document, Mapping):
            return ["(unreadable document)"]
        found: set[str] = set()
        for statement in canonical(document).get("Statement") or []:
            if not isinstance(statement, Mapping) or statement.get("Effect") != "Allow":
                continue
            if "NotAction" in statement:
                found.add(f"NotAction {json.dumps(statement['NotAction'])}")
            for action in statement.get("Action") or []:
                verdict = self.outside(action) if isinstance(action, str) else json.dumps(action)
                if verdict is not None:
                    found.add(verdict)
        return sorted(found)
