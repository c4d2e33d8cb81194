"""cty values as a Terraform provider sends and reads them: msgpack, decoded with the schema's type.

Terraform's plugin protocol carries every resource value as a `DynamicValue` whose msgpack bytes
mean nothing without the type (go-cty's `cty/msgpack`, which both terraform and the providers use):
an object is a map with its attributes in name order, lists, sets and tuples are arrays, an unknown
value is a msgpack extension (type 0 with one zero byte; type 12 carries "refinements", such as
"not null", which are kept as bytes here so a value read from a provider is sent back unchanged), a
null is nil, and a value whose type is `dynamic` is the pair [type as JSON (msgpack bin), value].
A number is an int when it is a whole number that fits 64 bits, else a float64 when that is exact,
else its decimal text. Pure: no I/O. Python values: None, bool, int / float / Decimal, str, list
(lists, sets and tuples), dict (maps and objects), `Unknown`, `Dynamic`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, TypeAlias

import msgpack

UNKNOWN_EXT = 0  # a wholly unknown value
REFINED_UNKNOWN_EXT = 12  # an unknown value with refinements in the payload (go-cty 1.13 on)
_INT64 = (-(2**63), 2**63 - 1)


class CtyError(ValueError):
    """A value that does not fit its type, or bytes that are not a value of it."""


@dataclass(frozen=True)
class Primitive:
    name: Literal["string", "number", "bool", "dynamic"]


@dataclass(frozen=True)
class ListOf:
    element: CtyType


@dataclass(frozen=True)
class SetOf:
    element: CtyType


@dataclass(frozen=True)
class MapOf:
    element: CtyType


@dataclass(frozen=True)
class Object:
    attributes: Mapping[str, CtyType]
    optional: frozenset[str] = field(default_factory=frozenset)  # type constraints only


@dataclass(frozen=True)
class Tuple:
    elements: tuple[CtyType, ...]


CtyType: TypeAlias = Primitive | ListOf | SetOf | MapOf | Object | Tuple
STRING, NUMBER, BOOL, DYNAMIC = Primitive("string"), Primitive("number"), Primitive("bool"), Primitive("dynamic")


@dataclass(frozen=True)
class Unknown:
    """A value not known until apply; `refinements` is go-cty's payload, kept as sent."""

    refinements: bytes = b""


UNKNOWN = Unknown()


@dataclass(frozen=True)
class Dynamic:
    """A value where the schema says `dynamic`: its own type travels with it."""

    type: CtyType
    value: CtyValue


CtyValue: TypeAlias = (bool | int | float | Decimal | str | list["CtyValue"] | dict[str, "CtyValue"]
                       | Unknown | Dynamic | None)

_COLLECTIONS: dict[str, type[ListOf] | type[SetOf] | type[MapOf]] = {"list": ListOf, "set": SetOf, "map": MapOf}


def type_from_json(raw: Any) -> CtyType:
    """A type from its JSON form (`"string"`, `["list", T]`, `["object", {...}]`, ...)."""
    if raw in ("string", "number", "bool", "dynamic"):
        return Primitive(raw)
    if isinstance(raw, list) and len(raw) >= 2 and isinstance(raw[0], str):
        kind = raw[0]
        if kind in _COLLECTIONS and len(raw) == 2:
            return _COLLECTIONS[kind](type_from_json(raw[1]))
        if kind == "object" and isinstance(raw[1], dict) and len(raw) in (2, 3):
            optional = frozenset(raw[2]) if len(raw) == 3 else frozenset()
            return Object({k: type_from_json(v) for k, v in raw[1].items()}, optional)
        if kind == "tuple" and isinstance(raw[1], list) and len(raw) == 2:
            return Tuple(tuple(type_from_json(t) for t in raw[1]))
    raise CtyError(f"not a cty type: {raw!r}")


def type_to_json(ty: CtyType) -> Any:
    match ty:
        case Primitive(name):
            return name
        case ListOf(element):
            return ["list", type_to_json(element)]
        case SetOf(element):
            return ["set", type_to_json(element)]
        case MapOf(element):
            return ["map", type_to_json(element)]
        case Object(attributes, optional):
            body = {k: type_to_json(v) for k, v in sorted(attributes.items())}
            return ["object", body, sorted(optional)] if optional else ["object", body]
        case Tuple(elements):
            return ["tuple", [type_to_json(t) for t in elements]]


def _type_bytes(ty: CtyType) -> bytes:
    """As go-cty's `Type.MarshalJSON` writes it (compact, object keys sorted)."""
    return json.dumps(type_to_json(ty), separators=(",", ":"), sort_keys=True).encode()


# --- encoding ---------------------------------------------------------------------------------

def encode(value: CtyValue, ty: CtyType) -> bytes:
    """The msgpack bytes of `value` read as `ty` (what a provider's `DynamicValue.msgpack` holds)."""
    return msgpack.packb(_to_wire(value, ty, ()), use_bin_type=True)  # type: ignore[no-any-return]


def _unknown_wire(value: Unknown) -> msgpack.ExtType:
    if value.refinements:
        return msgpack.ExtType(REFINED_UNKNOWN_EXT, value.refinements)
    return msgpack.ExtType(UNKNOWN_EXT, b"\x00")


