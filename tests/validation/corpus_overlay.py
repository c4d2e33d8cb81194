"""The invalid-tree corpus: each case file in `cases/` is an overlay on the example tree `config/`.

Kept apart from the test modules so that the in-memory corpus test and the CLI test build trees
the same way. A case is a small YAML file (README.md next to this module explains the format):

    description: what is wrong
    write: {tree/relative/path.yaml: "full new content"}
    write_generated: {path: {kind: huge_file | alias_bomb | deep_nesting | bytes | not_a_file, ...}}
    delete: [tree/relative/path.yaml]
    expect: [{rule: PERM001, file: projects/vision.yaml, line: 27, column: 7, severity: error,
              hint_has: "...", hint_lacks: "...", message_has: "...", message_lacks: "..."}]
    xfail: "why the current code is wrong"   # optional, marks a known bug
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hypergov.tree_files import NotAFile, TreeEntry, read_tree_dir, write_tree_dir

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
EXAMPLE_DIR = HERE.parent.parent / "config"
DISPLAY_ROOT = "config"
CASE_KEYS = {"description", "write", "write_generated", "delete", "expect", "xfail"}
EXPECT_KEYS = {"rule", "file", "line", "column", "severity",
               "message_has", "message_lacks", "hint_has", "hint_lacks"}


@dataclass(frozen=True)
class Expected:
    """One problem a case must produce. `file` is tree-relative, as in the case file."""

    rule: str
    file: str
    line: int
    column: int | None = None
    severity: str = "error"
    message_has: str | None = None
    message_lacks: str | None = None
    hint_has: str | None = None
    hint_lacks: str | None = None

    @property
    def shown_file(self) -> str:
        return f"{DISPLAY_ROOT}/{self.file}"


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    write: Mapping[str, str]
    generated: Mapping[str, Mapping[str, Any]]
    delete: tuple[str, ...]
    expect: tuple[Expected, ...]
    xfail: str | None

    @property
    def rule_prefix(self) -> str:
        """The rule id the case file is named after (`perm001-...` -> `PERM001`)."""
        return self.name.split("-", 1)[0].upper()


def load_case(path: Path) -> Case:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or set(raw) - CASE_KEYS or "expect" not in raw:
        raise ValueError(f"{path.name}: a case is a mapping with keys {sorted(CASE_KEYS)} and needs 'expect'")
    expected = []
    for item in raw["expect"]:
        if set(item) - EXPECT_KEYS:
            raise ValueError(f"{path.name}: unknown keys in expect entry {item}")
        if any(not isinstance(v, str) for k, v in item.items() if k.endswith(("_has", "_lacks"))):
            raise ValueError(f"{path.name}: quote the text of message_has/hint_has/... in {item}")
        expected.append(Expected(**item))
    return Case(
        name=path.stem,
        description=str(raw.get("description", "")),
        write=dict(raw.get("write") or {}),
        generated=dict(raw.get("write_generated") or {}),
        delete=tuple(raw.get("delete") or ()),
        expect=tuple(expected),
        xfail=raw.get("xfail"),
    )


def load_cases() -> list[Case]:
    return [load_case(p) for p in sorted(CASES_DIR.glob("*.yaml"))]


def example_tree() -> dict[str, TreeEntry]:
    return read_tree_dir(EXAMPLE_DIR)


# --- generators for contents a text block cannot hold ------------------------------------------


def _huge_file(spec: Mapping[str, Any], example: Mapping[str, Any]) -> bytes:
    """A syntactically fine YAML file of `size` bytes: a valid object padded with comment lines."""
    base = example[spec["from"]] if "from" in spec else b""
    line = b"# " + b"x" * 77 + b"\n"
    count = max(0, int(spec["size"]) - len(base)) // len(line) + 1
    return base + line * count


def _alias_bomb(spec: Mapping[str, Any], example: Mapping[str, Any]) -> bytes:
    """'Billion laughs': `levels` anchors, each a list of `width` aliases of the previous one."""
    width, levels = int(spec.get("width", 10)), int(spec["levels"])
    lines = ["description: &a0 lol"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return ("\n".join(lines) + "\n").encode()


def _deep_nesting(spec: Mapping[str, Any], example: Mapping[str, Any]) -> bytes:
    """An example file (`from`) plus a key whose value is `depth` nested lists."""
    depth = int(spec["depth"])
    return example[spec["from"]] + b"nested: " + b"[" * depth + b"]" * depth + b"\n"


def _bytes(spec: Mapping[str, Any], example: Mapping[str, Any]) -> bytes:
    """An example file (`from`) or `text`, with `replace` edits ({old, new, times}), encoded
    with `encoding` (default utf-8; 'latin-1' gives bytes that are not UTF-8)."""
    text = example[spec["from"]].decode("utf-8") if "from" in spec else str(spec.get("text", ""))
    for edit in spec.get("replace", []):
        if edit["old"] not in text:
            raise ValueError(f"replace: {edit['old']!r} not in the base text")
        text = text.replace(edit["old"], str(edit["new"]) * int(edit.get("times", 1)), 1)
    data = text.encode(spec.get("encoding", "utf-8"))
    return bytes.fromhex(spec.get("prefix_hex", "")) + data


def _not_a_file(spec: Mapping[str, Any], example: Mapping[str, Any]) -> NotAFile:
    """An entry that is not a regular file: `entry` is a `NotAFile` kind ('symbolic link',
    'directory', 'FIFO', 'socket', 'character device', 'Git submodule'), `target` a link's target
    or a submodule's commit. The directory and Git readers produce the same markers from real
    links, directories and submodules (tests/validation/test_tree_readers.py writes them)."""
    return NotAFile(spec["entry"], str(spec.get("target", "")))


GENERATORS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], TreeEntry]] = {
    "huge_file": _huge_file,
    "alias_bomb": _alias_bomb,
    "bytes": _bytes,
    "deep_nesting": _deep_nesting,
    "not_a_file": _not_a_file,
}


def build_files(case: Case, example: Mapping[str, TreeEntry]) -> dict[str, TreeEntry]:
    """The example tree with the case's overlay applied, as the loader takes it."""
    files = dict(example)
    for path in case.delete:
        if path not in files:
            raise ValueError(f"{case.name}: cannot delete {path}, not in the example tree")
        del files[path]
    for path, content in case.write.items():
        files[path] = content.encode("utf-8")
    for path, spec in case.generated.items():
        files[path] = GENERATORS[spec["kind"]](spec, example)
    return files


def write_tree(files: Mapping[str, TreeEntry], root: Path) -> Path:
    """Materialize a tree on disk (for the CLI tests)."""
    return write_tree_dir(files, root)
