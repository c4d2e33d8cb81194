"""JSON policy documents (IAM policies, SCPs, tag policies, SNS topic policies) compared in one spelling: the
services return what they were given, or re-serialise it, while terraform, the console and people
write the same policy with other key orders, whitespace, a string for a one-element list, or
lists in another order. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# Statement members whose value may be one string or a list of them, in any order (read alike).
_SET_VALUED = frozenset({"Action", "NotAction", "Resource", "NotResource"})


def parsed(document: Any) -> Any:
    """A document given as JSON text parsed (None stays None; text that is not JSON stays text)."""
    if isinstance(document, str):
        try:
            return json.loads(document)
        except ValueError:
            return document
    return document


def canonical(document: Any) -> Any:
    """A policy document in one spelling: Action/Resource, Principal and Condition values as sorted
    lists, statements as a sorted list, Principal "*" as {"AWS": ["*"]}; key order is json.dumps's."""
    document = parsed(document)
    if not isinstance(document, Mapping):
        return document
    out = dict(document)
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
    if all(isinstance(v, str) for v in values):  # nearly always: actions, ARNs, condition values
        return sorted(set(values))
    return sorted({json.dumps(v, sort_keys=True): v for v in values}.values(), key=lambda v: json.dumps(v))


def same_document(a: Any, b: Any) -> bool:
    return json.dumps(canonical(a), sort_keys=True) == json.dumps(canonical(b), sort_keys=True)
