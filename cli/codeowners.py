"""`hypergov codeowners`: write (or, in CI, check) the CODEOWNERS file org.yaml's change_control
implies, so that GitHub or GitLab enforces the approvals `hypergov plan --base` lists. The file is
decided purely in `hypergov.codeowners`; here: where the repository and the file are, reading,
diffing and writing it."""

from __future__ import annotations

import difflib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from cli.options import config_option, require_tree_dir
from cli.output import echo
from cli.plan import cli_errors
from hypergov.codeowners import (
    DEFAULT_PATH,
    HOST_NAMES,
    HOSTS,
    LOCATIONS,
    Codeowners,
    CodeownersRefused,
    Host,
    codeowners,
)
from hypergov.gitsource import NotInRepositoryError, locate_tree
from hypergov.model.tree import GovernanceTree
from hypergov.validate import InvalidTreeError, load_valid_tree

CODEOWNERS_EXIT = ("Exit status: 0 written (or unchanged), or with --check the file is current; 1 any error: with "
                   "--check a stale or missing file, an owner without a Git-host handle, a glob CODEOWNERS cannot "
                   "say, an invalid tree, a CODEOWNERS file the host reads first, usage.")


@dataclass(frozen=True)
class _Target:
    root: Path  # the repository's top folder
    tree_dir: str  # the config tree's folder relative to it ('' at the root)
    file: Path  # the CODEOWNERS file
    rel: str  # its path relative to the root


