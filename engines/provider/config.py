"""A stack's Terraform JSON configuration (what `engines.terraform.translate` writes) as the
provider's cty values, so the provider engine plans from exactly the configuration the terraform
engine would hand to terraform (issue 34).

Terraform's JSON syntax, in the subset hypergov writes and nothing more: literal values; a string
that is one whole reference, `${aws_iam_role.lead.arn}` or `${data.aws_iam_roles.x.arns}`, or
`one()` of one (`${one(data.aws_iam_roles.x.arns)}`); a nested block as an object or a list of
objects; the meta-arguments `depends_on` and `provider`. Any other expression is refused by name
(`UnsupportedExpression`) rather than passed on as a literal string. Values are converted to the
schema's types as terraform converts them (a number or bool where a string is wanted, a numeric
string where a number is), a missing attribute is null and a missing nested block empty; a
reference to what is not known yet (planned, not applied) is unknown.

Pure: references are resolved through a `Lookup` the caller gives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from engines.provider.cty import (
    UNKNOWN,
    CtyType,
    CtyValue,
    Dynamic,
    ListOf,
    MapOf,
    Object,
    Primitive,
    SetOf,
    Tuple,
    Unknown,
)
from engines.provider.schema import Block

META_ARGUMENTS = frozenset({"depends_on", "provider", "lifecycle", "count", "for_each", "provisioner", "connection"})
_REFERENCE = re.compile(r"\$\{(?P<one>one\()?(?P<target>(?:data\.)?[a-z0-9_]+\.[A-Za-z0-9_-]+)"
                        r"(?P<path>(?:\.[A-Za-z0-9_]+)+)(?(one)\))\}")


class ConfigError(ValueError):
    """A configuration the provider engine cannot evaluate: which resource, which attribute, why."""


class UnsupportedExpression(ConfigError):
    """An expression beyond the subset hypergov writes (see the module's docstring)."""


@dataclass(frozen=True)
class Reference:
    target: str  # `aws_iam_role.lead`, `data.aws_iam_roles.x`
    path: tuple[str, ...]  # the attribute path into the target's value
    one: bool = False  # wrapped in `one()`: a list of at most one element, as that element or null


Lookup = Callable[[Reference], CtyValue]


def reference_of(text: str, where: str = "") -> Reference | None:
    """The reference a string is (None for a literal string); any other `${` is refused."""
    found = _REFERENCE.fullmatch(text)
    if found:
        return Reference(found["target"], tuple(found["path"].split(".")[1:]), bool(found["one"]))
    if "${" in text or "%{" in text:
        raise UnsupportedExpression(f"{where}: {text!r} is an expression the provider engine does not evaluate "
                                    "(only a whole reference, or one() of one)")
    return None


def references(raw: Any) -> set[str]:
    """The targets referred to anywhere in a raw value."""
    if isinstance(raw, str):
        found = reference_of(raw)
        return {found.target} if found else set()
    if isinstance(raw, Mapping):
        return set().union(*(references(v) for v in raw.values())) if raw else set()
    if isinstance(raw, list):
        return set().union(*(references(v) for v in raw)) if raw else set()
    return set()


@dataclass(frozen=True)
class ResourceConfig:
    """One `resource` or `data` block of the configuration."""

    mode: Literal["managed", "data"]
    type: str
    name: str
    body: Mapping[str, Any]  # without the meta-arguments
    provider: str | None = None  # `aws.<alias>`; None: the default provider
    depends_on: tuple[str, ...] = ()

    @property
    def address(self) -> str:
        return f"{'data.' if self.mode == 'data' else ''}{self.type}.{self.name}"

    @property
    def needs(self) -> set[str]:
        """The addresses this block waits for: what it refers to, and its `depends_on`."""
        return references(dict(self.body)) | set(self.depends_on)


def resources_of(config: Mapping[str, Any]) -> list[ResourceConfig]:
    """Every resource and data block of a configuration, in address order."""
    found = []
    for mode, key in (("managed", "resource"), ("data", "data")):
        for type_name, blocks in sorted((config.get(key) or {}).items()):
            for name, body in sorted(blocks.items()):
                found.append(ResourceConfig(
                    mode, type_name, name, {k: v for k, v in body.items() if k not in META_ARGUMENTS},  # type: ignore[arg-type]
                    provider=body.get("provider"), depends_on=tuple(body.get("depends_on") or ())))
    return found


def dependency_order(resources: Iterable[ResourceConfig]) -> list[ResourceConfig]:
    """The blocks so that each comes after everything it needs (address order among equals); a
    cycle, or a reference to no block of the configuration, is a `ConfigError`."""
    by_address = {r.address: r for r in resources}
    waiting = {a: set(r.needs) for a, r in by_address.items()}
    for address, needs in waiting.items():
        missing = sorted(needs - by_address.keys())
        if missing:
            raise ConfigError(f"{address}: refers to {', '.join(missing)}, which the configuration does not declare")
    ordered: list[ResourceConfig] = []
    while waiting:
        ready = sorted(a for a, needs in waiting.items() if not needs)
        if not ready:
            raise ConfigError(f"a dependency cycle among {', '.join(sorted(waiting))}")
        for address in ready:
            ordered.append(by_address[address])
            del waiting[address]
        for needs in waiting.values():
            needs.difference_update(ready)
    return ordered


def block_value(block: Block, body: Mapping[str, Any], lookup: Lookup, where: str) -> dict[str, CtyValue]:
    """A block's configuration as the object of its schema: every attribute (null when not
    given), every nested block (empty when not given); a key the schema does not have is refused."""
    unknown = sorted(set(body) - set(block.attributes) - set(block.blocks))
    if unknown:
        raise ConfigError(f"{where}: {', '.join(unknown)} not in the provider's schema")
    value: dict[str, CtyValue] = {}
    for name, attribute in block.attributes.items():
        value[name] = value_of(body.get(name), attribute.type, lookup, f"{where}.{name}")
    for name, nested in block.blocks.items():
        raw = body.get(name)
        items = [] if raw is None else raw if isinstance(raw, list) else [raw]
        objects = [block_value(nested.block, item, lookup, f"{where}.{name}") for item in items]
        if nested.nesting in ("single", "group"):
            if len(objects) > 1:
                raise ConfigError(f"{where}.{name}: one block allowed, {len(objects)} given")
            value[name] = objects[0] if objects else (nested.block.null_object() if nested.nesting == "group" else None)
        elif nested.nesting == "map":
            raise UnsupportedExpression(f"{where}.{name}: a map of blocks, which hypergov does not write")
        else:
            value[name] = list(objects)
    return value


def value_of(raw: Any, ty: CtyType, lookup: Lookup, where: str) -> CtyValue:
    """A raw JSON value as a value of `ty`, references resolved and primitives converted."""
    if isinstance(raw, str):
        found = reference_of(raw, where)
        if found is not None:
            return _referred(found, lookup, where)
    if raw is None:
        return None
    if isinstance(ty, Primitive):
        return _primitive(raw, ty, where)
    if isinstance(ty, ListOf | SetOf):
        if not isinstance(raw, list):
            raise ConfigError(f"{where}: a list is wanted, not {type(raw).__name__}")
        return [value_of(v, ty.element, lookup, f"{where}[{i}]") for i, v in enumerate(raw)]
    if isinstance(ty, MapOf):
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: a map is wanted, not {type(raw).__name__}")
        return {k: value_of(v, ty.element, lookup, f"{where}.{k}") for k, v in raw.items()}
    if isinstance(ty, Tuple):
        if not isinstance(raw, list) or len(raw) != len(ty.elements):
            raise ConfigError(f"{where}: a tuple of {len(ty.elements)} is wanted")
        return [value_of(v, t, lookup, f"{where}[{i}]") for i, (v, t) in enumerate(zip(raw, ty.elements, strict=True))]
    assert isinstance(ty, Object)
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: an object is wanted, not {type(raw).__name__}")
    extra = sorted(set(raw) - set(ty.attributes))
    if extra:
        raise ConfigError(f"{where}: {', '.join(extra)} not attributes of this object")
    return {k: value_of(raw.get(k), t, lookup, f"{where}.{k}") for k, t in ty.attributes.items()}


def _referred(found: Reference, lookup: Lookup, where: str) -> CtyValue:
    value = lookup(found)
    if not found.one or isinstance(value, Unknown) or value is None:
        return value
    if not isinstance(value, list) or len(value) > 1:
        raise ConfigError(f"{where}: one() of {found.target}.{'.'.join(found.path)}, which holds "
                          f"{len(value) if isinstance(value, list) else 'no list'} elements")
    return value[0] if value else None


def _primitive(raw: Any, ty: Primitive, where: str) -> CtyValue:
    """Terraform's conversions between primitives (cty's `convert`): what a JSON literal becomes."""
    if ty.name == "dynamic":
        return Dynamic(_implied_type(raw), raw)
    if ty.name == "string":
        if isinstance(raw, bool):
            return "true" if raw else "false"
        if isinstance(raw, int | float | Decimal):
            return str(raw)
        if isinstance(raw, str):
            return raw
    elif ty.name == "number":
        if isinstance(raw, int | float | Decimal) and not isinstance(raw, bool):
            number: int | float | Decimal = raw
            return number
        if isinstance(raw, str):
            try:
                parsed = Decimal(raw)
            except InvalidOperation:
                pass
            else:
                return int(parsed) if parsed == parsed.to_integral_value() else parsed
    elif ty.name == "bool":
        if isinstance(raw, bool):
            return bool(raw)
        if raw in ("true", "false"):
            return bool(raw == "true")
    raise ConfigError(f"{where}: {raw!r} is not a {ty.name}")


def _implied_type(raw: Any) -> CtyType:
    if isinstance(raw, bool):
        return Primitive("bool")
    if isinstance(raw, int | float | Decimal):
        return Primitive("number")
    if isinstance(raw, str):
        return Primitive("string")
    if isinstance(raw, list):
        return Tuple(tuple(_implied_type(v) for v in raw))
    if isinstance(raw, Mapping):
        return Object({k: _implied_type(v) for k, v in raw.items()})
    raise ConfigError(f"{raw!r}: no type is implied by it")


def unknown_references(reference: Reference) -> CtyValue:
    """A `Lookup` for validation before anything is planned: every reference unknown."""
    return UNKNOWN
