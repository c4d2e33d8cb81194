"""Random single-field edits of a governance tree, for property tests: every scalar leaf of every
YAML file (numbers moved by one, booleans flipped, strings changed, optional keys dropped)."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

Leaf = tuple[str | int, ...]
Edit = tuple[str, Leaf, str]  # file, path to a leaf, kind (drop | flip | plus | minus | suffix)


def leaves(value: Any, path: Leaf = ()) -> Iterator[tuple[Leaf, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def single_field_edits(files: Mapping[str, bytes]) -> list[Edit]:
    found = []
    for name, raw in sorted(files.items()):
        if not name.endswith(".yaml"):
            continue
        for path, value in leaves(yaml.safe_load(raw)):
            kinds = ["drop"]
            kinds += ["flip"] if isinstance(value, bool) else ["plus", "minus"] if isinstance(value, int) else []
            kinds += ["suffix"] if isinstance(value, str) else []
            found += [(name, path, kind) for kind in kinds]
    return found


def edited(files: Mapping[str, bytes], name: str, path: Leaf, kind: str) -> dict[str, bytes]:
    doc = copy.deepcopy(yaml.safe_load(files[name]))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if kind == "drop":
        del parent[last]
    elif kind == "flip":
        parent[last] = not parent[last]
    elif kind in ("plus", "minus"):
        parent[last] += 1 if kind == "plus" else -1
    else:
        parent[last] = f"{parent[last]}x"
    return {**files, name: yaml.safe_dump(doc, sort_keys=False).encode()}
