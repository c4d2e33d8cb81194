"""YAML documents with the position of every key and value.

PyYAML's composer (libyaml when available) gives nodes with marks; we build plain Python values
from those nodes ourselves so that we can (a) remember where every path of the document starts,
(b) reject duplicate keys, which YAML loaders silently resolve to the last one, and (c) bound
alias expansion, so that a hostile or careless file cannot blow up memory. Every failure becomes a
`Problem`; nothing in here raises for bad input.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

import yaml

from hypergov.problems import Problem, RuleId, SourcePos

try:  # libyaml makes composing 5-10x faster; the pure-Python loader gives the same nodes.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

Path = tuple[str | int, ...]

MAX_FILE_BYTES = 1_000_000
MAX_NODES = 200_000
_MERGE_TAG = "tag:yaml.org,2002:merge"
_SCALAR_CONSTRUCTOR = yaml.constructor.SafeConstructor()


@dataclass
class Document:
    """One parsed YAML file: its value and where each path of it stands in the file."""

    file: str
    data: Any
    # (line, column), 1-based; SourcePos objects are only made for the few that get reported.
    key_pos: dict[Path, tuple[int, int]] = field(default_factory=dict)
    value_pos: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def pos(self, path: Path, *, key: bool = False) -> SourcePos:
        """The position of `path`, or of its closest ancestor that exists in the file."""
        table = self.key_pos if key else self.value_pos
        probe = tuple(path)
        while probe:
            found = table.get(probe) or self.value_pos.get(probe)
            if found is not None:
                return SourcePos(self.file, *found)
            probe = probe[:-1]
        return SourcePos(self.file, *self.value_pos.get((), (1, 1)))


class _TooLarge(Exception):
    pass


@dataclass
class _Builder:
    file: str
    doc: Document
    problems: list[Problem]
    nodes: int = 0

    @staticmethod
    def mark(node: yaml.Node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def problem(self, node: yaml.Node, rule: str, message: str, hint: str) -> None:
        self.problems.append(Problem(SourcePos(self.file, *self.mark(node)), RuleId(rule), message, hint))

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooLarge
        self.doc.value_pos.setdefault(path, self.mark(node))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        return self._scalar(node)

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self.problem(key_node, "SYN006", "YAML merge keys ('<<') are not supported",
                             "write the merged keys out explicitly; governance files must be explicit")
                continue
            key = self._scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                self.problem(key_node, "SCH002", f"mapping key {key_node.value!r} must be a string",
                             "quote the key, e.g. \"123\": ...")
                continue
            if key in first_seen:
                self.problem(key_node, "SYN002",
                             f"duplicate key '{key}' (first defined on line {first_seen[key]})",
                             "remove one of the two entries; YAML would silently keep only the last")
                continue
            first_seen[key] = key_node.start_mark.line + 1
            child_path = (*path, key)
            self.doc.key_pos[child_path] = self.mark(key_node)
            result[key] = self.build(value_node, child_path)
        return result

    def _scalar(self, node: yaml.Node) -> Any:
        try:
            value = _SCALAR_CONSTRUCTOR.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            self.problem(node, "SYN001", f"cannot read this value: {_first_line(exc)}",
                         "use plain YAML scalars (strings, numbers, booleans); custom tags are not supported")
            return None
        if isinstance(value, str):
            self._check_invisible(node, value)
        return value

    def _check_invisible(self, node: yaml.Node, value: str) -> None:
        if value.isprintable():  # fast path: no Cc/Cf (nor other invisible) characters at all
            return
        for ch in value:
            if unicodedata.category(ch) in ("Cf", "Cc") and ch not in "\t\n\r":
                self.problem(node, "IDN007",
                             f"value contains the invisible character U+{ord(ch):04X} "
                             f"({unicodedata.name(ch, 'control character')})",
                             "retype the value; invisible and bidirectional characters can hide what "
                             "a reviewer reads")
                return


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "problem", None) or exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def parse_document(text: str | bytes, file: str) -> tuple[Document, list[Problem]]:
    """Parse one YAML file. Returns the document (data None when unusable) and its problems."""
    doc = Document(file=file, data=None)
    problems: list[Problem] = []
    if len(text) > MAX_FILE_BYTES:
        problems.append(Problem(SourcePos(file), RuleId("SYN005"),
                                f"file is larger than {MAX_FILE_BYTES:,} bytes",
                                "split it; one object per file keeps merge requests small"))
        return doc, problems
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(SourcePos(file), RuleId("SYN005"),
                                    f"file is not valid UTF-8 (byte {exc.start})",
                                    "save the file as UTF-8"))
            return doc, problems
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = SourcePos(file, mark.line + 1, mark.column + 1) if mark else SourcePos(file)
        problems.append(Problem(pos, RuleId("SYN001"), f"YAML syntax error: {_first_line(exc)}",
                                "fix the YAML syntax at this position (indentation, quotes, colons)"))
        return doc, problems
    except yaml.YAMLError as exc:
        problems.append(Problem(SourcePos(file), RuleId("SYN001"),
                                f"YAML syntax error: {_first_line(exc)}",
                                "fix the YAML syntax of this file"))
        return doc, problems
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        problems.append(Problem(SourcePos(file), RuleId("SYN003"), "file is empty",
                                "fill it in (see the example tree in config/) or delete it"))
        return doc, problems
    if len(nodes) > 1:
        second = nodes[1].start_mark
        problems.append(Problem(SourcePos(file, second.line + 1, second.column + 1), RuleId("SYN004"),
                                "file holds more than one YAML document",
                                "keep one object per file; move this document to its own file"))
        return doc, problems
    builder = _Builder(file=file, doc=doc, problems=problems)
    try:
        data = builder.build(nodes[0], ())
    except _TooLarge:
        problems.append(Problem(SourcePos(file), RuleId("SYN005"),
                                f"document expands to more than {MAX_NODES:,} values (aliases?)",
                                "write the values out; do not nest YAML aliases"))
        return doc, problems
    except RecursionError:
        problems.append(Problem(SourcePos(file), RuleId("SYN005"), "document is nested too deeply",
                                "flatten the structure; governance files are a few levels deep"))
        return doc, problems
    if not isinstance(data, dict):
        problems.append(Problem(builder.doc.pos(()), RuleId("SCH002"),
                                f"the file must be a mapping of keys to values, not {_kind(data)}",
                                "start the file with 'key: value' lines"))
        return doc, problems
    doc.data = data
    return doc, problems


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__} scalar"
