"""Read a config tree straight out of a Git commit (no checkout), for merge-request plans,
capacity diffs between refs and the reconciler."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import git


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


def read_tree_at(repo_path: str | os.PathLike[str], ref: str, subdir: str = "config") -> dict[str, bytes]:
    """Files under `subdir` at `ref`, by path relative to `subdir` (the loader's input)."""
    repo = git.Repo(repo_path, search_parent_directories=True)
    try:
        commit = repo.commit(ref)
    except (git.BadName, ValueError) as exc:
        raise RefNotFoundError(f"'{ref}' is not a commit, branch or tag in {repo.working_dir}") from exc
    tree = commit.tree
    prefix = subdir.strip("/")
    if prefix:
        try:
            tree = tree / prefix
        except KeyError as exc:
            raise RefNotFoundError(f"'{prefix}/' does not exist at {ref}") from exc
    files: dict[str, bytes] = {}
    for item in tree.traverse():
        if isinstance(item, git.Blob):
            full = str(item.path)
            rel = full[len(prefix) + 1:] if prefix else full
            files[rel] = item.data_stream.read()
    return files