def _to_wire(value: CtyValue, ty: CtyType, path: tuple[str | int, ...]) -> Any:
    if ty == DYNAMIC:
        if isinstance(value, Dynamic):
            return [_type_bytes(value.type), _to_wire(value.value, value.type, path)]
        if value is None:
            return None
        if isinstance(value, Unknown):
            return _unknown_wire(value)
        raise CtyError(f"{_where(path)}: a dynamic value needs its type (Dynamic(type, value))")
    if isinstance(value, Unknown):
        return _unknown_wire(value)
    if value is None:
        return None
    match ty:
        case Primitive("string"):
            if isinstance(value, str):
                return value
        case Primitive("bool"):
            if isinstance(value, bool):
                return value
        case Primitive("number"):
            if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
                return _number_wire(value)
        case ListOf(element) | SetOf(element):
            if isinstance(value, list):
                return [_to_wire(v, element, (*path, i)) for i, v in enumerate(value)]
        case MapOf(element):
            if isinstance(value, dict):
                return {k: _to_wire(v, element, (*path, k)) for k, v in value.items()}
        case Object(attributes):
            if isinstance(value, dict):
                extra = sorted(set(value) - set(attributes))
                if extra:
                    raise CtyError(f"{_where(path)}: no attribute {', '.join(extra)} in this object type")
                return {k: _to_wire(value.get(k), attributes[k], (*path, k)) for k in sorted(attributes)}
        case Tuple(elements):
            if isinstance(value, list) and len(value) == len(elements):
                return [_to_wire(v, t, (*path, i)) for i, (v, t) in enumerate(zip(value, elements, strict=True))]
    raise CtyError(f"{_where(path)}: {type(value).__name__} is not a {json.dumps(type_to_json(ty))}")


def _number_wire(value: int | float | Decimal) -> int | float | str:
    if isinstance(value, float) and math.isinf(value):
        return value
    if isinstance(value, float) and math.isnan(value):
        raise CtyError("NaN is not a cty number")
    exact = Decimal(value)
    if exact == exact.to_integral_value() and _INT64[0] <= exact <= _INT64[1]:
        return int(exact)
    as_float = float(exact)
    if Decimal(as_float) == exact:
        return as_float
    return format(exact, "f")


def _where(path: Sequence[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "the value"


# --- decoding ---------------------------------------------------------------------------------

def decode(data: bytes, ty: CtyType) -> CtyValue:
    """The value `data` (a provider's msgpack) holds, read as `ty`."""
    try:
        wire = msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=False, ext_hook=_ext)
    except (ValueError, msgpack.UnpackException) as err:
        raise CtyError(f"not msgpack: {err}") from err
    return _from_wire(wire, ty, ())


def _ext(code: int, payload: bytes) -> Unknown:
    # go-cty reads every extension as an unknown value; only type 12 carries refinements.
    return Unknown(payload if code == REFINED_UNKNOWN_EXT and len(payload) > 1 else b"")


def _from_wire(wire: Any, ty: CtyType, path: tuple[str | int, ...]) -> CtyValue:
    if isinstance(wire, Unknown):
        return wire
    if ty == DYNAMIC:
        if wire is None:
            return None
        if isinstance(wire, list) and len(wire) == 2 and isinstance(wire[0], bytes | str):
            inner = type_from_json(json.loads(wire[0]))
            return Dynamic(inner, _from_wire(wire[1], inner, path))
        raise CtyError(f"{_where(path)}: a dynamic value is a [type, value] pair")
    if wire is None:
        return None
    match ty:
        case Primitive("string"):
            if isinstance(wire, str):
                return wire
        case Primitive("bool"):
            if isinstance(wire, bool):
                return wire
        case Primitive("number"):
            if isinstance(wire, int | float) and not isinstance(wire, bool):
                return wire
            if isinstance(wire, str):
                try:
                    return Decimal(wire)
                except ArithmeticError as err:
                    raise CtyError(f"{_where(path)}: {wire!r} is not a number") from err
        case ListOf(element) | SetOf(element):
            if isinstance(wire, list):
                return [_from_wire(v, element, (*path, i)) for i, v in enumerate(wire)]
        case MapOf(element):
            if isinstance(wire, dict):
                return {str(k): _from_wire(v, element, (*path, str(k))) for k, v in wire.items()}
        case Object(attributes):
            if isinstance(wire, dict):
                extra = sorted(str(k) for k in set(wire) - set(attributes))
                if extra:
                    raise CtyError(f"{_where(path)}: unsupported attribute {', '.join(extra)}")
                return {k: _from_wire(wire.get(k), attributes[k], (*path, k)) for k in sorted(attributes)}
        case Tuple(elements):
            if isinstance(wire, list) and len(wire) == len(elements):
                return [_from_wire(v, t, (*path, i)) for i, (v, t) in enumerate(zip(wire, elements, strict=True))]
    raise CtyError(f"{_where(path)}: {type(wire).__name__} is not a {json.dumps(type_to_json(ty))}")


def is_wholly_known(value: CtyValue) -> bool:
    """No unknown anywhere inside (what apply must return)."""
    if isinstance(value, Unknown):
        return False
    if isinstance(value, Dynamic):
        return is_wholly_known(value.value)
    if isinstance(value, list):
        return all(is_wholly_known(v) for v in value)
    if isinstance(value, dict):
        return all(is_wholly_known(v) for v in value.values())
    return True
