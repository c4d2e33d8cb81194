"""What `hypergov drift` prints: the live scan's items (HyperPod task-governance objects read with
list calls) beside each stack's terraform refresh, as text or as the documented JSON, and the exit
status (0 no drift, 2 drift, 1 incomplete: an incomplete scan never reads as "no drift")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engines.live.items import DriftItem, LiveScan
from engines.plan import Drift, DriftOutcome, Failure, StackName, failure_lines

EXIT_DRIFT = 2


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
            "complete": complete, "items": [i.as_dict() for i in scan.items],
            "errors": [{"stack": f.stack, "scanning": f.what, "error": f.failure.as_dict()} for f in scan.failures],
            "refreshed": entries}


def drift_text(scan: LiveScan, refreshed: Mapping[StackName, DriftOutcome]) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr ERROR lines): per stack DRIFTED or in sync with what drifted; a stack
    that could not be read is only an ERROR line (unless what was read already shows drift)."""
    out: list[str] = []
    unread = {f.stack for f in scan.failures}
    for stack, outcome in refreshed.items():
        items = scan.items_of(stack)
        changes = outcome.changes if isinstance(outcome, Drift) else ()
        if items or changes:
            out.append(f"{stack}: DRIFTED")
        elif isinstance(outcome, Drift) and stack not in unread:
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
    who = " ".join(filter(None, [f"by {item.changed_by}" if item.changed_by else "",
                                 f"at {item.changed_at}" if item.changed_at else ""]))
    lines = [f"  {item.kind:<9} {item.address} ({item.account} {item.region}){f' {who}' if who else ''}"]
    lines += [f"      {a.path}: {_shown(a.expected)} -> {_shown(a.live)}" for a in item.attributes]
    return [*lines, f"      fix: {item.fix}"]


def _shown(value: Any) -> str:
    return "(none)" if value is None else repr(value)


def scan_summary(scan: LiveScan, stacks: Sequence[str]) -> str:
    """One stderr line: what the live scan read and what it cost."""
    scanned = len(scan.stacks)
    if not scanned:
        return f"live scan: none of the {len(stacks)} stack(s) has HyperPod task-governance objects"
    return (f"live scan: {scanned} task-governance cluster(s), {len(scan.items)} item(s), {scan.api_calls} API "
            f"call(s) in {scan.seconds:.2f} s{'' if scan.complete else ' (INCOMPLETE)'}")
