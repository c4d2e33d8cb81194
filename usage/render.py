"""A period in the format asked for (`hypergov usage report`): the text of `usage.report` and the
PNG charts of `usage.charts`, written where asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from usage.chargeback import Chargeback
from usage.chargeback_report import chargeback_json, chargeback_markdown
from usage.charts import cluster_png, team_png
from usage.report import as_json, csv_rows, markdown
from usage.summary import UsagePeriod

Format = Literal["markdown", "csv", "json"]


def render_period(period: UsagePeriod, output: str, *, title: str, charges: Chargeback | None = None) -> str:
    """The report in `output` format; with `charges` (the tree prices its instance types) the
    chargeback too (Markdown: a section after the usage; JSON: a `chargeback` key; CSV: the usage
    rows only, `--format json` carries the money)."""
    if output == "json":
        data = as_json(period)
        if charges is not None:
            data["chargeback"] = chargeback_json(charges)
        return json.dumps(data, indent=2) + "\n"
    if output == "csv":
        return csv_rows(period, table="teams")
    text = markdown(period, title=title)
    return text if charges is None else text + "\n" + chargeback_markdown(charges)


def write_charts(period: UsagePeriod, directory: Path) -> list[Path]:
    """One chart per team (its use per day against its guarantee) and, when the period is not
    filtered by team, one per cluster (its pools' utilisation per day)."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for team in sorted({row.team for row in period.teams}):
        written.append(_write(directory / f"team-{team}.png", team_png(period, team)))
    for cluster in sorted({pool.cluster for pool in period.pools}):
        try:
            written.append(_write(directory / f"cluster-{cluster}.png", cluster_png(period, cluster)))
        except ValueError:
            continue  # a period filtered by team: the cluster's utilisation is not in it
    return written


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
