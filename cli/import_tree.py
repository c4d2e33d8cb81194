"""`hypergov import`: the tree of a live org. The CLI reads (`engines.importing.read`, clients
built from the settings), decides (`engines.importing.decide`, pure), writes the files into --out
and renders the report (`reconciler.import_report`); nothing else."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cli.output import echo, write_report
from cli.plan import cli_errors, load_cli_settings

IMPORT_EXIT = ("Exit status: 0 imported with nothing in the report, 2 imported with report items (what the tree "
               "cannot say, values not in the live org, rules the imported tree breaks), 1 any error (a cluster "
               "that cannot be read, an --out directory that is not empty, usage).")


@click.command("import", epilog=IMPORT_EXIT)
@click.option("--cluster", "clusters", multiple=True, required=True, metavar="ARN|NAME",
              help="A HyperPod cluster to import, by ARN (or by name with --account/--region); repeatable.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The directory to write the tree into (created; must be empty).")
@click.option("--keep-from", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A tree whose org.yaml (the org-wide policy), and whose projects' and clusters' values the live "
              "org does not hold (descriptions, allowed priority classes, extra permissions, Identity Center "
              "members, owners, workload classes), are kept.")
@click.option("--org", "org_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Only an org.yaml to keep (instead of --keep-from).")
@click.option("--account", help="The account of clusters given by name (default: the caller's).")
@click.option("--region", help="The region of clusters given by name (default: org.yaml's home_region).")
@click.option("--adopt", is_flag=True, help="Write the clusters managed: true, adopt: true with their instance "
              "groups (hypergov then governs them), instead of referenced by ARN.")
@click.option("--owner", help="The clusters' owner (a principal) where the kept tree names none.")
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the report as Markdown.")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present): the AWS endpoint, profile, access role.")
@cli_errors
def import_cmd(clusters: tuple[str, ...], out: Path, keep_from: Path | None, org_file: Path | None,
               account: str | None, region: str | None, adopt: bool, owner: str | None, as_json: bool,
               markdown_file: Path | None, settings_file: Path | None) -> None:
    """Read the governance of live HyperPod clusters (instance groups, the scheduler config, every
    compute quota, the EKS access entries into hyperpod-ns-* namespaces, hypergov-pattern budgets)
    and write it as a tree: org.yaml, one file per cluster, one per team, each value commented with
    where it came from. What the tree cannot say is reported, never dropped or guessed.
    """
    from engines.aws_clients import AwsClients
    from engines.importing.decide import ImportOptions, decide_import
    from engines.importing.read import ClusterNotFoundError, cluster_arn, read_kept, read_kept_org, read_live_org
    from engines.live.runner import CallCounter
    from reconciler.import_report import import_exit, import_json, import_markdown, import_text

    if (keep_from is None) == (org_file is None):
        raise click.UsageError("give --keep-from DIR or --org FILE (the org-wide policy no cluster holds)")
    if out.exists() and any(out.iterdir()):
        raise click.UsageError(f"{out} is not empty: import writes a new tree")
    settings = load_cli_settings(settings_file, None)
    if keep_from is not None:
        kept = read_kept(keep_from)
    else:
        assert org_file is not None  # one of the two, checked above
        kept = read_kept_org(org_file)
    clients = AwsClients(settings=settings.aws, partition=str(kept.org.get("partition", "aws")))
    where = region or str(kept.org.get("home_region") or "us-east-1")
    calls = CallCounter()
    try:
        arns = [cluster_arn(clients, c, account=account, region=where) for c in clusters]
        live = read_live_org(clients, arns, org=kept.org, calls=calls)
    except (ClusterNotFoundError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    imported = decide_import(live, kept, ImportOptions(adopt=adopt, owner=owner))
    for path, data in imported.files().items():
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    echo(f"read {len(arns)} cluster(s) with {calls.count} API call(s)", err=True)
    if as_json:
        echo(json.dumps(import_json(imported.report), indent=2, default=str))
    else:
        for line in import_text(imported.report, out=str(out)):
            echo(line)
    if markdown_file:
        write_report(markdown_file, import_markdown(imported.report, out=str(out)))
    sys.exit(import_exit(imported.report))
