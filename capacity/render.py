"""Views of simulation results and diffs: rich terminal tables, JSON-ready dicts, and the
Markdown section a merge-request plan includes when quotas change."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from capacity.diff import CapacityDiff, ClusterDiff, TeamDiff, format_duration
from capacity.results import ClusterResult, TeamResult
from capacity.runner import CapacityReport


def report_dict(report: CapacityReport, *, series: bool = False) -> dict[str, Any]:
    return {"clusters": [c.as_dict(series=series) for c in report.clusters], "unrouted_jobs": report.unrouted}


def diff_dict(diff: CapacityDiff) -> dict[str, Any]:
    return {
        "base": diff.base_ref, "head": diff.head_ref, "trace": diff.trace, "jobs": diff.jobs,
        "worse": [{"cluster": c, "team": t.team, "reasons": list(t.reasons)} for c, t in diff.regressions],
        "clusters": [{
            "cluster": c.cluster,
            "base": c.base.as_dict(series=False) if c.base else None,
            "head": c.head.as_dict(series=False) if c.head else None,
            "teams": [{"team": t.team, "worse": t.worse, "reasons": list(t.reasons)} for t in c.teams],
        } for c in diff.clusters],
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _gpus(team: TeamResult | None) -> str:
    if team is None:
        return "-"
    return "+".join(str(g) for _, g in sorted(team.guaranteed_gpus.items())) or "0"


def console_for_tables() -> Console:
    """A console wide enough for the tables even when the output is piped (rich assumes 80)."""
    console = Console()
    return console if console.is_terminal else Console(width=160)


def print_report(report: CapacityReport, console: Console) -> None:
    for cluster in report.clusters:
        console.print(cluster_table(cluster))
        console.print(cluster_summary(cluster))
    if report.unrouted:
        console.print(f"[yellow]{report.unrouted} job(s) matched no cluster of the tree (unknown cluster or "
                      "instance type) and were left out[/yellow]")


def cluster_table(cluster: ClusterResult) -> Table:
    table = Table(title=f"{cluster.cluster}: {cluster.capacity_total} GPUs, {cluster.jobs} jobs", title_justify="left")
    for header in ("team", "guaranteed GPUs", "jobs", "own GPU-h", "borrowed GPU-h", "p50 wait", "p90 wait",
                   "p99 wait", "at once, own quota", "preempted", "caused", "never run"):
        table.add_column(header, justify="left" if header == "team" else "right")
    for t in cluster.teams:
        table.add_row(t.team, _gpus(t), str(t.jobs), f"{t.gpu_hours_own:,.0f}", f"{t.gpu_hours_borrowed:,.0f}",
                      format_duration(t.wait(50)), format_duration(t.wait(90)), format_duration(t.wait(99)),
                      _pct(t.immediate_share), str(t.preemptions_suffered), str(t.preemptions_caused),
                      str(t.never_admitted))
    return table


def cluster_summary(cluster: ClusterResult) -> str:
    unroutable = sum(cluster.unroutable.values())
    extra = f", {unroutable} job(s) of teams or instance types the cluster does not know" if unroutable else ""
    return (f"utilisation {cluster.utilisation:.1%} over {format_duration(cluster.horizon_s)}, "
            f"idle {cluster.idle_gpu_hours:,.0f} GPU-h, {cluster.preemptions} preemption(s){extra}")


def print_diff(diff: CapacityDiff, console: Console) -> None:
    for cluster in diff.clusters:
        console.print(diff_table(cluster, diff))
    regressions = diff.regressions
    if regressions:
        console.print(f"[red]{len(regressions)} team(s) get worse:[/red]")
        for name, team in regressions:
            console.print(f"  [red]{name}/{team.team}[/red]: " + "; ".join(team.reasons))
    else:
        console.print("[green]no team gets worse[/green]")


def diff_table(cluster: ClusterDiff, diff: CapacityDiff) -> Table:
    table = Table(title=f"{cluster.cluster}: {diff.base_ref} -> {diff.head_ref}", title_justify="left")
    for header in ("team", "guaranteed GPUs", "p50 wait", "p90 wait", "at once, own quota", "borrowed GPU-h",
                   "preempted", ""):
        table.add_column(header, justify="left" if header in ("team", "") else "right")
    for t in cluster.teams:
        table.add_row(t.team, *_cells(t), "[red]worse[/red]" if t.worse else "")
    return table


def _cells(t: TeamDiff) -> list[str]:
    b, h = t.base, t.head

    def arrow(before: str, after: str) -> str:
        return before if before == after else f"{before} -> {after}"

    def wait(team: TeamResult | None, pct: int) -> str:
        return format_duration(team.wait(pct)) if team else "-"

    return [arrow(_gpus(b), _gpus(h)), arrow(wait(b, 50), wait(h, 50)), arrow(wait(b, 90), wait(h, 90)),
            arrow(_pct(b.immediate_share if b else None), _pct(h.immediate_share if h else None)),
            arrow(f"{b.gpu_hours_borrowed:,.0f}" if b else "-", f"{h.gpu_hours_borrowed:,.0f}" if h else "-"),
            arrow(str(b.preemptions_suffered) if b else "-", str(h.preemptions_suffered) if h else "-")]


def render_markdown(diff: CapacityDiff) -> str:
    """The capacity-impact section of a merge-request plan (GitHub/GitLab Markdown)."""
    regressions = diff.regressions
    lines = ["### Capacity impact", "",
             f"The same trace (`{diff.trace}`, {diff.jobs:,} jobs) simulated under `{diff.base_ref}` and "
             f"`{diff.head_ref}`."]
    if regressions:
        lines.append(f"**{len(regressions)} team(s) get worse:** " +
                     ", ".join(f"`{c}/{t.team}`" for c, t in regressions) + ".")
    else:
        lines.append("No team gets worse.")
    for cluster in diff.clusters:
        lines += ["", f"#### {cluster.cluster}", "",
                  "| team | guaranteed GPUs | p50 wait | p90 wait | started at once on own quota | borrowed GPU-h "
                  "| preempted | |", "|---|---:|---:|---:|---:|---:|---:|---|"]
        for t in cluster.teams:
            flag = "**worse**: " + "; ".join(t.reasons).replace(" -> ", " → ") if t.worse else ""
            lines.append(f"| {t.team} | " + " | ".join(c.replace(" -> ", " → ") for c in _cells(t)) + f" | {flag} |")
        lines.append("")
        lines.append("Cluster: " + _cluster_line(cluster))
    lines += ["", "<sub>Simulated with HyperPod task-governance / Kueue semantics (capacity/SEMANTICS.md); "
              "waits are time from submission to first admission.</sub>", ""]
    return "\n".join(lines)


def _cluster_line(cluster: ClusterDiff) -> str:
    def one(c: ClusterResult | None) -> str:
        return "absent" if c is None else f"utilisation {c.utilisation:.1%}, idle {c.idle_gpu_hours:,.0f} GPU-h, " \
                                          f"{c.preemptions} preemptions"
    return f"{one(cluster.base)} → {one(cluster.head)}"
