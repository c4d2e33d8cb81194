"""A provider block schema as cty types (nested blocks by nesting mode) and terraform's proposed
new state (objchange.ProposedNew): computed attributes the configuration leaves null keep the
prior value, everything configured is taken as configured."""

from __future__ import annotations

import json

from engines.provider.cty import BOOL, NUMBER, STRING, UNKNOWN, CtyValue, ListOf, MapOf, Object, SetOf
from engines.provider.schema import Attribute, Block, NestedBlock, proposed_new, sensitive_mask, sensitive_paths

INNER = Block({"name": Attribute(STRING, required=True), "id": Attribute(STRING, computed=True)}, {})
BLOCK = Block(
    {"name": Attribute(STRING, required=True), "arn": Attribute(STRING, computed=True),
     "path": Attribute(STRING, optional=True, computed=True), "max": Attribute(NUMBER, optional=True),
     "tags": Attribute(MapOf(STRING), optional=True)},
    {"rule": NestedBlock("list", INNER), "policy": NestedBlock("set", INNER), "timeouts": NestedBlock("single", INNER),
     "settings": NestedBlock("group", Block({"on": Attribute(BOOL, optional=True)}, {}))})


def test_the_object_type_nests_blocks_by_mode() -> None:
    inner = Object({"name": STRING, "id": STRING})
    assert BLOCK.object_type() == Object({
        "name": STRING, "arn": STRING, "path": STRING, "max": NUMBER, "tags": MapOf(STRING),
        "rule": ListOf(inner), "policy": SetOf(inner), "timeouts": inner, "settings": Object({"on": BOOL})})


def test_create_proposes_the_configuration_with_computed_nulls() -> None:
    config: dict[str, CtyValue] = {**BLOCK.null_object(), "name": "r", "rule": [{"name": "a", "id": None}]}
    proposed = proposed_new(BLOCK, None, config)
    assert proposed == config
    assert BLOCK.null_object()["settings"] == {"on": None} and BLOCK.null_object()["rule"] == []


def test_update_keeps_computed_values_the_configuration_leaves_out() -> None:
    prior: dict[str, CtyValue] = {**BLOCK.null_object(), "name": "r", "arn": "arn:1", "path": "/", "max": 3600,
             "rule": [{"name": "a", "id": "id-a"}]}
    config: dict[str, CtyValue] = {**BLOCK.null_object(), "name": "r", "tags": {"k": "v"},
                                   "rule": [{"name": "a", "id": None}, {"name": "b", "id": None}]}
    proposed = proposed_new(BLOCK, prior, config)
    assert isinstance(proposed, dict)
    assert (proposed["arn"], proposed["path"]) == ("arn:1", "/")  # computed: kept
    assert proposed["max"] is None  # optional, not computed: the configuration removed it
    assert proposed["tags"] == {"k": "v"}
    assert proposed["rule"] == [{"name": "a", "id": "id-a"}, {"name": "b", "id": None}]


def test_deleting_proposes_null_and_an_unknown_configuration_stays_unknown() -> None:
    assert proposed_new(BLOCK, {"name": "r"}, None) is None
    assert proposed_new(BLOCK, None, UNKNOWN) == UNKNOWN


def test_the_sensitive_mask_marks_sensitive_leaves_true_and_omits_the_rest() -> None:
    """terraform's JSON output format: `after_sensitive` has the structure of `after`, "with all
    sensitive leaf values replaced with true, and all non-sensitive leaf values omitted"; a null
    value holds nothing sensitive."""
    credential = Block({"user": Attribute(STRING, required=True), "secret": Attribute(STRING, sensitive=True)}, {})
    login = Block({"name": Attribute(STRING, optional=True), "password": Attribute(STRING, sensitive=True)},
                  {"credential": NestedBlock("list", credential), "by_env": NestedBlock("map", credential),
                   "primary": NestedBlock("single", credential)})
    value = {"name": "n", "password": "p",
             "credential": [{"user": "a", "secret": "s"}, {"user": "b", "secret": None}],
             "by_env": {"dev": {"user": "d", "secret": None}, "prod": {"user": "p", "secret": "x"}},
             "primary": {"user": "u", "secret": "y"}}
    assert sensitive_mask(login, value) == {"password": True, "credential": [{"secret": True}, {}],
                                            "by_env": {"prod": {"secret": True}}, "primary": {"secret": True}}
    assert sensitive_mask(login, {"name": "n", "password": None, "credential": [], "by_env": {},
                                  "primary": None}) == {}
    assert sensitive_mask(login, None) is False


def test_the_sensitive_paths_are_cty_paths_through_list_and_map_blocks_and_a_set_whole() -> None:
    """The state file's `sensitive_attributes`: one cty path per sensitive attribute (terraform's
    JSON encoding of cty.Path: `get_attr` steps, `index` steps with a typed key), sorted."""
    credential = Block({"user": Attribute(STRING, required=True), "secret": Attribute(STRING, sensitive=True)}, {})
    login = Block({"name": Attribute(STRING, optional=True), "password": Attribute(STRING, sensitive=True)},
                  {"credential": NestedBlock("list", credential), "by_env": NestedBlock("map", credential),
                   "keys": NestedBlock("set", credential), "primary": NestedBlock("single", credential)})
    value = {"name": "n", "password": None, "credential": [{"user": "a", "secret": "s"}],
             "by_env": {"prod": {"user": "p", "secret": "x"}}, "keys": [{"user": "k", "secret": "z"}],
             "primary": None}

    def attr(name: str) -> dict[str, object]:
        return {"type": "get_attr", "value": name}

    assert sensitive_paths(login, value) == sorted([
        [attr("by_env"), {"type": "index", "value": {"value": "prod", "type": "string"}}, attr("secret")],
        [attr("credential"), {"type": "index", "value": {"value": 0, "type": "number"}}, attr("secret")],
        [attr("keys")],
        [attr("password")],
    ], key=lambda p: json.dumps(p, sort_keys=True))
