"""Read a config tree straight out of a Git commit (no checkout), for merge-request plans,
capacity diffs between refs and the reconciler."""

from __future__ import annotations

import os

import git


class RefNotFoundError(Exception):
    """A ref the user named does not exist in the repository."""


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
