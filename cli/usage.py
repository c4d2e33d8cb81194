"""`hypergov usage ...`: usage accounting. `usage collect` captures what ran on each cluster
(Kueue Workloads, with their admission and conditions) into the state directory, resumably
(`usage.collect`); it reads the clusters with the drift scan's Kubernetes clients."""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cli.options import check_months, config_option, require_tree_dir
from cli.output import echo
from cli.plan import EXIT_BUSY, cli_errors, load_cli_settings, to_stderr, valid_tree
from engines.settings import Settings

if TYPE_CHECKING:
    from usage.chargeback import Chargeback
    from usage.ingest import ClusterAccounted
    from usage.summary import UsagePeriod

F = TypeVar("F", bound=Callable[..., Any])

COLLECT_EXIT = ("Exit status: 0 collected (with --once: caught up; following: stopped by SIGTERM); 1 any error "
                "(usage included, or a cluster that could not be read: each is named, with why); 75 busy: another "
                "collector holds a cluster's usage state (nothing was collected).")


@click.group("usage")
def usage() -> None:
    """Usage accounting: every GPU-hour traced to the team that used it."""


@usage.command("collect", epilog=COLLECT_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@config_option(from_settings=True)
@click.option("--cluster", "clusters", multiple=True,
              help="Only this cluster (repeatable); default: every cluster of the tree with a kubeconfig "
              "(settings kubeconfigs).")
@click.option("--once", is_flag=True, help="List (or resume), watch until caught up (the API server's first "
              "bookmark) or --watch-seconds, checkpoint and exit; default: follow until SIGTERM.")
@click.option("--watch-seconds", type=click.FloatRange(min=1), default=30.0, show_default=True,
              help="With --once: the longest wait for the bookmark; following: how long each watch lasts "
              "before the next one (a SIGTERM is honoured within it).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON: per cluster the workloads "
              "kept, the events applied, the resourceVersion and the covered ranges.")
@cli_errors
def collect_cmd(settings_file: Path | None, config_dir: Path | None, clusters: tuple[str, ...], once: bool,
                watch_seconds: float, as_json: bool) -> None:
    """Capture the Kueue Workloads (kueue.x-k8s.io/v1beta1: admission, conditions with their times) of
    every cluster with a kubeconfig into <state_dir>/usage/<cluster>/.

    The first run lists the Workloads and watches from the list's resourceVersion; every change is
    kept by workload uid (a deleted workload keeps its last body, retired to the day's finished
    segment) and checkpointed as it arrives.
    A restart resumes from the checkpoint (nothing lost, nothing counted twice); when the API server
    no longer has that version, it lists again. The checkpoint also records the time ranges the
    cluster was watched: the accounting reports the rest as missing, never as idle. Progress goes
    to stderr; the summary to stdout.
    """
    from engines.live.kubernetes import kube_apis_of
    from usage.collect import CollectOptions, collect_clusters
    from usage.collector_store import CollectorBusyError

    settings = load_cli_settings(settings_file, config_dir)
    names = chosen_clusters(settings, clusters)
    apis = kube_apis_of({name: settings.kubeconfigs[name] for name in names})
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        summaries = collect_clusters(apis, Path(settings.state_dir).resolve(),
                                     CollectOptions(once=once, watch_seconds=watch_seconds), stop, progress=to_stderr)
    except CollectorBusyError as exc:
        echo(str(exc), err=True)
        sys.exit(EXIT_BUSY)
    except KeyboardInterrupt:
        echo("interrupted: the checkpoints hold what was applied", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        echo(json.dumps({"clusters": [s.as_dict() for s in summaries]}, indent=2))
    for summary in summaries:
        if summary.failure is not None:
            echo(f"ERROR cluster {summary.cluster}: {summary.failure.kind} error: {summary.failure.message}",
                 err=True)
        elif not as_json:
            echo(f"{summary.cluster}: {summary.workloads_kept} workload(s) on the cluster, "
                 f"{summary.workloads_deleted} deleted one(s) retired, "
                 f"{summary.events_applied} event(s) applied, "
                 f"resourceVersion {summary.resource_version}, {len(summary.coverage)} covered range(s)")
    sys.exit(1 if any(s.failure for s in summaries) else 0)


def chosen_clusters(settings: Settings, asked: tuple[str, ...]) -> list[str]:
    """The clusters to collect: those asked for (each must be in the tree and have a kubeconfig), else
    every cluster of the tree that has one. Only the tree's cluster names are read: a tree breaking a
    governance rule still names its clusters, and what ran on them is worth keeping all the same."""
    from hypergov.validate import validate_dir

    require_tree_dir(settings.config_dir)
    tree = validate_dir(settings.config_dir).tree
    known = sorted(set(tree.clusters) | tree.cluster_files)
    unknown = [name for name in asked if name not in known]
    if unknown:
        raise click.UsageError(f"no cluster {', '.join(unknown)} in the tree; clusters are: {', '.join(known)}")
    without = [name for name in asked if name not in settings.kubeconfigs]
    if without:
        raise click.ClickException(f"no kubeconfig configured for cluster {', '.join(without)} (settings "
                                   "kubeconfigs: cluster name -> kubeconfig file)")
    chosen = list(dict.fromkeys(asked)) or [name for name in known if name in settings.kubeconfigs]
    if not chosen:
        raise click.ClickException("no cluster of the tree has a kubeconfig configured (settings kubeconfigs): "
                                   "nothing to collect")
    return chosen


ACCOUNT_EXIT = ("Exit status: 0 accounted (also when there was nothing new); 1 any error (usage included, a tree "
                "that fails validation, or usage the tree's capacity cannot hold: the pool and the instant are named).")
REPORT_EXIT = ("Exit status: 0 report made (also when the period holds no usage); 1 any error (usage included, a tree "
               "that fails validation when the month must be accounted first).")


def _month_option(help_text: str) -> Callable[[F], F]:
    return click.option("--month", "months", multiple=True, metavar="YYYY-MM", callback=check_months,
                        help=help_text)


@usage.command("account", epilog=ACCOUNT_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@config_option(from_settings=True)
@click.option("--cluster", "clusters", multiple=True, help="Only this cluster (repeatable); default: every "
              "cluster of the tree whose usage was collected.")
@_month_option("Account this UTC month (repeatable); default: every month the collector covered that is not "
               "final yet.")
@click.option("--refinalise", is_flag=True, help="Account final months again (after a correction to the tree); "
              "by default a month accounted after the collector covered its end is kept as it is.")
@cli_errors
def account_cmd(settings_file: Path | None, config_dir: Path | None, clusters: tuple[str, ...],
                months: tuple[str, ...], refinalise: bool) -> None:
    """Account what the collector kept into the usage warehouse (<state_dir>/usage/warehouse/):
    per team, cluster, instance type, priority class and 5-minute interval the GPU-, Neuron- and
    vCPU-hours used, own, borrowed, lent, idle and lost to preemption (usage/SEMANTICS.md), as
    Parquet files that DuckDB here, or Athena, query. Clusters are accounted in parallel."""
    settings = load_cli_settings(settings_file, config_dir)
    done = account_months(settings, clusters, months, refinalise=refinalise)
    for result in done:
        echo(f"{result.cluster}: accounted {', '.join(result.accounted) or 'nothing'}"
             + (f"; final, kept: {', '.join(result.kept_final)}" if result.kept_final else ""))


@usage.command("report", epilog=REPORT_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@config_option(from_settings=True)
@_month_option("The UTC month reported (default: the current month, to now).")
@click.option("--team", "teams", multiple=True, help="Only this team (repeatable).")
@click.option("--cluster", "clusters", multiple=True, help="Only this cluster (repeatable).")
@click.option("--format", "output", type=click.Choice(["markdown", "csv", "json"]), default="markdown",
              show_default=True, help="Markdown for people and merge requests, CSV (a row per team and pool) "
              "for spreadsheets, JSON for machines.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--charts", "charts_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write PNG charts here: each team's use per day against its guarantee, and each "
              "cluster's utilisation.")
@click.option("--no-account", is_flag=True, help="Report what the warehouse holds; by default the month is "
              "accounted first from what the collector kept.")
@cli_errors
def report_cmd(settings_file: Path | None, config_dir: Path | None, months: tuple[str, ...], teams: tuple[str, ...],
               clusters: tuple[str, ...], output: str, as_json: bool, charts_dir: Path | None,
               no_account: bool) -> None:
    """Report a month's usage per team and pool: hours used, own, borrowed, lent, idle guarantee
    and lost to preemption, each pool's utilisation, and every period whose usage was not collected
    (shown as missing, never as idle)."""
    from usage.render import render_period, write_charts  # numpy, DuckDB, matplotlib: loaded when asked
    from usage.warehouse import Warehouse, month_of, month_window, warehouse_dir

    if len(months) > 1:
        raise click.UsageError("--month is given once for a report")
    settings = load_cli_settings(settings_file, config_dir)
    now = int(utc_now_seconds())
    month = months[0] if months else month_of(now)
    if not no_account:
        account_months(settings, clusters, (month,), refinalise=False, quiet=True)
    start, end = month_window(month)
    period = Warehouse(warehouse_dir(Path(settings.state_dir))).period(start, min(end, now), teams=teams,
                                                                         clusters=clusters)
    charges = month_charges(settings, period)
    echo(render_period(period, "json" if as_json else output, title=f"GPU usage, {month}", charges=charges),
         nl=False)
    if charts_dir is not None:
        for path in write_charts(period, charts_dir):
            echo(f"chart: {path}", err=True)


def month_charges(settings: Settings, period: UsagePeriod) -> Chargeback | None:
    """The period's chargeback when the tree prices its instance types (org.yaml `pricing`)."""
    from usage.adapter import prices_for_tree
    from usage.chargeback import ChargebackError, chargeback

    tree = valid_tree(settings)
    if tree.org is None or tree.org.model.pricing is None:
        return None
    try:
        return chargeback(period.teams, period.pools, prices_for_tree(tree))
    except ChargebackError as exc:
        raise click.ClickException(str(exc)) from exc


COLLECTED_TRACE_DAYS = 30
COLLECTED_TRACE_FILE = "collected-jobs.jsonl"


def collected_trace_file(settings: Settings, *, say: Callable[[str], None] | None = None) -> Path | None:
    """The jobs the collector saw in the last `COLLECTED_TRACE_DAYS` days on any cluster, written
    as a trace (<state_dir>/usage/collected-jobs.jsonl) for the capacity simulator; None when no
    cluster's usage was collected or none of its jobs started in those days."""
    from capacity.trace import write_trace
    from usage.collector_store import CHECKPOINT_FILE, CollectorStore
    from usage.trace import collected_trace

    root = Path(settings.state_dir) / "usage"
    clusters = sorted(p.parent.name for p in root.glob(f"*/{CHECKPOINT_FILE}")) if root.is_dir() else []
    if not clusters:
        return None
    now = int(utc_now_seconds())
    trace = collected_trace([CollectorStore.of(Path(settings.state_dir), c) for c in clusters],
                            since=now - COLLECTED_TRACE_DAYS * 86400, until=now)
    if not trace.jobs:
        return None
    path = root / COLLECTED_TRACE_FILE
    write_trace(path, trace.jobs)
    if say is not None:
        say(f"capacity impact on the {len(trace.jobs)} job(s) collected in the last {COLLECTED_TRACE_DAYS} days "
            f"({', '.join(clusters)})" + (f"; not replayed: {sum(trace.skipped.values())}" if trace.skipped else ""))
    return path


def utc_now_seconds() -> float:
    import time

    return time.time()


def account_months(settings: Settings, clusters: tuple[str, ...], months: tuple[str, ...], *, refinalise: bool,
                   quiet: bool = False) -> list[ClusterAccounted]:
    """Account the months of the clusters whose usage was collected (or those asked for), with the
    pools of the validated tree."""
    from usage.adapter import AdapterError, cluster_pools
    from usage.collector_store import CHECKPOINT_FILE, usage_dir
    from usage.ingest import ClusterJob, account_clusters
    from usage.warehouse import warehouse_dir

    tree = valid_tree(settings)
    state_dir = Path(settings.state_dir).resolve()
    collected = sorted(name for name in tree.clusters if (usage_dir(state_dir, name) / CHECKPOINT_FILE).exists())
    unknown = [name for name in clusters if name not in tree.clusters]
    if unknown:
        raise click.UsageError(f"no cluster {', '.join(unknown)} in the tree; clusters are: "
                               f"{', '.join(sorted(tree.clusters))}")
    chosen = [name for name in (clusters or collected) if name in collected]
    try:
        jobs = [ClusterJob(name, tuple(cluster_pools(tree, name)), state_dir, warehouse_dir(state_dir),
                           now=int(utc_now_seconds()), months=months, refinalise=refinalise) for name in chosen]
    except AdapterError as exc:
        raise click.ClickException(str(exc)) from exc
    return account_clusters(jobs, progress=(lambda _: None) if quiet else to_stderr)


def _add_budgets() -> None:
    from cli.usage_budgets import budgets_cmd

    usage.add_command(budgets_cmd, "budgets")


_add_budgets()


def _add_import() -> None:
    from cli.usage_import import import_cmd

    usage.add_command(import_cmd, "import")


_add_import()


def _add_prices() -> None:
    from cli.usage_prices import prices_cmd

    usage.add_command(prices_cmd, "prices")


_add_prices()
