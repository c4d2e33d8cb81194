"""The config tree is what Git holds: regular files, and nothing a reader could be led astray by.

A merge request controls every entry of the tree. A symbolic link there would make CI read a
file outside the repository (`projects/x.yaml -> /etc/passwd`, or a link to a secret in the
runner's home); a FIFO would hang it; a directory named `projects/x.yaml` would silently be no
project. So both readers, `read_tree_dir` (a working directory) and `hypergov.gitsource.read_tree_at`
(a commit), never follow a link and never open anything but a regular file: every other entry
is kept as a `NotAFile` marker in the tree's mapping, and loading reports it (SYN009) with its
path, like an unexpected file, while the rest of the tree still validates. The same content
gives the same markers from both readers, so a working copy and its commit report the same problems.

Paths that differ only in case (or Unicode normalisation) are reported too (SYN010): a
case-insensitive checkout (macOS, Windows) keeps one of them, so what a reviewer sees would
not be what CI validated.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Literal

from hypergov.problems import Problem, RuleId, SourcePos
from hypergov.source import show

EntryKind = Literal["symbolic link", "directory", "character device", "block device", "FIFO", "socket",
                    "Git submodule", "unknown file type"]

MAX_TREE_FILES = 50_000
CONFIG_SUFFIX = ".yaml"
ROOT = ""  # the key of a marker for the tree's root itself (a linked or submodule config directory)


@dataclass(frozen=True)
class NotAFile:
    """A tree entry that is not a regular file: kept (so it is reported), never read or followed."""

    kind: EntryKind
    target: str = ""  # a link's target as stored, or a submodule's commit: shown, never followed


TreeEntry = bytes | NotAFile
TreeFiles = Mapping[str, TreeEntry]


def is_hidden(rel: str) -> bool:
    """Hidden entries (`.git`, `.gitkeep`, `.github/`) are not part of the tree for either reader."""
    return any(part.startswith(".") for part in rel.split("/"))


def special_kind(mode: int) -> EntryKind:
    """What a non-regular, non-directory, non-link `st_mode` is."""
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "unknown file type"


def read_tree_dir(root: str | os.PathLike[str]) -> dict[str, TreeEntry]:
    """Every entry under `root` (hidden ones skipped), by '/'-separated relative path: the bytes
    of regular files, a `NotAFile` for anything else. Nothing is followed: links are read with
    `readlink`, files are opened with O_NOFOLLOW and checked to be regular once open, and a
    directory whose name ends in `.yaml` is not descended into. `root` itself must be a real
    directory: a linked root is returned as one marker under the key `ROOT`."""
    base = FsPath(root)
    if base.is_symlink():
        return {ROOT: NotAFile("symbolic link", os.readlink(base))}
    files: dict[str, TreeEntry] = {}
    pending = [""]
    while pending and len(files) <= MAX_TREE_FILES:
        rel_dir = pending.pop()
        with os.scandir(base / rel_dir) as scan:
            entries = sorted(scan, key=lambda e: e.name)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode) and not entry.name.endswith(CONFIG_SUFFIX):
                pending.append(rel)
            elif len(files) <= MAX_TREE_FILES:
                files[rel] = _read_entry(entry.path, mode)
    return dict(sorted(files.items()))


def _read_entry(path: str, mode: int) -> TreeEntry:
    if stat.S_ISLNK(mode):
        return NotAFile("symbolic link", os.readlink(path))
    if stat.S_ISDIR(mode):
        return NotAFile("directory")
    if not stat.S_ISREG(mode):
        return NotAFile(special_kind(mode))
    # Swapped for a link or a FIFO since it was listed? O_NOFOLLOW fails on a link, O_NONBLOCK
    # keeps a FIFO from blocking, and the open file itself must still be regular.
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return NotAFile("symbolic link", os.readlink(path)) if os.path.islink(path) else NotAFile("unknown file type")
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno()).st_mode
        return handle.read() if stat.S_ISREG(opened) else NotAFile(special_kind(opened))


def write_tree_dir(files: Mapping[str, TreeEntry], root: str | os.PathLike[str]) -> FsPath:
    """The inverse of `read_tree_dir`: write a tree (e.g. a synthetic org, or a corpus case with
    links and FIFOs) under `root`. Devices and sockets cannot be written (they need privileges
    or a live process): use them in memory only."""
    base = FsPath(root)
    base.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            _WRITERS[data.kind](target, data)
    return base


def _write_directory(target: FsPath, entry: NotAFile) -> None:
    target.mkdir(exist_ok=True)


def _write_link(target: FsPath, entry: NotAFile) -> None:
    os.symlink(entry.target, target)


def _write_fifo(target: FsPath, entry: NotAFile) -> None:
    os.mkfifo(target)


def _cannot_write(target: FsPath, entry: NotAFile) -> None:
    raise ValueError(f"{target}: a {entry.kind} exists only in memory here (a Git commit or privileges needed)")


_WRITERS: dict[str, Callable[[FsPath, NotAFile], None]] = {
    "directory": _write_directory, "symbolic link": _write_link, "FIFO": _write_fifo}
_WRITERS.update({kind: _cannot_write for kind in ("character device", "block device", "socket", "Git submodule",
                                                  "unknown file type")})


# --- problems ----------------------------------------------------------------------------------

_HINTS: dict[str, str] = {
    "symbolic link": "replace the link with the file itself; hypergov never follows links, "
                     "so a merge request cannot make CI read a file outside the repository",
    "directory": "config files are regular files: rename the directory (or move what it holds) "
                 "so that no directory name ends in .yaml",
    "Git submodule": "the config tree must hold its files itself: remove the submodule and commit the files",
}
_DEFAULT_HINT = "delete it; the config tree holds only regular files and directories"


def entry_problem(rel: str, entry: NotAFile, shown: str) -> Problem:
    """SYN009 for one entry that is not a regular file (`shown` is its display path)."""
    what = {"symbolic link": f"a symbolic link (to '{show(entry.target, 60)}')",
            "Git submodule": f"a Git submodule (commit {entry.target[:12]})" if entry.target else "a Git submodule",
            "directory": "a directory named like a config file",
            "FIFO": "a FIFO (named pipe)"}.get(entry.kind, f"a {entry.kind}")
    if rel == ROOT:
        return Problem(SourcePos(shown), RuleId("SYN009"),
                       f"the config tree itself is {what}, not a directory",
                       "point hypergov at the real directory; it never follows a link out of the repository")
    return Problem(SourcePos(shown), RuleId("SYN009"), f"'{show(rel)}' is {what}, not a regular file; it was not read",
                   _HINTS.get(entry.kind, _DEFAULT_HINT))


def fold_path(rel: str) -> str:
    """The form in which two paths collide on a case-insensitive, normalising file system:
    canonical decomposition, then simple (one character to one) case folding as file systems do
    it, so 'Readme' meets 'README' and a final sigma meets a sigma, but a ligature 'ﬁ' does not
    meet 'fi' (that is a look-alike, IDN004's business), then NFC."""
    if rel.isascii():  # nearly every path: ASCII's simple case fold is lower()
        return rel.lower()
    folded = []
    for char in unicodedata.normalize("NFD", rel):
        upper = char.upper()
        upper = upper if len(upper) == 1 else char
        lower = upper.lower()
        folded.append(lower if len(lower) == 1 else upper)
    return unicodedata.normalize("NFC", "".join(folded))


def case_collisions(paths: list[str], display: Callable[[str], str]) -> list[Problem]:
    """SYN010 at every path (but the first, in sorted order) that equals another ignoring case
    and Unicode normalisation."""
    groups: dict[str, list[str]] = defaultdict(list)
    for rel in sorted(paths):
        groups[fold_path(rel)].append(rel)
    problems = []
    for members in groups.values():
        first = members[0]
        for rel in members[1:]:
            problems.append(Problem(
                SourcePos(display(rel)), RuleId("SYN010"),
                f"'{show(rel)}' and '{show(first)}' differ only in case or Unicode form",
                "a case-insensitive checkout (macOS, Windows) keeps only one of them; rename or delete one"))
    return problems
