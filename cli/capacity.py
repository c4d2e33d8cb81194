"""`hypergov capacity ...`: simulate a config's quotas on a job trace, compare two refs of the
config on the same trace, and generate a synthetic trace. Exit codes: 0 ok, 1 the config is
invalid (or, with --fail-on-regression, a team gets worse) and usage errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from capacity.adapter import AdapterError, cluster_capacities, generate_for_tree
from capacity.diff import diff_reports
from capacity.engine import SimulationError
from capacity.philly import read_philly
from capacity.render import (
    console_for_tables,
    diff_dict,
    print_diff,
    print_report,
    render_markdown,
    report_dict,
)
from capacity.runner import CapacityReport, run
from capacity.spec import ClusterCapacity, Job, SimulationSettings
from capacity.synth import TraceShape
from capacity.trace import TraceError, read_trace, write_trace
from cli.options import config_option, require_tree_dir
from cli.output import echo
from hypergov.gitsource import NotInRepositoryError, RefNotFoundError, TreeLocation, locate_tree, read_tree_at
from hypergov.model.tree import GovernanceTree
from hypergov.validate import ValidationReport, validate_dir, validate_files

EXIT_INVALID = 1
EXIT_USAGE = 1  # hypergov-wide: 2 only ever means "changes"
F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str, code: int) -> NoReturn:
    click.secho(f"error: {message}", fg="red", err=True)
    sys.exit(code)


@click.group("capacity")
def capacity() -> None:
    """Simulate the teams' quotas on a job trace: who gets the GPUs, who waits, who is preempted.

    HyperPod task-governance / Kueue semantics: guaranteed quota per team and instance type,
    lending and borrowing within borrow limits, gang admission, priorities, reclaim and fair-share
    preemption (see capacity/SEMANTICS.md).
    """


def _run_options(fn: F) -> F:
    options = [
        click.option("--trace", "trace_path", required=True,
                     type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="Job trace: JSONL or CSV (submit,team,instance_type,gpus,duration,priority[,id,cluster]) "
                          "or a Philly cluster_job_log."),
        click.option("--trace-format", type=click.Choice(["auto", "jsonl", "csv", "philly"]), default="auto",
                     show_default=True, help="auto: .csv is CSV, anything else JSONL."),
        click.option("--instance-type", "philly_type", help="Philly traces: the instance type the jobs ran on."),
        click.option("--priority", "philly_priority", default="default", show_default=True,
                     help="Philly traces: the priority class of every job (unknown names get the lowest)."),
        click.option("--team-map", multiple=True, metavar="VC=TEAM",
                     help="Philly traces: run a virtual cluster's jobs as a team of the config (repeatable)."),
        click.option("--cluster", "clusters", multiple=True, metavar="NAME",
                     help="Simulate only this cluster (repeatable; default: every cluster of the tree)."),
        click.option("--progress", type=click.Choice(["checkpoint", "restart"]), default="checkpoint",
                     show_default=True, help="What a preempted job keeps: its last checkpoint, or nothing."),
        click.option("--checkpoint-interval", type=click.IntRange(min=1), default=1800, show_default=True,
                     help="Seconds between checkpoints (with --progress checkpoint)."),
        click.option("--json", "as_json", is_flag=True, help="Print the results as JSON."),
        click.option("--plots", "plots_dir", type=click.Path(file_okay=False, path_type=Path),
                     help="Write PNG plots (utilisation by team, wait-time CDF) into this directory."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _load_trace(path: Path, *, fmt: str, philly_type: str | None, philly_priority: str,
                team_map: Sequence[str]) -> list[Job]:
    try:
        if fmt == "philly":
            if not philly_type:
                raise click.UsageError("a Philly trace needs --instance-type (Philly records no instance types)")
            mapping = {}
            for item in team_map:
                vc, sep, team = item.partition("=")
                if not sep or not vc or not team:
                    raise click.UsageError(f"--team-map '{item}' must look like VC=TEAM")
                mapping[vc] = team
            imported = read_philly(path, instance_type=philly_type, priority=philly_priority, team_map=mapping)
            if imported.skipped:
                echo("philly: skipped " + ", ".join(f"{n} ({why})" for why, n in imported.skipped.items()),
                     err=True)
            return imported.jobs
        return read_trace(path, fmt=None if fmt == "auto" else fmt)  # type: ignore[arg-type]
    except TraceError as exc:
        _fail(str(exc), EXIT_USAGE)


def _invalid(report: ValidationReport, where: str) -> NoReturn:
    errors = [p for p in report.problems if p.severity.value == "error"]
    shown = "\n".join(f"  {p.pos}  {p.rule}  {p.message}" for p in errors[:10])
    _fail(f"the config tree at {where} is invalid ({len(errors)} error(s)); run 'hypergov validate' on it:\n{shown}",
          EXIT_INVALID)


def _capacities(tree: GovernanceTree, where: str) -> list[ClusterCapacity]:
    try:
        return cluster_capacities(tree)
    except AdapterError as exc:
        _fail(f"{where}: {exc}", EXIT_INVALID)


def _selected(clusters: Sequence[str], known: set[str]) -> tuple[str, ...]:
    unknown = sorted(set(clusters) - known)
    if unknown:
        raise click.UsageError(f"unknown cluster(s) {', '.join(unknown)}; the tree has {', '.join(sorted(known))}")
    return tuple(clusters)


def _simulate(capacities: list[ClusterCapacity], jobs: list[Job], settings: SimulationSettings,
              only: tuple[str, ...]) -> CapacityReport:
    try:
        return run(capacities, jobs, settings=settings, only=only)
    except SimulationError as exc:
        _fail(str(exc), EXIT_INVALID)


@capacity.command("simulate")
@config_option()
@_run_options
def simulate_cmd(config_dir: Path, trace_path: Path, trace_format: str, philly_type: str | None,
                 philly_priority: str, team_map: tuple[str, ...], clusters: tuple[str, ...], progress: str,
                 checkpoint_interval: int, as_json: bool, plots_dir: Path | None) -> None:
    """Replay a job trace on the quotas of the config tree, one simulation per cluster."""
    require_tree_dir(config_dir)
    validation = validate_dir(config_dir)
    if not validation.ok:
        _invalid(validation, str(config_dir))
    capacities = _capacities(validation.tree, str(config_dir))
    only = _selected(clusters, {c.name for c in capacities})
    jobs = _load_trace(trace_path, fmt=trace_format, philly_type=philly_type, philly_priority=philly_priority,
                       team_map=team_map)
    settings = SimulationSettings(progress=progress, checkpoint_interval=checkpoint_interval)  # type: ignore[arg-type]
    report = _simulate(capacities, jobs, settings, only)
    if plots_dir is not None:
        from capacity.plots import write_plots  # matplotlib is slow to import; only when asked
        for cluster in report.clusters:
            for path in write_plots(cluster, plots_dir):
                echo(f"wrote {path}", err=True)
    if as_json:
        echo(json.dumps(report_dict(report), indent=2))
    else:
        print_report(report, console_for_tables())


def _locate(config_dir: Path) -> TreeLocation:
    try:
        return locate_tree(config_dir)
    except NotInRepositoryError as exc:
        raise click.UsageError(str(exc)) from exc


def _tree_at(repo: Path, ref: str, config_subdir: str) -> GovernanceTree:
    try:
        files = read_tree_at(repo, ref, config_subdir)
    except RefNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    validation = validate_files(files, display_root=f"{ref}:{config_subdir}")
    if not validation.ok:
        _invalid(validation, f"{ref}:{config_subdir}")
    return validation.tree


@capacity.command("diff")
@click.option("--base", "base_ref", required=True, help="The ref quotas change from (e.g. origin/main).")
@click.option("--head", "head_ref", required=True, help="The ref quotas change to (e.g. the merge request's branch).")
@config_option()
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a team gets worse.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the merge-request Markdown section.")
@_run_options
def diff_cmd(base_ref: str, head_ref: str, config_dir: Path, fail_on_regression: bool, as_markdown: bool,
             trace_path: Path, trace_format: str, philly_type: str | None, philly_priority: str,
             team_map: tuple[str, ...], clusters: tuple[str, ...], progress: str, checkpoint_interval: int,
             as_json: bool, plots_dir: Path | None) -> None:
    """Simulate the same trace under the config at --base and at --head, side by side, and flag
    the teams whose guarantees or wait times get worse."""
    where = _locate(config_dir)
    base_caps = _capacities(_tree_at(where.repo, base_ref, where.subdir), base_ref)
    head_caps = _capacities(_tree_at(where.repo, head_ref, where.subdir), head_ref)
    only = _selected(clusters, {c.name for c in base_caps} | {c.name for c in head_caps})
    jobs = _load_trace(trace_path, fmt=trace_format, philly_type=philly_type, philly_priority=philly_priority,
                       team_map=team_map)
    settings = SimulationSettings(progress=progress, checkpoint_interval=checkpoint_interval)  # type: ignore[arg-type]
    diff = diff_reports(_simulate(base_caps, jobs, settings, only), _simulate(head_caps, jobs, settings, only),
                        base_ref=base_ref, head_ref=head_ref, trace=trace_path.name, jobs=len(jobs))
    if plots_dir is not None:
        from capacity.plots import write_diff_plots
        for cluster in diff.clusters:
            for path in write_diff_plots(cluster.base, cluster.head, plots_dir, labels=(base_ref, head_ref)):
                echo(f"wrote {path}", err=True)
    if as_json:
        echo(json.dumps(diff_dict(diff), indent=2))
    elif as_markdown:
        echo(render_markdown(diff))
    else:
        print_diff(diff, console_for_tables())
    if fail_on_regression and diff.regressions:
        sys.exit(EXIT_INVALID)


@capacity.command("generate")
@config_option()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the trace (.jsonl or .csv).")
@click.option("--jobs", type=click.IntRange(min=1, max=10_000_000), default=3000, show_default=True)
@click.option("--days", type=click.FloatRange(min=0.1, max=3650), default=7.0, show_default=True)
@click.option("--load", type=click.FloatRange(min=0.01, max=10), default=0.8, show_default=True,
              help="GPU-time asked for, as a fraction of each cluster's capacity over the trace.")
@click.option("--seed", type=int, default=7, show_default=True)
def generate_cmd(config_dir: Path, out: Path, jobs: int, days: float, load: float, seed: int) -> None:
    """Write a synthetic trace shaped by the tree's quotas and workload classes (diurnal load,
    heavy-tailed run times, bursty borrowing teams); the same seed gives the same trace."""
    require_tree_dir(config_dir)
    validation = validate_dir(config_dir)
    if not validation.ok:
        _invalid(validation, str(config_dir))
    try:
        trace = generate_for_tree(validation.tree, shape=TraceShape(jobs=jobs, days=days), seed=seed, load=load)
    except AdapterError as exc:
        _fail(str(exc), EXIT_INVALID)
    write_trace(out, trace)
    echo(f"wrote {len(trace)} jobs to {out}", err=True)


def _add_suggest() -> None:
    from cli.capacity_suggest import suggest_cmd  # reads the usage warehouse: DuckDB loads when it runs

    capacity.add_command(suggest_cmd)


_add_suggest()
