"""`hypergov usage import`: the usage-report operator's raw data (awslabs/sagemaker-hyperpod-usage-report,
its S3 bucket or a local copy of it) into each cluster's collector store, so that an org switching
to hypergov keeps the history the operator recorded. The rules are usage/SEMANTICS.md's I1-I8;
the reading is `usage.operator_layout`, the conversion `usage.operator_import`, the writing
`usage.operator_write`. Registered in the `usage` group as `import`."""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cli.options import config_option
from cli.output import echo
from cli.plan import cli_errors, load_cli_settings, valid_tree

if TYPE_CHECKING:
    from hypergov.model.tree import GovernanceTree
    from usage.collector_store import CollectorStore
    from usage.operator_import import Entry, ImportedCluster
    from usage.operator_layout import RawData, RawSource
    from usage.operator_write import Written

IMPORT_EXIT = ("Exit status: 0 imported (or nothing new: the stores held it all); 1 any error: a record the import "
               "cannot read (its object and row named; nothing is written then), a collector running on a "
               "cluster, usage.")


@click.command("import", epilog=IMPORT_EXIT)
@click.option("--from", "source", required=True, metavar="s3://BUCKET[/PREFIX] | DIR",
              help="Where the operator's raw/ folder is: its bucket (the CloudFormation stack's UsageReportBucket), "
              "or a local copy with the same keys.")
@click.option("--cluster", "mappings", multiple=True, required=True, metavar="NAME=OPERATOR_CLUSTER",
              help="A cluster of the tree and the operator's name for it (its clusterName, the `cluster` partition); "
              "repeatable. Records of other operator clusters are listed, not imported.")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@config_option(from_settings=True)
