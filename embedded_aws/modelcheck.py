"""Request validation and response shaping driven by botocore's official service models.

AWS rejects a request whose members break the model's constraints (required, enum, length,
range, pattern) before any business logic runs, with a message such as
``1 validation error detected: Value 'x_y' at 'name' failed to satisfy constraint: Member must
satisfy regular expression pattern: ...``. boto3 checks only some of these on the client (and
not at all with ``parameter_validation=False``), the Go SDK in the Terraform provider checks
others, so the embedded endpoint must check all of them itself. This module is pure: shapes and
values in, violations out.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from botocore.model import ListShape, MapShape, Shape, StructureShape

try:  # botocore patterns are Java regexes (\p{L}, \p{N}...); `regex` understands them, `re` does not.
    import regex as _regex_engine  # moto[server] depends on it (via cfn-lint)
except ImportError:  # pragma: no cover - only without moto[server]
    _regex_engine = None


@dataclass(frozen=True)
class Violation:
    """One broken constraint: where (Coral-style lowerCamel path), the value, and the rule."""

    path: str
    value: Any
    constraint: str

    def render(self) -> str:
        return f"Value {_render_value(self.value)} at '{self.path}' failed to satisfy constraint: {self.constraint}"


def validation_message(violations: list[Violation]) -> str:
    """The message AWS's request validation produces for a list of violations."""
    count = len(violations)
    noun = "error" if count == 1 else "errors"
    return f"{count} validation {noun} detected: " + "; ".join(v.render() for v in violations)


def check_input(shape: StructureShape | None, params: Mapping[str, Any]) -> list[Violation]:
    """Every constraint of `shape` (an operation's input shape) that `params` breaks."""
    if shape is None:
        return []
    found: list[Violation] = []
    _check_structure(shape, params, "", found)
    return found


def missing_required_output(shape: Shape | None, value: Any, path: str = "") -> list[str]:
    """Paths of required output members absent from `value`: used to prove responses are complete."""
    missing: list[str] = []
    if isinstance(shape, StructureShape) and isinstance(value, Mapping):
        for name in shape.required_members:
            if value.get(name) is None:
                missing.append(_join(path, name, camel=False))
        for name, member in shape.members.items():
            if value.get(name) is not None:
                missing.extend(missing_required_output(member, value[name], _join(path, name, camel=False)))
    elif isinstance(shape, ListShape) and isinstance(value, list):
        for index, item in enumerate(value):
            missing.extend(missing_required_output(shape.member, item, f"{path}[{index}]"))
    return missing


def shape_output(shape: Shape, value: Any) -> Any:
    """`value` reduced to the members `shape` declares (recursively), dropping None.

    Stored resources keep whatever the caller sent; a response must only carry what the
    operation's output model knows, exactly as AWS serializes it.
    """
    if isinstance(shape, StructureShape):
        if not isinstance(value, Mapping):
            return None
        out = {}
        for name, member in shape.members.items():
            if value.get(name) is not None:
                shaped = shape_output(member, value[name])
                if shaped is not None:
                    out[name] = shaped
        return out
    if isinstance(shape, ListShape):
        return [shape_output(shape.member, item) for item in value] if isinstance(value, list) else None
    if isinstance(shape, MapShape):
        return {k: shape_output(shape.value, v) for k, v in value.items()} if isinstance(value, Mapping) else None
    return value


def _check(shape: Shape, value: Any, path: str, found: list[Violation]) -> None:
    kind = shape.type_name
    if getattr(shape, "is_document_type", False):
        return  # a document (any JSON value, e.g. identitystore's AttributeValue): no constraints to check
    if kind == "structure":
        if not isinstance(value, Mapping):
            found.append(Violation(path, value, "Member must be a structure"))
            return
        assert isinstance(shape, StructureShape)
        _check_structure(shape, value, path, found)
    elif kind == "list":
        assert isinstance(shape, ListShape)
        _check_list(shape, value, path, found)
    elif kind == "map":
        assert isinstance(shape, MapShape)
        _check_map(shape, value, path, found)
    elif kind == "string":
        _check_string(shape, value, path, found)
    elif kind in ("integer", "long", "float", "double"):
        _check_number(shape, value, path, found)
    elif kind == "boolean" and not isinstance(value, bool):
        found.append(Violation(path, value, "Member must be a boolean"))


def _check_structure(shape: StructureShape, value: Mapping[str, Any], path: str, found: list[Violation]) -> None:
    for name in shape.required_members:
        if value.get(name) is None:
            found.append(Violation(_join(path, name), None, "Member must not be null"))
    for name, member in shape.members.items():
        if value.get(name) is not None:
            _check(member, value[name], _join(path, name), found)


def _check_list(shape: ListShape, value: Any, path: str, found: list[Violation]) -> None:
    if not isinstance(value, list):
        found.append(Violation(path, value, "Member must be a list"))
        return
    _check_length(shape, len(value), value, path, found)
    for index, item in enumerate(value, start=1):
        _check(shape.member, item, f"{path}.{index}.member", found)


def _check_map(shape: MapShape, value: Any, path: str, found: list[Violation]) -> None:
    if not isinstance(value, Mapping):
        found.append(Violation(path, value, "Member must be a map"))
        return
    _check_length(shape, len(value), value, path, found)
    for key, item in value.items():
        _check(shape.key, key, f"{path}.key", found)
        _check(shape.value, item, f"{path}.{key}.value", found)


def _check_string(shape: Shape, value: Any, path: str, found: list[Violation]) -> None:
    if not isinstance(value, str):
        found.append(Violation(path, value, "Member must be a string"))
        return
    enum = shape.metadata.get("enum")
    if enum and value not in enum:
        found.append(Violation(path, value, f"Member must satisfy enum value set: [{', '.join(enum)}]"))
        return
    _check_length(shape, len(value), value, path, found)
    pattern = shape.metadata.get("pattern")
    if pattern and not _matches(pattern, value):
        found.append(Violation(path, value, f"Member must satisfy regular expression pattern: {pattern}"))


def _check_number(shape: Shape, value: Any, path: str, found: list[Violation]) -> None:
    integral = shape.type_name in ("integer", "long")
    if isinstance(value, bool) or not isinstance(value, int if integral else (int, float)):
        found.append(Violation(path, value, f"Member must be a{'n integer' if integral else ' number'}"))
        return
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and value < low:
        found.append(Violation(path, value, f"Member must have value greater than or equal to {low}"))
    if high is not None and value > high:
        found.append(Violation(path, value, f"Member must have value less than or equal to {high}"))


def _check_length(shape: Shape, length: int, value: Any, path: str, found: list[Violation]) -> None:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and length < low:
        found.append(Violation(path, value, f"Member must have length greater than or equal to {low}"))
    if high is not None and length > high:
        found.append(Violation(path, value, f"Member must have length less than or equal to {high}"))


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    """The compiled model pattern, or None when no engine here can compile it (then unchecked)."""
    engine: Any = _regex_engine or re
    try:
        return engine.compile(pattern)
    except Exception:  # a few SageMaker patterns use surrogate ranges no Python engine accepts
        return None


def _matches(pattern: str, value: str) -> bool:
    compiled = _compiled(pattern)
    # AWS anchors model patterns: the whole value must match, not a substring.
    return compiled is None or compiled.fullmatch(value) is not None


def _join(path: str, member: str, *, camel: bool = True) -> str:
    name = member[:1].lower() + member[1:] if camel else member
    return f"{path}.{name}" if path else name


def _render_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"'{value}'"
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return str(value)
