"""Where `hypergov reconcile` reads its branch: a local repository in place (as before remotes),
or the reconciler's bare clone of a remote under the state directory, fetched before each pass.
Turns `--repo` and the settings into one `Followed` value; bad input is a usage error saying
what is accepted (and never shows the credentials a URL may hold)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import click
import git

from engines.settings import Settings
from hypergov.gitsource import NotInRepositoryError, RefNotFoundError, locate_tree
from reconciler.audit import AuditRepoError, find_audit_repo
from reconciler.reconcile import exclusive
from reconciler.remote import CLONE_DIR, LocalRepo, RemoteClone, RepoArgumentError, parse_repo, valid_branch


@dataclass(frozen=True)
class Followed:
    """The repository a pass reads `branch` from (`repo`), the tree's path in it, and for a remote
    the clone that fetches into `repo`."""

    repo: Path
    subdir: str
    branch: str
    state_dir: Path
    clone: RemoteClone | None = None

    def fetch_head(self) -> str:
        """The branch's head, fetched first for a remote (under the state directory's lock: the clone
        lives there, and one git process at a time writes its refs)."""
        if self.clone is not None:
            with exclusive(self.state_dir):
                return self.clone.fetch()
        try:
            return str(git.Repo(self.repo).commit(self.branch).hexsha)
        except (git.BadName, ValueError) as exc:
            raise RefNotFoundError(f"no branch '{self.branch}' in {self.repo}") from exc


def followed_source(settings: Settings, repo_arg: str | None, branch: str) -> Followed:
    state_dir = Path(settings.state_dir).resolve()
    try:
        source = parse_repo(repo_arg) if repo_arg is not None else None
    except RepoArgumentError as exc:
        raise click.UsageError(str(exc)) from exc
    if source is None or isinstance(source, LocalRepo):
        if source is not None and not source.path.is_dir():
            raise click.UsageError(f"--repo {source.path}: no such directory (give a local repository, or a URL: "
                                   "https://, ssh://, git://, file:// or user@host:path)")
        try:
            repo = source.path if source else find_audit_repo(settings.config_dir, settings.audit_repo)
            where = locate_tree(settings.config_dir, repo=repo.resolve())
        except (AuditRepoError, NotInRepositoryError) as exc:
            raise click.UsageError(str(exc)) from exc
        return Followed(repo=where.repo, subdir=where.subdir, branch=branch, state_dir=state_dir)
    if not valid_branch(branch):
        raise click.UsageError(f"--branch {branch!r} is not a valid branch name (git check-ref-format --branch)")
    if branch == settings.audit_branch:
        raise click.UsageError(f"--branch {branch} is the audit branch (audit_branch); follow the governed branch")
    clone = RemoteClone(url=source.url, branch=branch, path=state_dir / CLONE_DIR, audit_branch=settings.audit_branch)
    return Followed(repo=clone.path, subdir=_subdir_in_remote(settings.config_dir), branch=branch,
                    state_dir=state_dir, clone=clone)


def _subdir_in_remote(config_dir: Path) -> str:
    """With a URL there is no working copy to resolve config_dir against: it is the tree's path
    inside the repository (default `config`)."""
    path = PurePosixPath(config_dir.as_posix())
    if path.is_absolute() or ".." in path.parts:
        raise click.UsageError(f"config_dir {config_dir}: with a URL for --repo, config_dir is the tree's path "
                               "inside the repository (e.g. config), not a path on this machine")
    return "" if str(path) == "." else str(path)
