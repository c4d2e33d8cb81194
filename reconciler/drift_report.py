"""What `hypergov drift` prints: the live scan's items (every governed object read with list calls
and compared with the tree) and, with `--deep`, each stack's terraform refresh; as text, as the
documented JSON, or as Markdown (an issue or a merge-request comment). The exit status: 0 no
drift, 2 drift, 1 incomplete: an incomplete scan never reads as "no drift".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from engines.live.items import DriftItem, DriftKind, LiveScan
from engines.plan import Drift, DriftOutcome, Failure, ResourceChange, StackName, failure_lines
from hypergov import naming

EXIT_DRIFT = 2
KIND_ORDER: tuple[DriftKind, ...] = ("unbounded", "unmanaged", "missing", "changed")  # the most serious first


def drift_exit(scan: LiveScan, refreshed: Mapping[StackName, DriftOutcome]) -> int:
    if not scan.complete or any(isinstance(o, Failure) for o in refreshed.values()):
        return 1
    drifted = scan.items or any(isinstance(o, Drift) and o.drifted for o in refreshed.values())
    return EXIT_DRIFT if drifted else 0


def drift_json(scan: LiveScan, refreshed: Mapping[StackName, DriftOutcome], *, commit: str | None) -> dict[str, Any]:
    """The live scan's report (`seconds` is its wall time) and, per stack, its terraform refresh."""
    entries: list[dict[str, Any]] = []
    for stack, outcome in refreshed.items():
        if isinstance(outcome, Failure):
            entries.append({"stack": stack, "error": outcome.as_dict()})
        else:
            entries.append({"stack": stack, "drifted": outcome.drifted, "changes": [
                {"address": c.address, "action": c.action.value,
                 "attributes": [{"path": a.path, "before": a.before, "after": a.after} for a in c.attributes]}
                for c in outcome.changes]})
    complete = scan.complete and not any(isinstance(o, Failure) for o in refreshed.values())
    return {"commit": commit, "scanned_at": scan.scanned_at, "seconds": scan.seconds, "api_calls": scan.api_calls,
            "api_calls_by_service": dict(scan.calls_by_service), "complete": complete,
            "items": [i.as_dict() for i in scan.items],
            "errors": [{"stack": f.stack, "scanning": f.what, "error": f.failure.as_dict()} for f in scan.failures],
            "not_read": list(scan.not_read), "refreshed": entries}


def _stacks_shown(scan: LiveScan, refreshed: Mapping[StackName, DriftOutcome]) -> list[str]:
    """The scanned stacks, in the order of the refresh when there is one (dependency order)."""
    order = list(refreshed)
    return order + [s for s in scan.stacks if s not in refreshed]


