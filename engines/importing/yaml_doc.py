"""A YAML document with a comment per value (where it came from), and its text.

PyYAML (the one YAML library hypergov depends on) writes no comments, so the few shapes a tree
file holds (mappings, lists, strings, numbers, booleans) are written here, block style, with a
value's comment after it. A string is written plain only when YAML reads it back as the same
string, else double-quoted (JSON's escaping is valid YAML); the tests read every written file
back with hypergov's own loader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

Path = tuple[str | int, ...]
FLOW_WIDTH = 100  # a list of scalars longer than this is written one item a line
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/@+=-]*( [A-Za-z0-9_.:/@+=()-]+)*")


@dataclass(frozen=True)
class Document:
    """One file of the tree: its path (relative to the tree), a header, the data, and comments by path."""

    path: str
    data: Mapping[str, Any]
    comments: Mapping[Path, str] = field(default_factory=dict)
    header: str = ""


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text and ": " not in text:
        return text
    return json.dumps(text)


def _comment(comments: Mapping[Path, str], path: Path) -> str:
    found = comments.get(path)
    return f"  # {found}" if found else ""


def _flow(values: Sequence[Any]) -> str | None:
    if all(not isinstance(v, Mapping | list | tuple) for v in values):
        return "[" + ", ".join(scalar(v) for v in values) + "]"
    return None


def _lines(value: Any, path: Path, indent: int, comments: Mapping[Path, str]) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            here = (*path, key)
            out += _entry(f"{pad}{scalar(key)}:", item, here, indent, comments)
        return out
    for index, item in enumerate(value):
        here = (*path, index)
        if isinstance(item, Mapping) and item:
            inner = _lines(item, here, indent + 2, comments)
            first, note = inner[0].lstrip(), _comment(comments, here)
            joined = note if "  # " not in first else note.replace("  #", ";", 1)
            out.append(f"{pad}- {first}{joined}")
            out += inner[1:]
        else:
            out += _entry(f"{pad}-", item, here, indent, comments)
    return out


def _entry(head: str, item: Any, here: Path, indent: int, comments: Mapping[Path, str]) -> list[str]:
    note = _comment(comments, here)
    if isinstance(item, Mapping):
        if not item:
            return [f"{head} {{}}{note}"]
        return [f"{head}{note}", *_lines(item, here, indent + 2, comments)]
    if isinstance(item, list | tuple):
        flow = _flow(item)
        if flow is not None and len(head) + len(flow) <= FLOW_WIDTH and not any(
                (*here, i) in comments for i in range(len(item))):
            return [f"{head} {flow}{note}"]
        return [f"{head}{note}", *_lines(item, here, indent + 2, comments)]
    return [f"{head} {scalar(item)}{note}"]


def render(document: Document) -> str:
    """The file's text: the header as comment lines, then the data with each value's comment."""
    head = [f"# {line}".rstrip() for line in document.header.splitlines()]
    return "\n".join([*head, *_lines(document.data, (), 0, document.comments)]) + "\n"
