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
# Governance files are a few levels deep. An explicit bound, not the interpreter's recursion limit
# (which a library in the same process may raise: cel-python sets it to 2,500), so whether a deep
# document is refused never depends on what else was imported.
MAX_DEPTH = 100
_MERGE_TAG = "tag:yaml.org,2002:merge"
_SCALAR_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_STR_TAG = "tag:yaml.org,2002:str"


def show(text: str, limit: int = 80) -> str:
    """User text made safe to print: invisible characters as escapes, long text shortened."""
    shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


@dataclass
class Document:
    """One parsed YAML file: its value and where each path of it stands in the file."""

    file: str
    data: Any
    # (line, column), 1-based; SourcePos objects are only made for the few that get reported.
    key_pos: dict[Path, tuple[int, int]] = field(default_factory=dict)
    value_pos: dict[Path, tuple[int, int]] = field(default_factory=dict)
    # The source text of scalars YAML did not read as strings (`no`, `0123`, `2024-01-01`), so a
    # hint can quote what the user wrote rather than what YAML made of it.
    raw: dict[Path, str] = field(default_factory=dict)
    # Mappings from which an unreadable key was dropped (already reported): their emptiness is no news.
    dropped: set[Path] = field(default_factory=set)

    def pos(self, path: Path, *, key: bool = False) -> SourcePos:
        """The position of `path`, or of its closest ancestor that exists in the file."""
        table = self.key_pos if key else self.value_pos
        probe = tuple(path)
        while probe:
            found = table.get(probe) or self.value_pos.get(probe)
            if found is not None:
                return SourcePos(self.file, *found)
            probe = probe[:-1]
        return SourcePos(self.file)  # the file as a whole


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
        if len(path) > MAX_DEPTH:
            raise RecursionError(f"nested more than {MAX_DEPTH} levels")
        self.doc.value_pos.setdefault(path, self.mark(node))
        if isinstance(node, yaml.MappingNode):
            self._check_tag(node, _MAP_TAG)
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            self._check_tag(node, _SEQ_TAG)
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        value = self._scalar(node)
        if not isinstance(value, str) and isinstance(node, yaml.ScalarNode):
            self.doc.raw[path] = node.value
        return value

    def _check_tag(self, node: yaml.Node, expected: str) -> None:
        if node.tag != expected:
            self.problem(node, "SYN001", f"custom YAML tag '{show(node.tag)}' is not supported",
                         "remove the tag; governance files use plain YAML lists, mappings and scalars")

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
                shown = f"'{show(key_node.value)}'" if isinstance(key_node, yaml.ScalarNode) else (
                    "a list" if isinstance(key_node, yaml.SequenceNode) else "a mapping")
                self.problem(key_node, "SCH002", f"mapping key {shown} must be a string",
                             "use a plain (or quoted) string as the key, e.g. \"123\": ...")
                self.doc.dropped.add(path)
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
        if node.tag == _STR_TAG and isinstance(node, yaml.ScalarNode):
            # What SafeConstructor makes of a string scalar (construct_yaml_str: the node's value),
            # without its per-object bookkeeping: most of a tree's ~67,000 scalars are strings.
            self._check_invisible(node, node.value)
            return node.value
        try:
            value = _SCALAR_CONSTRUCTOR.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            self.problem(node, "SYN001", f"cannot read this value: {show(_first_line(exc))}",
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
    except yaml.YAMLError as exc:
        problems.append(_syntax_problem(exc, text, file))
        return doc, problems
    except RecursionError:
        problems.append(_too_deep(file))
        return doc, problems
    nodes = [n for n in nodes if n is not None and not _is_empty_document(n)]
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
        problems.append(_too_deep(file))
        return doc, problems
    if any(p.rule in ("SYN001", "SYN006") for p in problems):
        return doc, problems  # a value could not be read: schema errors about it would only mislead
    if not isinstance(data, dict):
        problems.append(Problem(builder.doc.pos(()), RuleId("SCH002"),
                                f"the file must be a mapping of keys to values, not {_kind(data)}",
                                "start the file with 'key: value' lines"))
        return doc, problems
    doc.data = data
    return doc, problems


def _too_deep(file: str) -> Problem:
    return Problem(SourcePos(file), RuleId("SYN005"), "document is nested too deeply",
                   "flatten the structure; governance files are a few levels deep")


def _is_empty_document(node: yaml.Node) -> bool:
    """A document that is only `---` (or a trailing `---`) holds an empty null scalar."""
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null" and node.value == ""


def _offset_pos(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _syntax_problem(exc: yaml.YAMLError, text: str, file: str) -> Problem:
    """Locate a YAML error where the user must look. For an unterminated quote, a missing ':'
    or an unclosed flow collection, the error's *context* (where the construct opened) is the
    place; for other errors, the *problem* mark (where parsing failed)."""
    message = _first_line(exc)
    if "exceeded" in message and "depth" in message:
        return _too_deep(file)
    if isinstance(exc, yaml.reader.ReaderError):
        line, column = _offset_pos(text, exc.position)
        return Problem(SourcePos(file, line, column), RuleId("SYN001"),
                       f"character U+{exc.character if isinstance(exc.character, int) else ord(exc.character):04X} "
                       "is not allowed in YAML", "delete the control character (retype the line)")
    if isinstance(exc, yaml.MarkedYAMLError):
        context = exc.context or ""
        use_context = exc.context_mark is not None and context.startswith(
            ("while scanning a quoted scalar", "while scanning a simple key", "while parsing a flow"))
        mark = exc.context_mark if use_context else (exc.problem_mark or exc.context_mark)
        if mark is not None:
            detail = f"{context}: {message}" if use_context else message
            return Problem(SourcePos(file, mark.line + 1, mark.column + 1), RuleId("SYN001"),
                           f"YAML syntax error: {detail}",
                           "fix the YAML syntax here (a missing ':' or closing quote/bracket, or bad indentation)")
    return Problem(SourcePos(file), RuleId("SYN001"), f"YAML syntax error: {message}",
                   "fix the YAML syntax of this file")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__} scalar"
