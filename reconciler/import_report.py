"""What `hypergov import` prints: its report (`engines.importing.report.ImportReport`) as text,
Markdown and JSON, pure. The JSON shape is stable (README "Starting from a live org"):
`{"written": [paths], "clean": bool, "items": [{"kind", "object", "why", "file", "live"}]}`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engines.importing.report import KINDS, ImportItem, ImportReport
from hypergov.governance_markdown import escape_text

TITLES = {
    "not-expressible": "Live values the tree cannot say",
    "outside-personas": "Access outside the personas",
    "unmatched-principal": "Principals matching no persona",
    "unmatched-budget": "Budgets of no project",
    "renamed": "Objects hypergov names otherwise",
    "not-read": "Values not in the live org",
    "kept": "Governed values kept from the given tree",
    "invalid": "Rules the imported tree breaks",
}


def import_exit(report: ImportReport) -> int:
    """0 imported with nothing to report, 2 imported with report items."""
    return 0 if report.clean else 2


def _by_kind(items: Sequence[ImportItem]) -> list[tuple[str, list[ImportItem]]]:
    return [(k, [i for i in items if i.kind == k]) for k in KINDS if any(i.kind == k for i in items)]


def import_text(report: ImportReport, *, out: str) -> list[str]:
    lines = [f"wrote {len(report.written)} file(s) to {out}: {', '.join(report.written)}"]
    if report.clean:
        return [*lines, "nothing to report: the tree says everything the live org runs"]
    lines.append(f"{len(report.items)} item(s) the tree does not say as the live org does:")
    for kind, items in _by_kind(report.items):
        lines.append(f"{TITLES[kind]} ({kind}):")
        for item in items:
            where = f" [{item.file}]" if item.file else ""
            lines.append(f"  {item.object}{where}: {item.why}")
            if item.live:
                lines.append(f"    live: {json.dumps(item.live, sort_keys=True, default=str)}")
    return lines


def import_markdown(report: ImportReport, *, out: str) -> str:
    lines = [f"## hypergov import: {len(report.written)} file(s) written to `{escape_text(out)}`", ""]
    if report.clean:
        return "\n".join([*lines, "Nothing to report: the tree says everything the live org runs.", ""])
    for kind, items in _by_kind(report.items):
        lines += [f"### {TITLES[kind]}", "", "| object | file | why | live |", "|---|---|---|---|"]
        lines += [f"| {escape_text(i.object)} | {escape_text(i.file or '-')} | {escape_text(i.why)} | "
                  f"{escape_text(json.dumps(i.live, sort_keys=True, default=str)) if i.live else '-'} |"
                  for i in items]
        lines.append("")
    return "\n".join(lines)


def import_json(report: ImportReport) -> dict[str, Any]:
    return {"written": list(report.written), "clean": report.clean,
            "items": [{"kind": i.kind, "object": i.object, "why": i.why, "file": i.file, "live": dict(i.live)}
                      for i in report.items]}
