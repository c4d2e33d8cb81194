"""`hypergov status [--json]`: the reconciler's state directory at a glance (reconciler.status)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from cli.output import echo
from cli.plan import cli_errors, load_cli_settings

STATUS_EXIT = "Exit status: 0 status shown, 1 any error (an unreadable record or usage included)."


@click.command("status", epilog=STATUS_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@click.option("--repo", "repo_path", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Governance repository to count waiting commits in (default: the reconciler's clone under "
              "<state_dir>/repo, else settings audit_repo, else the one holding config_dir).")
@click.option("--branch", "branches", multiple=True, help="Also show this branch when nothing was applied from it.")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON (README: Run the reconciler).")
@cli_errors
def status_cmd(settings_file: Path | None, repo_path: Path | None, branches: tuple[str, ...], as_json: bool) -> None:
    """Show what the reconciler has applied and what waits: the last applied commit per branch and
    the commits behind the branch head, the last scheduled drift scan and its counts, audit
    records waiting to be pushed, and who holds the state directory's lock (and whether it runs).
    With an S3 state backend (replicas): the leader lease, and each branch's shared pass with its
    stacks done, failed, waiting and being applied (by which replica, under which epoch).
    Reads the reconciler's records only (the state directory, or the state bucket's records)."""
    from engines.factory import reconciler_records
    from reconciler.status import default_repo, gather_status, status_lines

    settings = load_cli_settings(settings_file, None)
    state_dir = Path(settings.state_dir).resolve()
    repo, clone = default_repo(state_dir, repo_path.resolve() if repo_path else None,
                               lambda: _governance_repo(settings.config_dir, settings.audit_repo))
    status = gather_status(state_dir, repo, branches=branches, clone=clone,
                           audit_repo=settings.audit_repo.resolve() if settings.audit_repo else None,
                           audit_branch=settings.audit_branch, records=reconciler_records(settings),
                           shared=bool(settings.state_backend))
    if as_json:
        echo(json.dumps(status.as_dict(), indent=2))
    else:
        for line in status_lines(status):
            echo(line)


def _governance_repo(config_dir: Path, configured: Path | None) -> Path | None:
    from reconciler.audit import AuditRepoError, find_audit_repo

    try:
        return find_audit_repo(config_dir, configured)
    except AuditRepoError:
        return None