def drift_text(scan: LiveScan, refreshed: Mapping[StackName, DriftOutcome]) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr ERROR lines): per stack DRIFTED or in sync with what drifted; a stack
    that could not be read is only an ERROR line (unless what was read already shows drift)."""
    out: list[str] = []
    unread = {f.stack for f in scan.failures}
    for stack in _stacks_shown(scan, refreshed):
        outcome = refreshed.get(StackName(stack))
        items = scan.items_of(stack)
        changes = outcome.changes if isinstance(outcome, Drift) else ()
        if items or changes:
            out.append(f"{stack}: DRIFTED")
        elif not isinstance(outcome, Failure) and stack not in unread:
            out.append(f"{stack}: in sync")
        for c in changes:
            diffs = ", ".join(f"{a.path} {a.before!r} -> {a.after!r}" for a in c.attributes)
            out.append(f"  ~ {c.address}: {diffs}")
        out += [line for item in items for line in _item_lines(item)]
    errors = failure_lines({StackName(s): o for s, o in refreshed.items() if isinstance(o, Failure)})
    errors += [f"{f.stack}: {f.failure.kind}: {f.failure.message} (scanning {f.what}; the scan is incomplete)"
               for f in scan.failures]
    return out, errors


def _item_lines(item: DriftItem) -> list[str]:
    lines = [f"  {item.kind:<9} {item.address} ({item.account} {item.region}){_who(item, prefix=' ')}"]
    lines += [f"      {a.path}: {_shown(a.expected)} -> {_shown(a.live)}" for a in item.attributes]
    return [*lines, f"      fix: {item.fix}"]


def _who(item: DriftItem, *, prefix: str = "") -> str:
    who = " ".join(filter(None, [f"by {item.changed_by}" if item.changed_by else "",
                                 f"at {item.changed_at}" if item.changed_at else ""]))
    return f"{prefix}{who}" if who else ""


def _shown(value: Any) -> str:
    return "(none)" if value is None else repr(value)


def scan_summary(scan: LiveScan) -> str:
    """One stderr line: what the live scan read and what it cost."""
    by_service = ", ".join(f"{service} {n}" for service, n in scan.calls_by_service.items())
    line = (f"live scan: {len(scan.stacks)} stack(s), {len(scan.items)} item(s), {scan.api_calls} API call(s)"
            f"{f' ({by_service})' if by_service else ''} in {scan.seconds:.2f} s"
            f"{'' if scan.complete else ' (INCOMPLETE)'}")
    return "\n".join([line, *(f"not read: {what}" for what in scan.not_read)])


def drift_markdown(scan: LiveScan, refreshed: Mapping[StackName, DriftOutcome], *, commit: str | None,
                   compared_with: str) -> str:
    """The report as Markdown: a verdict, a count per kind, one table per stack, the fixes, and
    what could not be read."""
    counts = Counter(i.kind for i in scan.items)
    deep = sum(len(o.changes) for o in refreshed.values() if isinstance(o, Drift))
    verdict = ("incomplete: part of the org could not be read" if drift_exit(scan, refreshed) == 1 else
               "drift found" if scan.items or deep else "no drift")
    lines = [f"## hypergov drift: {verdict}", "",
             f"Compared {compared_with}{f' (commit `{commit[:12]}`)' if commit else ''} with live state scanned at "
             f"{scan.scanned_at}: {len(scan.stacks)} stack(s), {scan.api_calls} API calls in {scan.seconds:.1f} s.", ""]
    if counts or deep:
        lines += ["| kind | items |", "| --- | ---: |"]
        lines += [f"| {kind} | {counts[kind]} |" for kind in KIND_ORDER if counts[kind]]
        lines += [f"| terraform refresh changes | {deep} |"] if deep else []
        lines.append("")
    for stack in _stacks_shown(scan, refreshed):
        outcome = refreshed.get(StackName(stack))
        lines += _stack_section(stack, scan.items_of(stack), outcome.changes if isinstance(outcome, Drift) else ())
    errors = [f"- **{f.stack}**: {f.failure.kind}: {_md(f.failure.message)} (scanning {_md(f.what)})"
              for f in scan.failures]
    errors += [f"- **{s}** (terraform refresh): {o.kind}: {_md(o.message)}" for s, o in refreshed.items()
               if isinstance(o, Failure)]
    if errors:
        lines += ["### Could not be read", "", *errors, ""]
    if scan.not_read:
        lines += ["### Not read (by configuration)", "", *(f"- {_md(what)}" for what in scan.not_read), ""]
    return "\n".join(lines).rstrip() + "\n"


def _stack_section(stack: str, found: Sequence[DriftItem], changes: Sequence[ResourceChange]) -> list[str]:
    """One stack's table (the most serious kinds first) and its fixes; nothing when in sync."""
    if not found and not changes:
        return []
    items = sorted(found, key=lambda i: (KIND_ORDER.index(i.kind), i.address))
    lines = [f"### {stack}", "", "| kind | object | attribute | expected | live | changed by |",
             "| --- | --- | --- | --- | --- | --- |"]
    for item in items:
        place = f"`{_md(item.address)}`<br>{item.account} {item.region}"
        if not item.attributes:
            lines.append(f"| {item.kind} | {place} | | | | {_md(_who(item))} |")
        for n, a in enumerate(item.attributes):
            first = n == 0
            lines.append(f"| {item.kind if first else ''} | {place if first else ''} | `{a.path}` | "
                         f"{_md(_shown(a.expected))} | {_md(_shown(a.live))} | {_md(_who(item)) if first else ''} |")
    lines += [f"| refresh | `{c.address}` | `{a.path}` | {_md(repr(a.before))} | {_md(repr(a.after))} | |"
              for c in changes for a in c.attributes]
    return [*lines, "", "Fixes:", "", *sorted({f"- `{i.address}`: {i.fix}" for i in items}), ""]


def _md(text: str, limit: int = 200) -> str:
    """A value fit for one table cell: pipes escaped, newlines folded, long values cut."""
    cell = text.replace("|", "\\|").replace("\n", " ")
    return cell if len(cell) <= limit else cell[:limit - 1] + "…"


def filtered(scan: LiveScan, *, clusters: Sequence[str]) -> LiveScan:
    """Only the items of objects on these clusters (their HyperPod, EKS and Kubernetes objects and
    whatever the cluster's stack declares)."""
    if not clusters:
        return scan
    wanted = set(clusters)
    stacks = {naming.cluster_stack(c) for c in wanted}
    return replace(scan, items=tuple(i for i in scan.items if i.cluster in wanted or i.stack in stacks))
