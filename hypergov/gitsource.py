"""Read a config tree straight out of a Git commit (no checkout), for merge-request plans,
capacity diffs between refs and the reconciler.

Like the directory reader (`hypergov.tree_files`), it reads regular blobs only: a symbolic link
(a blob of mode 120000, whose content is the link's target), a submodule (a commit entry, mode
160000) and a directory named like a config file become `NotAFile` markers, reported by the
loader, so a commit and its checkout report the same problems."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

import git

from hypergov.tree_files import CONFIG_SUFFIX, MAX_TREE_FILES, ROOT, NotAFile, TreeEntry

SYMLINK_MODE = 0o120000


class RefNotFoundError(Exception):
    """A ref the user named does not exist in the repository."""


class NotInRepositoryError(Exception):
    """The config tree is not inside a Git repository (or not inside the one named)."""


@dataclass(frozen=True)
class TreeLocation:
    """Where a config tree lives in Git: the repository's top level and the tree's path in it."""

    repo: Path
    subdir: str


def locate_tree(config_dir: Path, *, repo: Path | None = None) -> TreeLocation:
    """The one way a command finds its tree in Git. With `repo`, a relative `config_dir` is
    relative to that repository (the reconciler reads the tree from commits, not from the
    working directory); without it, `config_dir` is relative to the current directory and the
    repository is the one holding it. An absolute `config_dir` must lie inside the repository."""
    try:
        if repo is not None:
            top = Path(git.Repo(repo).working_dir).resolve()
            config = config_dir.resolve() if config_dir.is_absolute() else (top / config_dir).resolve()
        else:
            config = config_dir.resolve()
            top = Path(git.Repo(config if config.exists() else config.parent,
                                search_parent_directories=True).working_dir).resolve()
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise NotInRepositoryError(f"{repo or config_dir} is not in a Git repository") from exc
    if not config.is_relative_to(top):
        raise NotInRepositoryError(f"the config tree {config} is not inside the repository {top}")
    return TreeLocation(repo=top, subdir=str(config.relative_to(top)) if config != top else "")


def read_tree_at(repo_path: str | os.PathLike[str], ref: str, subdir: str = "config") -> dict[str, TreeEntry]:
    """Entries under `subdir` at `ref`, by path relative to `subdir` (the loader's input): the
    bytes of regular blobs, a `NotAFile` for links, submodules and directories named `*.yaml`.
    A `subdir` that is itself a link or a submodule is one marker under the key `ROOT`."""
    repo = git.Repo(repo_path, search_parent_directories=True)
    try:
        commit = repo.commit(ref)
    except (git.BadName, ValueError) as exc:
        raise RefNotFoundError(f"'{ref}' is not a commit, branch or tag in {repo.working_dir}") from exc
    node: object = commit.tree
    prefix = subdir.strip("/")
    if prefix:
        try:
            node = commit.tree / prefix
        except KeyError as exc:
            raise RefNotFoundError(f"'{prefix}/' does not exist at {ref}") from exc
    if not isinstance(node, git.Tree):
        marker = _marker(node)
        if marker is None:
            raise RefNotFoundError(f"'{prefix}' at {ref} is a file, not a directory")
        return {ROOT: marker}
    files: dict[str, TreeEntry] = {}
    _walk(node, "", files)
    return dict(sorted(files.items()))


def _walk(tree: git.Tree, rel_dir: str, files: dict[str, TreeEntry]) -> None:
    """Depth-first over one tree object; hidden entries are skipped, as the directory reader does."""
    for item in tree:
        name = posixpath.basename(str(item.path))  # a submodule entry has a path but no `name`
        if name.startswith(".") or len(files) > MAX_TREE_FILES:
            continue
        rel = f"{rel_dir}/{name}" if rel_dir else name
        if isinstance(item, git.Tree) and not name.endswith(CONFIG_SUFFIX):
            _walk(item, rel, files)
        elif isinstance(item, git.Tree):
            files[rel] = NotAFile("directory")
        else:
            marker = _marker(item)
            files[rel] = marker if marker is not None else item.data_stream.read()


def _marker(item: object) -> NotAFile | None:
    """The marker for a link or submodule entry; None for a regular blob."""
    if isinstance(item, git.Blob) and item.mode == SYMLINK_MODE:
        return NotAFile("symbolic link", os.fsdecode(item.data_stream.read()))
    if isinstance(item, git.Blob):
        return None
    return NotAFile("Git submodule", str(getattr(item, "hexsha", "")))
