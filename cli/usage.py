"""`hypergov usage ...`: usage accounting. `usage collect` captures what ran on each cluster
(Kueue Workloads, with their admission and conditions) into the state directory, resumably
(`usage.collect`); it reads the clusters with the drift scan's Kubernetes clients."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

import click

from cli.options import config_option, require_tree_dir
from cli.plan import EXIT_BUSY, cli_errors, load_cli_settings, to_stderr
from engines.settings import Settings

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
        click.echo(str(exc), err=True)
        sys.exit(EXIT_BUSY)
    except KeyboardInterrupt:
        click.echo("interrupted: the checkpoints hold what was applied", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        click.echo(json.dumps({"clusters": [s.as_dict() for s in summaries]}, indent=2))
    for summary in summaries:
        if summary.failure is not None:
            click.echo(f"ERROR cluster {summary.cluster}: {summary.failure.kind} error: {summary.failure.message}",
                       err=True)
        elif not as_json:
            click.echo(f"{summary.cluster}: {summary.workloads_kept} workload(s) on the cluster, "
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