@click.command("codeowners", epilog=CODEOWNERS_EXIT)
@config_option()
@click.option("--format", "host", type=click.Choice(HOSTS), default="github", show_default=True,
              help="The Git host whose CODEOWNERS syntax and locations to use.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              help="The file to write (default: .github/CODEOWNERS for github, .gitlab/CODEOWNERS for gitlab, in the "
              "repository's top folder); it must lie inside the repository.")
@click.option("--repo-root", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="The repository's top folder (default: the Git repository holding --config).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff when the file is stale or missing.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON (refusals included).")
@cli_errors
def codeowners_cmd(config_dir: Path, host: Host, output: Path | None, repo_root: Path | None, check: bool,
                   as_json: bool) -> None:
    """Write the CODEOWNERS file that makes the Git host enforce org.yaml's change_control.

    The platform admins' fallback line first, then the change_control globs in order (the last
    match decides on GitHub, on GitLab and in change_control), then the file itself for org.yaml's
    owners; `<project>` expanded per project where the owners are project-leads or
    project-members; `{a,b}` as one line per alternative; the roles as the Git-host handles the
    tree gives them (org.yaml's platform_admins_on_git_host, each project's members_on_git_host).
    A rule whose owners have no handle, or a glob CODEOWNERS cannot say exactly, is refused with
    the file:line to fix, never written as a line without owners. Commit the file, and turn on
    "Require review from Code Owners" (GitHub) or "Code owner approval" (GitLab) on the protected
    branch.
    """
    require_tree_dir(config_dir)
    target = _target(config_dir, repo_root, output, host)
    try:
        wanted = codeowners(_valid(config_dir), host=host, tree_dir=target.tree_dir, path=target.rel)
    except CodeownersRefused as exc:
        _refused(exc, as_json)
    _refuse_shadowed(target, host)
    text = wanted.text()
    current = target.file.read_bytes().decode("utf-8", errors="replace") if target.file.is_file() else None
    status = _status(current, text, check)
    if status == "written":
        _write(target.file, text)
    diff = _diff(current, text, target.rel) if status in ("stale", "missing") else ""
    option = f" --output {output}" if output is not None else ""
    regenerate = f"run `hypergov codeowners --config {config_dir} --format {host}{option}` and commit {target.rel}"
    _report(wanted, target, status, diff, as_json, regenerate=regenerate)
    if status in ("stale", "missing"):
        sys.exit(1)


def _target(config_dir: Path, repo_root: Path | None, output: Path | None, host: Host) -> _Target:
    if repo_root is not None:
        root = repo_root.resolve()
        config = config_dir.resolve()
        if not config.is_relative_to(root):
            raise click.UsageError(f"the config tree {config} is not inside --repo-root {root}")
        tree_dir = config.relative_to(root).as_posix() if config != root else ""
    else:
        try:
            location = locate_tree(config_dir)
        except NotInRepositoryError as exc:
            raise click.ClickException(f"{exc}; give the repository's top folder with --repo-root") from exc
        root, tree_dir = location.repo, Path(location.subdir).as_posix() if location.subdir else ""
    file = output.resolve() if output is not None else root / DEFAULT_PATH[host]
    if not file.is_relative_to(root):
        raise click.UsageError(f"--output {file} is not inside the repository {root}")
    return _Target(root=root, tree_dir=tree_dir, file=file, rel=file.relative_to(root).as_posix())


def _valid(config_dir: Path) -> GovernanceTree:
    try:
        return load_valid_tree(config_dir)
    except InvalidTreeError as exc:
        raise click.ClickException(f"{exc} {config_dir}") from exc


def _refused(exc: CodeownersRefused, as_json: bool) -> NoReturn:
    if as_json:
        echo(json.dumps({"status": "refused", "refusals": [
            {"kind": r.kind, "file": r.pos.file if r.pos else None, "line": r.pos.line if r.pos else None,
             "message": r.message, "fix": r.fix} for r in exc.refusals]}, indent=2))
        sys.exit(1)
    lines = "\n".join(f"  {r}" for r in exc.refusals)
    raise click.ClickException(f"no CODEOWNERS written: {len(exc.refusals)} thing(s) to fix first\n{lines}")


def _refuse_shadowed(target: _Target, host: Host) -> None:
    """The host uses the first CODEOWNERS it finds: one it reads before ours would void ours."""
    where = LOCATIONS[host]
    if target.rel not in where:
        click.secho(f"warning: {HOST_NAMES[host]} reads CODEOWNERS only at {', '.join(where)}, not at "
                    f"{target.rel}", fg="yellow", err=True)
        return
    for earlier in where[:where.index(target.rel)]:
        if (target.root / earlier).is_file():
            raise click.ClickException(f"{HOST_NAMES[host]} reads {earlier} before {target.rel} and uses only the "
                                       f"first it finds: remove {earlier}, or write there (--output)")


def _status(current: str | None, wanted: str, check: bool) -> str:
    if current == wanted:
        return "current" if check else "unchanged"
    if check:
        return "missing" if current is None else "stale"
    return "written"


def _diff(current: str | None, wanted: str, rel: str) -> str:
    return "".join(difflib.unified_diff((current or "").splitlines(keepends=True), wanted.splitlines(keepends=True),
                                        fromfile=f"a/{rel}" if current is not None else "/dev/null",
                                        tofile=f"b/{rel}"))


def _write(file: Path, text: str) -> None:
    """Atomically: a reader never sees half a file."""
    file.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8"))
        os.replace(temp, file)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _report(wanted: Codeowners, target: _Target, status: str, diff: str, as_json: bool, *, regenerate: str) -> None:
    lines = sum(len(b.lines) for b in wanted.blocks)
    if as_json:
        out: dict[str, Any] = {"status": status, "format": wanted.host, "path": target.rel, "lines": lines,
                               "diff": diff or None}
        echo(json.dumps(out, indent=2))
        return
    host = HOST_NAMES[wanted.host]
    if status == "stale":
        echo(diff, nl=False)
        click.secho(f"stale: {target.rel} is not what change_control implies for {host}; {regenerate}",
                    fg="red", err=True)
    elif status == "missing":
        echo(diff, nl=False)
        click.secho(f"missing: {target.rel}; {regenerate}", fg="red", err=True)
    else:
        verb = {"written": "wrote", "unchanged": "unchanged:", "current": "current:"}[status]
        echo(f"{verb} {target.rel} ({lines} pattern line(s) for {host})")
