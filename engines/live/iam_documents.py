"""Policy documents as the live IAM scan weighs them: compared in one canonical spelling (IAM
returns what it was given, but terraform, the console and people write the same policy with other
key orders, whitespace, a string for a one-element list, lists in another order), and checked
against org.yaml's permission boundary with the validation rules' containment
(`hypergov.rules.iam_patterns`, as `hypergov.rules.permissions` uses it). Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hypergov.rules.iam_patterns import SearchBudget, decide_containment, decide_overlap

# Policy members whose value may be one string or a list of them, in any order (IAM reads them alike).
_SET_VALUED = frozenset({"Action", "NotAction", "Resource", "NotResource"})


def canonical(document: Any) -> Any:
    """A policy document in one spelling: keys sorted (by json.dumps), Action/Resource/Principal and
    Condition values as sorted lists, statements as a sorted list, Principal "*" as {"AWS": ["*"]}."""
    if not isinstance(document, Mapping):
        return document
    out = {k: v for k, v in document.items()}
    statements = out.get("Statement")
    if statements is not None:
        listed = statements if isinstance(statements, list) else [statements]
        out["Statement"] = sorted((_statement(s) for s in listed), key=lambda s: json.dumps(s, sort_keys=True))
    return out


def _statement(statement: Any) -> Any:
    if not isinstance(statement, Mapping):
        return statement
    out: dict[str, Any] = {}
    for key, value in statement.items():
        if key in _SET_VALUED:
            out[key] = _as_set(value)
        elif key in ("Principal", "NotPrincipal"):
            value = {"AWS": value} if value == "*" else value
            out[key] = {k: _as_set(v) for k, v in value.items()} if isinstance(value, Mapping) else value
        elif key == "Condition" and isinstance(value, Mapping):
            out[key] = {op: {k: _as_set(v) for k, v in kv.items()} if isinstance(kv, Mapping) else kv
                        for op, kv in value.items()}
        else:
            out[key] = value
    return out


def _as_set(value: Any) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    return sorted({json.dumps(v, sort_keys=True): v for v in values}.values(), key=lambda v: json.dumps(v))


def same_document(a: Any, b: Any) -> bool:
    return json.dumps(canonical(a), sort_keys=True) == json.dumps(canonical(b), sort_keys=True)



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
