"""PNG views of a simulation: GPUs in use over time stacked by team, and the wait-time CDF per
team; for a diff, base and head side by side with the same colours per team. matplotlib runs
with the Agg backend (no display needed)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from capacity.results import ClusterResult

MAX_TEAMS_SHOWN = 12


def _colours(teams: Sequence[str]) -> dict[str, tuple[float, float, float, float]]:
    cmap = plt.get_cmap("tab20")
    return {team: cmap(n % 20) for n, team in enumerate(sorted(teams))}


def _shown(result: ClusterResult) -> list[int]:
    """Indices of the teams worth a colour of their own (the busiest); the rest are 'others'."""
    totals = [sum(row[i] for row in result.series.used) for i in range(len(result.series.teams))]
    order = sorted(range(len(totals)), key=lambda i: (-totals[i], result.series.teams[i]))
    return sorted(order[:MAX_TEAMS_SHOWN])


def _utilisation(ax: Axes, result: ClusterResult, colours: dict[str, tuple[float, float, float, float]]) -> None:
    series = result.series
    hours = [(t - result.start) / 3600 for t in series.times]
    shown = _shown(result)
    stacks = [[row[i] for row in series.used] for i in shown]
    labels = [series.teams[i] for i in shown]
    rest = [sum(v for i, v in enumerate(row) if i not in shown) for row in series.used]
    if any(rest):
        stacks.append(rest)
        labels.append("others")
    if hours:
        ax.stackplot(hours, stacks, labels=labels, step="post",
                     colors=[colours.get(label, (0.6, 0.6, 0.6, 1.0)) for label in labels])
    ax.axhline(result.capacity_total, color="black", linewidth=1, linestyle="--", label="capacity")
    ax.set_xlabel("hours since trace start")
    ax.set_ylabel("GPUs in use")
    ax.set_ylim(0, result.capacity_total * 1.05 or 1)
    ax.legend(loc="upper right", fontsize="x-small", ncol=2)


def _cdf(ax: Axes, result: ClusterResult, colours: dict[str, tuple[float, float, float, float]],
         *, style: str = "-", suffix: str = "") -> None:
    for team in result.teams:
        if not team.waits:
            continue
        n = len(team.waits)
        xs = [w / 3600 for w in team.waits]
        ys = [(k + 1) / n for k in range(n)]
        ax.step(xs, ys, where="post", linestyle=style, color=colours.get(team.team), label=team.team + suffix)
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_xlabel("wait until first admission (hours, log above 0.1)")
    ax.set_ylabel("share of the team's jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize="x-small")


def write_plots(result: ClusterResult, directory: str | os.PathLike[str], *, prefix: str = "") -> list[Path]:
    """`<cluster>-utilisation.png` and `<cluster>-wait-cdf.png` in `directory`."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    colours = _colours(result.series.teams)
    written = []
    fig, ax = plt.subplots(figsize=(11, 5))
    _utilisation(ax, result, colours)
    ax.set_title(f"{result.cluster}: GPUs in use by team ({result.utilisation:.0%} utilisation)")
    written.append(_save(fig, out / f"{prefix}{result.cluster}-utilisation.png"))
    fig, ax = plt.subplots(figsize=(8, 5))
    _cdf(ax, result, colours)
    ax.set_title(f"{result.cluster}: time to admission per team")
    written.append(_save(fig, out / f"{prefix}{result.cluster}-wait-cdf.png"))
    return written


def write_diff_plots(base: ClusterResult | None, head: ClusterResult | None, directory: str | os.PathLike[str],
                     *, labels: tuple[str, str] = ("base", "head")) -> list[Path]:
    """Utilisation of base and head stacked one above the other, and both CDFs in one chart
    (head solid, base dashed)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    present = [r for r in (base, head) if r is not None]
    if not present:
        return []
    name = present[0].cluster
    colours = _colours(sorted({t for r in present for t in r.series.teams}))
    fig, axes = plt.subplots(2, 1, figsize=(11, 8), sharex=True, squeeze=False)
    for ax, result, label in zip(axes[:, 0], (base, head), labels, strict=True):
        if result is None:
            ax.set_title(f"{label}: cluster absent")
            continue
        _utilisation(ax, result, colours)
        ax.set_title(f"{label}: GPUs in use by team ({result.utilisation:.0%} utilisation)")
    written = [_save(fig, out / f"{name}-utilisation-diff.png")]
    fig, ax = plt.subplots(figsize=(9, 6))
    if base is not None:
        _cdf(ax, base, colours, style="--", suffix=f" ({labels[0]})")
    if head is not None:
        _cdf(ax, head, colours, style="-", suffix=f" ({labels[1]})")
    ax.set_title(f"{name}: time to admission per team, {labels[0]} dashed, {labels[1]} solid")
    written.append(_save(fig, out / f"{name}-wait-cdf-diff.png"))
    return written


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
