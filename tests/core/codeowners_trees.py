"""The example tree with other change_control rules or Git-host handles, and a reader of
CODEOWNERS written for the tests from the hosts' documentation (not from hypergov.codeowners), for
the `hypergov codeowners` tests."""

from __future__ import annotations

import re

from hypergov.model.tree import GovernanceTree
from tests.example_tree import example_files, valid_tree

EXAMPLE_RULES = b"""change_control:
  - paths: ["org.yaml", "clusters/*.yaml"]
    owners: [platform-admins]
  - paths: ["projects/<project>.yaml"]
    owners: [project-leads, platform-admins]
  - paths: ["workloads/<project>/*.yaml"]
    owners: [project-members]
"""


def edited(edits: dict[str, tuple[bytes, bytes]]) -> dict[str, bytes]:
    """The example's files with, per path, `old` (which must be there) replaced by `new`."""
    files = example_files()
    for path, (old, new) in edits.items():
        assert old in files[path], (path, old)
        files[path] = files[path].replace(old, new)
    return files


def with_rules(rules: str, edits: dict[str, tuple[bytes, bytes]] | None = None) -> GovernanceTree:
    """The example tree whose change_control is `rules` (the YAML list under the key)."""
    return valid_tree(edited({"org.yaml": (EXAMPLE_RULES, b"change_control:\n" + rules.encode()), **(edits or {})}))


def _segment(segment: str) -> str:
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment)


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A CODEOWNERS pattern of the kind hypergov writes, as both hosts document it: `*` alone owns
    everything; a leading `/` anchors at the root; a trailing `/` owns everything under the folder;
    `*` and `?` stay in one segment; a `**` segment is zero or more segments."""
    if pattern == "*":
        return re.compile(".*")
    assert pattern.startswith("/"), pattern
    body, folder = pattern[1:].rstrip("/"), pattern.endswith("/")
    regex = "".join("(?:[^/]+/)*" if s == "**" else _segment(s) + "/" for s in body.split("/"))
    return re.compile(regex + ".+" if folder else regex[:-1])


def owners_of(codeowners_text: str, repo_path: str) -> tuple[str, ...] | None:
    """The owners the last matching line gives `repo_path` (None: no line matches)."""
    found = None
    for line in codeowners_text.splitlines():
        if line and not line.startswith("#"):
            pattern, *owners = line.split()
            if pattern_regex(pattern).fullmatch(repo_path):
                found = tuple(owners)
    return found
