"""`hypergov capacity suggest`: guarantee changes proposed from the last N days of collected usage
(`usage.suggest`), written into the tree where the amounts stand, validated, and replayed on the
org's own trace (the jobs the collector saw) under the current and the proposed tree."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from cli.options import config_option, tree_diff
from cli.output import echo
from cli.plan import cli_errors, load_cli_settings, to_stderr
from cli.usage import account_months, utc_now_seconds

SUGGEST_EXIT = ("Exit status: 0 nothing to propose; 2 changes proposed (written with --write); 1 any error (usage "
                "included, a tree that fails validation before or after the change).")
DAY = 86400


@click.command("suggest", epilog=SUGGEST_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@config_option(from_settings=True)
@click.option("--days", type=click.IntRange(min=1, max=366), default=30, show_default=True,
              help="The days of collected usage the proposals rest on (ending now).")
@click.option("--borrow-days", "borrow_days", type=click.IntRange(min=1, max=100), default=80, show_default=True,
              help="Raise a team that borrowed on at least this percent of the days.")
@click.option("--idle-below", "idle_below", type=click.IntRange(min=1, max=100), default=50, show_default=True,
              help="Lower a team whose median day used less than this percent of its guarantee.")
@click.option("--write", is_flag=True, help="Write the change into the config tree's files (review it with git "
              "diff); by default it is printed only.")
@click.option("--no-impact", is_flag=True, help="Skip replaying the collected jobs under both trees.")
@click.option("--json", "as_json", is_flag=True, help="Print proposals, notes, the diff and the impact as JSON.")
@cli_errors
def suggest_cmd(settings_file: Path | None, config_dir: Path | None, days: int, borrow_days: int, idle_below: int,
                write: bool, no_impact: bool, as_json: bool) -> None:
    """Propose guarantee changes from real use: raise a team that borrows nearly every day to what
    it typically uses, lower a team whose guarantee mostly idles to what covers nine days in ten,
    within what each pool holds (usage/SEMANTICS.md, "Suggestions"). The change is written where
    the amounts stand in the project files, validated, and its impact simulated on the jobs the
    collector saw in those days. Markdown for a merge request, or --json."""
    from hypergov.tree_files import read_tree_dir
    from hypergov.validate import shown_root, validate_files
    from usage.suggest import Thresholds, propose
    from usage.suggest_tree import SuggestionError, edited_files, guarantees_for_tree
    from usage.warehouse import Warehouse, month_of, warehouse_dir

    settings = load_cli_settings(settings_file, config_dir)
    root = Path(settings.config_dir)
    files = read_tree_dir(root)
    display = shown_root(root)
    current = validate_files(files, display_root=display)
    if not current.ok:
        raise click.ClickException(f"the tree fails validation ({len(current.problems)} problem(s)): run "
                                   "hypergov validate")
    now = int(utc_now_seconds())
    since = now - now % DAY - days * DAY
    months = tuple(sorted({month_of(t) for t in range(since, now, DAY)} | {month_of(now - 1)}))
    account_months(settings, (), months, refinalise=False, quiet=True)
    period = Warehouse(warehouse_dir(Path(settings.state_dir))).period(since, now - now % DAY)
    guarantees, capacity = guarantees_for_tree(current.tree)
    proposals, notes = propose(period.days, guarantees, capacity,
                               thresholds=Thresholds(borrow_days=borrow_days / 100, idle_use=idle_below / 100))
    try:
        changed = edited_files(current.tree, files, proposals, display_root=display)
    except SuggestionError as exc:
        raise click.ClickException(str(exc)) from exc
    proposed = validate_files({**files, **changed}, display_root=display)
    if not proposed.ok:
        problems = "; ".join(str(p) for p in proposed.problems[:3])
        raise click.ClickException(f"the proposed tree fails validation, nothing written: {problems}")
    diff = tree_diff(files, changed, display)
    impact = None if no_impact or not proposals else _impact(settings, current.tree, proposed.tree, since, now)
    if write:
        for key, data in changed.items():
            (root / key).write_bytes(data)
        to_stderr(f"wrote {len(changed)} file(s) under {root}")
    if as_json:
        echo(json.dumps(_as_json(proposals, notes, diff, impact, since, now), indent=2))
    else:
        echo(_markdown(proposals, notes, diff, impact, since, now))
    sys.exit(2 if proposals else 0)


def _impact(settings: Any, base: Any, head: Any, since: int, until: int) -> tuple[Any, dict[str, int]] | None:
    """The capacity diff of the collected jobs under both trees, or None with no jobs collected."""
    from capacity.adapter import cluster_capacities
    from capacity.diff import diff_reports
    from capacity.runner import run
    from usage.collector_store import CollectorStore
    from usage.trace import collected_trace

    stores = [CollectorStore.of(Path(settings.state_dir), name) for name in sorted(base.clusters)]
    trace = collected_trace(stores, since=since, until=until)
    if not trace.jobs:
        return None
    diff = diff_reports(run(cluster_capacities(base), trace.jobs), run(cluster_capacities(head), trace.jobs),
                        base_ref="current tree", head_ref="proposed", trace="collected jobs", jobs=len(trace.jobs))
    return diff, trace.skipped


def _day(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")


def _markdown(proposals: list[Any], notes: list[str], diff: str, impact: Any, since: int, until: int) -> str:
    from capacity.render import render_markdown

    lines = [f"## Guarantee changes suggested from use, {_day(since)} to {_day(until)}", ""]
    if not proposals:
        lines.append("Nothing to propose: every guarantee is used and no team borrows nearly every day.")
    else:
        lines += ["| team | cluster | instance type | now | proposed | why |", "|---|---|---|---:|---:|---|"]
        lines += [f"| {p.guarantee.team} | {p.guarantee.cluster} | {p.guarantee.instance_type} | "
                  f"{p.guarantee.amount} {p.guarantee.unit} | {p.proposed} {p.guarantee.unit} | {p.reason} |"
                  for p in proposals]
        lines += ["", "```diff", diff.rstrip("\n"), "```"]
    lines += [f"- {note}" for note in (["", *notes] if notes else [])]
    if impact is not None:
        capacity_diff, skipped = impact
        lines += ["", render_markdown(capacity_diff)]
        if skipped:
            lines.append("Jobs not replayed: " + ", ".join(f"{n} ({why})" for why, n in sorted(skipped.items())))
    elif proposals:
        lines += ["", "No collected jobs in these days to replay the change on."]
    return "\n".join(lines) + "\n"


def _as_json(proposals: list[Any], notes: list[str], diff: str, impact: Any, since: int, until: int) -> dict[str, Any]:
    from capacity.render import diff_dict

    return {"since": _day(since), "until": _day(until),
            "proposals": [{"team": p.guarantee.team, "cluster": p.guarantee.cluster,
                           "instance_type": p.guarantee.instance_type, "unit": p.guarantee.unit,
                           "current": p.guarantee.amount, "proposed": p.proposed, "reason": p.reason,
                           "evidence": vars(p.evidence)} for p in proposals],
            "notes": notes, "diff": diff,
            "impact": None if impact is None else {**diff_dict(impact[0]), "skipped": impact[1]}}
