"""`hypergov audit verify` and `hypergov audit log`: the audit branch from the command line.

verify exits 0 when the chain is intact (and matches the checkpoints, and every commit is signed
by a writer's key), 1 when it is broken (the first bad record named, with why) or on any error,
usage included. log exits 0 (1 on errors).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.output import echo
from cli.plan import cli_errors, load_cli_settings
from engines.settings import Settings
from hypergov import naming

if TYPE_CHECKING:
    from reconciler.audit_store import Checkpoint

VERIFY_EXIT = "Exit status: 0 intact, 1 broken (the first bad record is named) or any error, usage included."
LOG_EXIT = "Exit status: 0 listed (also when nothing matches), 1 any error, usage included."
_SETTINGS = click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
                         help="Settings file (default: ./hypergov.yaml if present).")
_REPO = click.option("--repo", "repo", metavar="URL_OR_PATH", help="Repository holding the audit branch: a path or "
                     "any URL git clones (default: settings audit_repo, else the one holding config_dir).")
_BRANCH = click.option("--branch", help="Audit branch (default: settings audit_branch, hypergov/audit).")


@click.group("audit")
def audit() -> None:
    """The audit trail: records on their own branch, chained by SHA-256."""


def _where(settings: Settings, repo: str | None) -> tuple[str, bool]:
    """The repository to read, and whether it is this state directory's own audit repository
    (then the checkpoint of what was written applies, else the one of what was pushed)."""
    from reconciler.audit import AuditRepoError, find_audit_repo

    try:
        own = find_audit_repo(settings.config_dir, settings.audit_repo).resolve()
    except AuditRepoError as exc:
        if repo is None:
            raise click.UsageError(f"{exc}; or name it with --repo") from exc
        return repo, False
    if repo is None:
        return str(own), True
    return repo, Path(repo).exists() and Path(repo).resolve() == own


@audit.command("verify", epilog=VERIFY_EXIT)
@_SETTINGS
@_REPO
@_BRANCH
@click.option("--checkpoint", "checkpoint_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Checkpoint to compare with (default: the state directory's, when there is one).")
@click.option("--witness", "witness", multiple=True, metavar="LOCATION",
              help="Where the signed checkpoints are published: s3://bucket/prefix or a directory (repeatable; "
              "default: settings audit_witness, else the state bucket with state_backend, else the state directory).")
@click.option("--allowed-signers", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="git allowed-signers file: its keys may sign audit commits, besides the keys the witnesses' "
              "checkpoints publish (default: settings audit_allowed_signers).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@cli_errors
def verify_cmd(settings_file: Path | None, repo: str | None, branch: str | None, checkpoint_file: Path | None,
               witness: tuple[str, ...], allowed_signers: Path | None, as_json: bool) -> None:
    """Recompute the chain over every record of the audit branch and hold it against the signed
    checkpoints published outside the repository: an edited, deleted, inserted or reordered
    record, a removed tail, a rebuilt or rolled-back branch, a fork, a stale checkpoint, and a
    commit not signed by a writer's key are found and the first one named. Works from any clone:
    the witness (e.g. the state bucket) is all it needs besides the repository."""
    from reconciler.audit_signing import allowed_signers as signer_keys
    from reconciler.audit_store import AuditStore, Checkpoint
    from reconciler.audit_verify import opened, verify_branch
    from reconciler.audit_witness import witnesses_of

    settings = load_cli_settings(settings_file, None)
    where, own = _where(settings, repo)
    branch = branch or settings.audit_branch
    checkpoint = Checkpoint.at(checkpoint_file) if checkpoint_file else _own_checkpoint(settings)
    links = checkpoint.links(branch, "written" if own else "pushed") if checkpoint else []
    signers_file = allowed_signers or settings.audit_allowed_signers
    keys = signer_keys(signers_file) if signers_file else set()
    with opened(where, branch=branch) as path:
        verdict = verify_branch(AuditStore(path, branch=branch), checkpoint=links, allowed=keys,
                                witnesses=witnesses_of(settings, witness))
    if as_json:
        echo(json.dumps({**verdict.as_dict(), "repo": where}, indent=2))
    elif verdict.broken is None:
        compared = (f"; matches the checkpoint (record {verdict.checkpoint.seq})" if verdict.checkpoint
                    else "")
        echo(f"intact: {verdict.records} record(s) on {branch} of {where}{compared}")
        for judged in verdict.witnesses:
            newest = (f", the newest of {judged.newest.at} (record {judged.newest.seq})" if judged.newest else "")
            echo(f"  witness {judged.where}: {judged.checkpoints} checkpoint(s) hold{newest}")
        echo(f"  signatures: {verdict.signatures}")
    else:
        bad = verdict.broken
        echo(f"BROKEN: {bad.path}{f' (record {bad.seq})' if bad.seq is not None else ''}: {bad.why}", err=True)
        echo(f"  {verdict.records} record(s) on branch {branch} of {where}", err=True)
    sys.exit(0 if verdict.ok else 1)


def _own_checkpoint(settings: Settings) -> Checkpoint | None:
    """This state directory's writer's checkpoint: in the state bucket with an S3 state backend,
    else in the state directory (None: this state directory never wrote a record)."""
    from engines.factory import reconciler_records
    from reconciler.audit import AUDIT_STATE, checkpoint_of

    state_dir = Path(settings.state_dir).resolve()
    writer = state_dir / AUDIT_STATE / "writer"
    if settings.state_backend is None:
        return checkpoint_of(state_dir, "", None)
    if not writer.exists():
        return None
    return checkpoint_of(state_dir, writer.read_text().strip(), reconciler_records(settings))


@audit.command("log", epilog=LOG_EXIT)
@_SETTINGS
@_REPO
@_BRANCH
@click.option("--project", "projects", multiple=True, help="Only this project's records (repeatable).")
@click.option("--cluster", "clusters", multiple=True, help="Only this cluster's records (repeatable).")
@click.option("--since", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
              help="Only records written on or after this date (UTC), YYYY-MM-DD[THH:MM:SS].")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON, one array.")
@cli_errors
def log_cmd(settings_file: Path | None, repo: str | None, branch: str | None, projects: tuple[str, ...],
            clusters: tuple[str, ...], since: datetime | None, as_json: bool) -> None:
    """What happened, oldest first: one line per record (sequence number, time, type, stack,
    outcome, source commit and its author)."""
    from reconciler.audit_store import AuditStore
    from reconciler.audit_verify import LogFilter, history, opened

    settings = load_cli_settings(settings_file, None)
    where, _ = _where(settings, repo)
    branch = branch or settings.audit_branch
    stacks = frozenset([*(naming.project_stack(p) for p in projects), *(naming.cluster_stack(c) for c in clusters)])
    with opened(where, branch=branch) as path:
        records = history(AuditStore(path, branch=branch), LogFilter(stacks=stacks, since=since))
    if as_json:
        echo(json.dumps(records, indent=2, sort_keys=True))
        return
    for r in records:
        stack = r.get("stack") or ",".join(s.get("stack", "?") for s in r.get("stacks", [])) or r.get("subject", "")
        source = str(r.get("source_commit") or "")[:12]
        author = f" by {r['source_author']}" if r.get("source_author") else ""
        echo(f"{r.get('seq', '?'):>6}  {str(r.get('at', ''))[:19]}  {r.get('type', '?'):<11} {stack:<24} "
                   f"{r.get('outcome') or '-':<11} {source}{author}")
    if not records:
        echo("no records match", err=True)
