"""A provider's schemas as typed values, each block as the cty object type its values have, and
terraform's "proposed new state" (what PlanResourceChange is given) computed from them.

Pure: the client (`engines.provider.client`) turns GetSchema's protobuf answer into these once per
provider process. A nested block becomes an attribute of its parent's object type according to its
nesting mode, as terraform's `configschema.Block.ImpliedType` does: single and group as the object
itself, list, set and map as a list, set or map of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engines.provider.cty import CtyType, CtyValue, ListOf, MapOf, Object, SetOf

Nesting = Literal["single", "group", "list", "set", "map"]


@dataclass(frozen=True)
class Attribute:
    type: CtyType
    required: bool = False
    optional: bool = False
    computed: bool = False
    sensitive: bool = False
    write_only: bool = False


@dataclass(frozen=True)
class NestedBlock:
    nesting: Nesting
    block: Block
    min_items: int = 0
    max_items: int = 0

    def value_type(self) -> CtyType:
        """The type of this block's value in its parent's object, by nesting mode."""
        inner = self.block.object_type()
        if self.nesting == "list":
            return ListOf(inner)
        if self.nesting == "set":
            return SetOf(inner)
        if self.nesting == "map":
            return MapOf(inner)
        return inner


@dataclass(frozen=True)
class Block:
    attributes: Mapping[str, Attribute]
    blocks: Mapping[str, NestedBlock]

    def object_type(self) -> Object:
        """The cty type of this block's values (attributes and nested blocks by nesting mode)."""
        types: dict[str, CtyType] = {name: a.type for name, a in self.attributes.items()}
        for name, nested in self.blocks.items():
            types[name] = nested.value_type()
        return Object(types)

    def null_object(self) -> dict[str, CtyValue]:
        """An object of this block with every attribute null and every nested collection empty
        (terraform's value of an empty configuration block)."""
        value: dict[str, CtyValue] = dict.fromkeys(self.attributes)
        for name, nested in self.blocks.items():
            value[name] = {"single": None, "group": nested.block.null_object(), "list": [], "set": [],
                           "map": {}}[nested.nesting]
        return value


@dataclass(frozen=True)
class Schema:
    """A resource type's (or the provider's) schema: its state version and its top-level block."""

    version: int
    block: Block

    @property
    def type(self) -> Object:
        return self.block.object_type()


def proposed_new(block: Block, prior: CtyValue, config: CtyValue) -> CtyValue:
    """Terraform's proposed new state: the configuration, with each computed attribute the
    configuration leaves null taken from the prior state (terraform's `objchange.ProposedNew`; sets
    of blocks are taken from the configuration as they are, without matching their elements)."""
    if config is None:
        return None
    if not isinstance(config, dict):
        return config  # unknown
    prior_object = prior if isinstance(prior, dict) else block.null_object()
    result: dict[str, CtyValue] = {}
    for name, attribute in block.attributes.items():
        configured = config.get(name)
        result[name] = prior_object.get(name) if attribute.computed and configured is None else configured
    for name, nested in block.blocks.items():
        result[name] = _proposed_blocks(nested, prior_object.get(name), config.get(name))
    return result


def _proposed_blocks(nested: NestedBlock, prior: CtyValue, config: CtyValue) -> CtyValue:
    if nested.nesting in ("single", "group"):
        return proposed_new(nested.block, prior, config)
    if nested.nesting == "list" and isinstance(config, list):
        prior_list = prior if isinstance(prior, list) else []
        return [proposed_new(nested.block, prior_list[i] if i < len(prior_list) else None, c)
                for i, c in enumerate(config)]
    if nested.nesting == "map" and isinstance(config, dict):
        prior_map = prior if isinstance(prior, dict) else {}
        return {k: proposed_new(nested.block, prior_map.get(k), c) for k, c in config.items()}
    return config


def sensitive_mask(block: Block, value: CtyValue) -> object:
    """Which parts of `value` (an object of `block`) the schema marks sensitive, shaped as
    `terraform show -json`'s `before_sensitive` / `after_sensitive`: `true` at a sensitive
    attribute, the same nesting for blocks (a list or set of masks, a map of them), only the parts
    that hold something sensitive (`{}`: nothing). `engines.showplan` masks the values with it."""
    if not isinstance(value, dict):
        return False
    mask: dict[str, object] = {name: True for name, a in block.attributes.items()
                               if a.sensitive and value.get(name) is not None}
    for name, nested in block.blocks.items():
        inner = value.get(name)
        if nested.nesting in ("list", "set") and isinstance(inner, list):
            items = [sensitive_mask(nested.block, v) for v in inner]
            if any(items):
                mask[name] = items
        elif nested.nesting == "map" and isinstance(inner, dict):
            found = {k: m for k, v in inner.items() if (m := sensitive_mask(nested.block, v))}
            if found:
                mask[name] = found
        elif (found_one := sensitive_mask(nested.block, inner)):
            mask[name] = found_one
    return mask


def sensitive_paths(block: Block, value: CtyValue) -> list[list[dict[str, Any]]]:
    """The state file's `sensitive_attributes` for an object of `block`, as terraform writes them
    from the schema's marks: each sensitive attribute's path (`[{"type": "get_attr", "value":
    "secret"}]`), through list and map blocks by index; a set block that holds one is marked whole
    (a set's elements have no path). Sorted, so a state is written the same way every time."""
    paths: list[list[dict[str, Any]]] = []

    def visit(inner_block: Block, inner: CtyValue, prefix: list[dict[str, Any]]) -> None:
        if not isinstance(inner, dict):
            return
        paths.extend([*prefix, {"type": "get_attr", "value": name}]
                     for name, attribute in inner_block.attributes.items() if attribute.sensitive)
        for name, nested in inner_block.blocks.items():
            step, items = [*prefix, {"type": "get_attr", "value": name}], inner.get(name)
            if nested.nesting == "list" and isinstance(items, list):
                for i, item in enumerate(items):
                    visit(nested.block, item, [*step, {"type": "index", "value": {"value": i, "type": "number"}}])
            elif nested.nesting == "map" and isinstance(items, dict):
                for key, item in items.items():
                    visit(nested.block, item, [*step, {"type": "index", "value": {"value": key, "type": "string"}}])
            elif nested.nesting == "set":
                if isinstance(items, list) and any(sensitive_mask(nested.block, item) for item in items):
                    paths.append(step)
            else:
                visit(nested.block, items, step)

    visit(block, value, [])
    return sorted(paths, key=lambda path: json.dumps(path, sort_keys=True))
