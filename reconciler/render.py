"""Plans for people: a terminal rendering and a Markdown rendering for merge requests.

Both are pure functions of `Plan` values (already masked), so golden-file tests pin them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engines.plan import Action, ApplyResult, Plan, ResourceChange

if TYPE_CHECKING:
    from reconciler.audit import AuditLog
    from reconciler.audit_store import PushOutcome

_MAX_VALUE = 120


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."


def summary_line(plan: Plan) -> str:
    if plan.is_empty:
        return f"{plan.stack}: no changes"
    c = plan.counts()
    return (f"{plan.stack}: {c['create']} to create, {c['update']} to update, "
            f"{c['replace']} to replace, {c['delete']} to delete{_imports(c)}")


def _imports(counts: dict[str, int]) -> str:
    """Adoptions are rare (state lost, an object made by hand): said only when there are some."""
    return f", {counts['import']} to import" if counts.get("import") else ""


def apply_line(result: ApplyResult) -> str:
    """One line per applied stack, as every apply path reports it."""
    if not result.ok:
        return f"FAILED {result.stack}: {result.failure}"
    unapplied = f", {len(result.skipped)} not applied (no kubeconfig)" if result.skipped else ""
    return f"applied {result.stack}: {len(result.applied)} change(s){unapplied}"


def _change_lines(change: ResourceChange) -> list[str]:
    head = f"  {change.symbol:>3} {change.address} ({change.type})"
    if change.note:
        head += f"  [{change.note}]"
    lines = [head]
    if change.action in (Action.UPDATE, Action.REPLACE, Action.IMPORT):
        for attr in change.attributes:
            flag = "  # forces replacement" if attr.forces_replacement else ""
            lines.append(f"        {attr.path}: {_value(attr.before)} -> {_value(attr.after)}{flag}")
    return lines


def render_text(plans: Sequence[Plan]) -> str:
    out: list[str] = []
    for plan in plans:
        out.append(summary_line(plan))
        for change in plan.changes:
            if change.action is not Action.NOOP:
                out.extend(_change_lines(change))
        out.extend(f"  note: {n}" for n in plan.notes)
    return "\n".join(out) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(plans: Sequence[Plan], *, title: str = "hypergov plan", leading_sections: Sequence[str] = (),
                    extra_sections: Sequence[str] = ()) -> str:
    """The comment: `leading_sections` (what the change means) above the resource tables,
    `extra_sections` (approvals, capacity impact) below them."""
    changed = [p for p in plans if not p.is_empty]
    shown = [p for p in plans if not p.is_empty or any(c.note for c in p.changes)]
    lines = [f"## {title}", ""]
    if leading_sections:
        lines += [*(line for section in leading_sections for line in (section, "")), "### Resource changes", ""]
    totals = {"create": 0, "update": 0, "replace": 0, "delete": 0, "import": 0}
    for p in plans:
        for k, v in p.counts().items():
            totals[k] += v
    lines.append(f"**{len(changed)}** of {len(plans)} stacks change: "
                 f"{totals['create']} to create, {totals['update']} to update, "
                 f"{totals['replace']} to replace, {totals['delete']} to delete{_imports(totals)}.")
    not_applied = sum(1 for p in plans for c in p.changes if c.note)
    if not_applied:
        lines[-1] += f" {not_applied} object(s) are planned but will not be applied (see the notes)."
    lines.append("")
    if shown:
        lines += ["| stack | create | update | replace | delete |", "|---|---:|---:|---:|---:|"]
        for p in shown:
            c = p.counts()
            lines.append(f"| `{p.stack}` | {c['create']} | {c['update']} | {c['replace']} | {c['delete']} |")
        lines.append("")
    for p in shown:
        lines += [f"<details><summary><code>{p.stack}</code>: {summary_line(p).split(': ', 1)[1]}</summary>", "",
                  "| | resource | type | change |", "|---|---|---|---|"]
        for change in p.changes:
            if change.action is Action.NOOP:
                continue
            detail = "; ".join(f"`{a.path}`: {_md_escape(_value(a.before))} → {_md_escape(_value(a.after))}"
                               for a in change.attributes) if change.action in (Action.UPDATE, Action.REPLACE,
                                                                                Action.IMPORT) else ""
            if change.note:
                detail = f"{detail} _{_md_escape(change.note)}_".strip()
            lines.append(f"| `{change.symbol}` | `{change.address}` | `{change.type}` | {detail} |")
        lines.append("")
        if p.notes:  # e.g. a destroy without an inventory: only terraform's state is destroyed
            lines += [*(f"> **note:** {_md_escape(n)}" for n in p.notes), ""]
        lines += ["</details>", ""]
    lines.extend(extra_sections)
    return "\n".join(lines).rstrip() + "\n"


def audit_lines(audit: AuditLog | None, error: str | None, records: Sequence[dict[str, Any]],
                push: PushOutcome | None) -> list[tuple[str, bool]]:
    """Where an apply's audit records went and how their push went, as (line, is a warning or
    error) pairs; a failed push is a warning: the records stay local and go with the next push."""
    if audit is None:
        return []
    lines: list[tuple[str, bool]] = [(f"ERROR {error}", True)] if error else []
    if records:
        seqs = f"{records[0]['seq']}-{records[-1]['seq']}" if len(records) > 1 else str(records[0]["seq"])
        lines.append((f"audit records {seqs} on {audit.store.branch} in {audit.store.repo}", False))
    if push is not None and push.error:
        lines.append((f"WARNING audit records not pushed ({audit.unpushed()} waiting; pushed with the next write): "
                      f"{push.error}", True))
    elif push is not None and push.remote and push.pushed:
        lines.append((f"pushed {push.pushed} audit record(s) to {push.remote}", False))
    return lines
