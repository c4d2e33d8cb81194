"""cty values in msgpack as go-cty's `cty/msgpack` writes and reads them: the exact bytes of the
cases its source fixes (an unknown as fixext1 type 0, a dynamic value as [type JSON as bin, value],
object attributes in name order, numbers as int, float or text), and round trips."""

from __future__ import annotations

from decimal import Decimal

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.provider.cty import (
    BOOL,
    DYNAMIC,
    NUMBER,
    STRING,
    UNKNOWN,
    CtyError,
    CtyType,
    CtyValue,
    Dynamic,
    ListOf,
    MapOf,
    Object,
    SetOf,
    Tuple,
    Unknown,
    decode,
    encode,
    is_wholly_known,
    type_from_json,
    type_to_json,
)

ROLE = Object({"name": STRING, "max_session_duration": NUMBER, "tags": MapOf(STRING),
               "managed_policy_arns": SetOf(STRING), "force_detach_policies": BOOL,
               "inline_policy": SetOf(Object({"name": STRING, "policy": STRING}))})


@pytest.mark.parametrize(("value", "ty", "wire"), [
    pytest.param(UNKNOWN, STRING, b"\xd4\x00\x00", id="unknown-is-fixext1-type-0"),
    pytest.param(None, STRING, b"\xc0", id="null-is-nil"),
    pytest.param(3, NUMBER, b"\x03", id="whole-number-as-int"),
    pytest.param(3.0, NUMBER, b"\x03", id="whole-float-as-int"),
    pytest.param(0.5, NUMBER, b"\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00", id="exact-float-as-float64"),
    pytest.param(Decimal("0.1"), NUMBER, b"\xa30.1", id="inexact-as-text"),
    pytest.param(2**64, NUMBER, b"\xcb\x43\xf0\x00\x00\x00\x00\x00\x00", id="big-exact-int-as-float64"),
    pytest.param(2**64 + 1, NUMBER, b"\xb418446744073709551617", id="big-inexact-int-as-text"),
    pytest.param({"b": True, "a": "x"}, Object({"a": STRING, "b": BOOL}), b"\x82\xa1a\xa1x\xa1b\xc3",
                 id="object-attributes-in-name-order"),
    pytest.param(Dynamic(STRING, "hi"), DYNAMIC, b"\x92\xc4\x08\"string\"\xa2hi", id="dynamic-type-as-bin"),
    pytest.param(Dynamic(ListOf(NUMBER), [1]), DYNAMIC, b"\x92\xc4\x11[\"list\",\"number\"]\x91\x01",
                 id="dynamic-list-type-json"),
])
def test_exact_bytes(value: CtyValue, ty: CtyType, wire: bytes) -> None:
    assert encode(value, ty) == wire
    assert encode(decode(wire, ty), ty) == wire


def test_an_unknown_nested_in_an_object() -> None:
    value: CtyValue = {"name": "lead", "max_session_duration": 3600, "tags": {"Project": "nlp"},
                       "managed_policy_arns": UNKNOWN, "force_detach_policies": None,
                       "inline_policy": [{"name": "p", "policy": UNKNOWN}]}
    back = decode(encode(value, ROLE), ROLE)
    assert back == value
    assert not is_wholly_known(back)
    assert is_wholly_known({**value, "managed_policy_arns": [], "inline_policy": []})  # type: ignore[dict-item]


def test_an_object_left_short_sends_nulls() -> None:
    assert decode(encode({"name": "lead"}, ROLE), ROLE) == {
        "name": "lead", "max_session_duration": None, "tags": None, "managed_policy_arns": None,
        "force_detach_policies": None, "inline_policy": None}


def test_a_refined_unknown_is_kept_as_sent() -> None:
    refined = msgpack.packb(msgpack.ExtType(12, b"\x81\x01\xc2"))  # {nullness: false}: "not null"
    value = decode(refined, STRING)
    assert value == Unknown(b"\x81\x01\xc2")
    assert encode(value, STRING) == refined


def test_a_dynamic_value_round_trips_with_its_type() -> None:
    ty = Object({"settings": DYNAMIC})
    inner = Object({"a": NUMBER, "b": Tuple((STRING, BOOL))})
    value: CtyValue = {"settings": Dynamic(inner, {"a": 1, "b": ["x", True]})}
    assert decode(encode(value, ty), ty) == value
    assert decode(encode({"settings": None}, ty), ty) == {"settings": None}
    assert decode(encode({"settings": UNKNOWN}, ty), ty) == {"settings": UNKNOWN}


@pytest.mark.parametrize(("value", "ty", "message"), [
    pytest.param("1", NUMBER, "str is not a \"number\"", id="string-for-number"),
    pytest.param(True, NUMBER, "bool is not a \"number\"", id="bool-for-number"),
    pytest.param({"nope": 1}, Object({"a": STRING}), "no attribute nope", id="extra-attribute"),
    pytest.param([1, "x"], ListOf(NUMBER), "[1]: str is not", id="path-in-message"),
    pytest.param("x", DYNAMIC, "needs its type", id="dynamic-without-type"),
])
def test_a_value_that_does_not_fit_is_refused(value: CtyValue, ty: CtyType, message: str) -> None:
    with pytest.raises(CtyError, match=message.replace("[", r"\[").replace("]", r"\]")):
        encode(value, ty)


@pytest.mark.parametrize("raw", [
    "string", ["list", "number"], ["set", ["map", "bool"]], ["object", {"a": "string", "b": ["list", "dynamic"]}],
    ["tuple", ["string", "number"]], ["object", {"a": "string"}, ["a"]],
])
def test_type_json_round_trips(raw: object) -> None:
    assert type_to_json(type_from_json(raw)) == raw


def _nested(depth: int) -> st.SearchStrategy[CtyValue]:
    leaf: st.SearchStrategy[CtyValue] = st.one_of(st.none(), st.just(UNKNOWN), st.text(max_size=5))
    return leaf if depth == 0 else st.one_of(st.none(), st.just(UNKNOWN), st.lists(_nested(depth - 1), max_size=3))


@given(st.integers(min_value=0, max_value=3).flatmap(lambda d: st.tuples(st.just(d), _nested(d))))
def test_nested_lists_round_trip(case: tuple[int, CtyValue]) -> None:
    depth, value = case
    ty: CtyType = STRING
    for _ in range(depth):
        ty = ListOf(ty)
    assert decode(encode(value, ty), ty) == value


@given(st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False)))
def test_numbers_round_trip_exactly(number: int | float) -> None:
    back = decode(encode(number, NUMBER), NUMBER)
    assert isinstance(back, int | float | Decimal) and Decimal(back) == Decimal(number)