@click.option("--region", help="The bucket's region (default: AWS_REGION, else us-east-1).")
@click.option("--dry-run", is_flag=True, help="Read and report; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
@cli_errors
def import_cmd(source: str, mappings: tuple[str, ...], settings_file: Path | None, config_dir: Path | None,
               region: str | None, dry_run: bool, as_json: bool) -> None:
    """Import the usage-report operator's raw usage (raw/workload and raw/heartdub, Parquet) into
    <state_dir>/usage/<cluster>/: each operator workload's attempts as finished-segment lines, the
    hours its heartbeats cover as the checkpoint's `import` ranges (an hour without one stays
    missing, never zero). Only the time before the collector's first own range is imported, and
    an attempt the collector kept wins over the imported one; importing again adds nothing.
    The collector must not run on those clusters meanwhile. Run `hypergov usage account` after.
    """
    from usage.collector_store import CollectorBusyError, CollectorStore
    from usage.operator_layout import read_raw

    settings = load_cli_settings(settings_file, config_dir)
    tree = valid_tree(settings)
    clusters = _mappings(tree, mappings)
    raw_source = _source(settings, source, region)
    raw = read_raw(raw_source)
    state_dir = Path(settings.state_dir).resolve()
    stores = {name: CollectorStore.of(state_dir, name) for name in clusters}
    written: dict[str, Written] = {}
    try:
        with ExitStack() as held:
            if not dry_run:
                for store in stores.values():
                    held.enter_context(store.held())
            imports = [_imported(tree, stores[name], raw, name, operator) for name, operator in clusters.items()]
            entries = [*_raw_entries(raw, raw_source, set(clusters.values())),
                       *(e for i in imports for e in i.entries)]
            if not dry_run and not any(e.error for e in entries):
                from usage.operator_write import write_import

                written = {i.cluster: write_import(stores[i.cluster], i) for i in imports}
    except CollectorBusyError as exc:
        echo(f"{exc} (stop it while importing)", err=True)
        sys.exit(1)
    hints = _final_months(state_dir, imports) if written else []
    if as_json:
        echo(json.dumps(_json(imports, written, entries, raw, dry_run, hints), indent=2))
    else:
        _echo(imports, written, entries, raw, dry_run, hints)
    sys.exit(1 if any(e.error for e in entries) else 0)


def _mappings(tree: GovernanceTree, given: tuple[str, ...]) -> dict[str, str]:
    clusters: dict[str, str] = {}
    for mapping in given:
        name, _, operator = mapping.partition("=")
        if not name or not operator:
            raise click.UsageError(f"--cluster {mapping!r} is not NAME=OPERATOR_CLUSTER")
        if name not in tree.clusters:
            raise click.UsageError(f"no cluster {name} in the tree; clusters are: {', '.join(sorted(tree.clusters))}")
        if name in clusters or operator in clusters.values():
            raise click.UsageError(f"--cluster {mapping}: each cluster and operator cluster is mapped once")
        clusters[name] = operator
    return clusters


def _source(settings: Any, where: str, region: str | None) -> RawSource:
    from usage.operator_layout import DirectorySource, S3Source

    if not where.startswith("s3://"):
        if not Path(where).is_dir():
            raise click.UsageError(f"--from {where}: no such directory (or give s3://BUCKET[/PREFIX])")
        return DirectorySource(Path(where))
    from engines.aws_clients import AwsClients

    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    try:
        return S3Source.of_url(AwsClients(settings=settings.aws).client("s3", region=region), where)
    except ValueError as exc:
        raise click.UsageError(f"--from {exc}") from exc


def _imported(tree: GovernanceTree, store: CollectorStore, raw: RawData, name: str,
              operator: str) -> ImportedCluster:
    from usage.adapter import cluster_pools
    from usage.operator_import import first_own_start, import_cluster
    from usage.operator_write import collector_attempts

    pools = {(p.instance_type, p.kind) for p in cluster_pools(tree, name)}
    before = first_own_start(store.checkpoint().coverage)
    known = collector_attempts(store) if before is not None else {}  # no own range: the collector never ran
    return import_cluster(raw.workloads, raw.heartbeats, cluster=name, operator_cluster=operator, pools=pools,
                          before=before, known=known)


def _raw_entries(raw: RawData, source: RawSource, mapped: set[str]) -> list[Entry]:
    """The unreadable records (errors), no object at all (an error: --from is likely not where the
    operator's raw/ folder is), and the operator clusters nobody mapped (left out)."""
    from usage.operator_import import Entry
    from usage.operator_layout import WORKLOAD

    entries = [Entry(str(u.at), u.problem, error=True) for u in raw.unreadable]
    if raw.objects == 0:
        entries.append(Entry(source.location(WORKLOAD, ""), "no object of the operator's workload or heartdub "
                             "tables here: is --from where its raw/ folder is?", error=True))
    first: dict[str, tuple[str, int]] = {}
    for cluster, where in [*((w.cluster, w.at) for w in raw.workloads), *((h.cluster, h.at) for h in raw.heartbeats)]:
        if cluster not in mapped:
            at, count = first.get(cluster, (str(where), 0))
            first[cluster] = (at, count + 1)
    entries += [Entry(at, f"operator cluster {cluster} is not mapped (--cluster NAME={cluster}): its {count} "
                          "row(s) not imported") for cluster, (at, count) in sorted(first.items())]
    return entries


def _final_months(state_dir: Path, imports: list[ImportedCluster]) -> list[str]:
    """The months the import reaches that the warehouse already holds as final: `usage account`
    keeps those as they are unless asked to account them again."""
    from usage.warehouse import Warehouse, month_of, warehouse_dir

    warehouse = Warehouse(warehouse_dir(state_dir))
    return [f"{i.cluster} {month}" for i in imports
            for month in sorted({month_of(int(r.start.timestamp())) for r in i.coverage})
            if warehouse.is_final(i.cluster, month)]


def _json(imports: list[ImportedCluster], written: dict[str, Written], entries: list[Entry], raw: RawData,
          dry_run: bool, hints: list[str]) -> dict[str, Any]:
    return {"dry_run": dry_run, "written": bool(written), "clusters": [{
        "cluster": i.cluster, "operator_cluster": i.operator_cluster, "workloads": len(i.workloads),
        "attempts": i.attempts, "covered": [r.as_dict() for r in i.coverage],
        "lines_added": written[i.cluster].lines if i.cluster in written else 0,
        "coverage_changed": written[i.cluster].coverage_changed if i.cluster in written else False}
        for i in imports], "entries": [e.as_dict() for e in entries], "not_read": raw.not_read,
        "final_months": hints}


def _echo(imports: list[ImportedCluster], written: dict[str, Written], entries: list[Entry], raw: RawData,
          dry_run: bool, hints: list[str]) -> None:
    for entry in entries:
        echo(f"{'ERROR' if entry.error else 'NOT IMPORTED'} {entry.at}: {entry.reason}")
    for table, count in sorted(raw.not_read.items()):
        if count:
            echo(f"not read: raw/{table}/ ({count} object(s)), as hypergov derives it (SEMANTICS.md I1)")
    for i in imports:
        done = written.get(i.cluster)
        state = ("dry run, nothing written" if dry_run else "nothing written: fix the errors above"
                 if done is None else f"{done.lines} line(s) added" if done.anything else "nothing new")
        echo(f"{i.cluster} (operator cluster {i.operator_cluster}): {len(i.workloads)} workload(s), "
             f"{i.attempts} attempt(s), {len(i.coverage)} covered range(s); {state}")
    for hint in hints:
        echo(f"final in the warehouse: {hint}; account it again: hypergov usage account --cluster "
             f"{hint.split()[0]} --month {hint.split()[1]} --refinalise")
