"""The merge-request comment's "Governance summary": what a change means, in the order a reviewer
weighs it, readable in ten seconds.

First one table of every guarantee that changes (team, cluster, instance type, instances and
GPUs before → after), then each touched cluster's guaranteed GPUs against the GPUs it has, then
one block per org, cluster and project touched: lending, fair share and priorities first, then
permissions, members, the budget, workload classes and any other field. Unchanged entities get
nothing; an empty diff is one line. Pure: a `GovernanceDiff` in, Markdown out.

Names in the tree follow patterns without Markdown syntax, so they go into code spans; free text
(descriptions, tag values, people's display names) is escaped, so that a value cannot close a
table cell, open an HTML comment and hide the rest of the comment, or render as a link.

Given what the identity store said of the Identity Center members (`people`, read by the caller),
each such member line says who it is: a group's number of people, with their names folded under
it, a user's display name, "not in the identity store", or "not checked (why)": never a count the
store did not give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypergov.governance_diff import (
    BudgetChange,
    Change,
    ClusterDiff,
    Entry,
    FieldChange,
    GovernanceDiff,
    OrgDiff,
    ProjectDiff,
    SharingChange,
    WorkloadClassDiff,
)
from hypergov.identity_people import MemberPeople, NotChecked, People, Person
from hypergov.model.common import identity_center_member

TITLE = "### Governance summary"
ARROW = " → "
NONE = "—"
_MAX_TEXT = 120
# Only what can act mid-line: emphasis, code, links, HTML and entities, table cells, strikethrough
# (`#`, `-`, `+` and `1.` act only at a line's start, where free text never goes).
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>|~&])")


def escape_text(text: str, *, limit: int | None = _MAX_TEXT) -> str:
    """Free text safe inside a paragraph or a table cell: one line, at most `limit` characters,
    every mark that acts mid-line backslash-escaped (CommonMark then renders it literally)."""
    line = " ".join(text.split())
    if limit is not None and len(line) > limit:
        line = line[: limit - 3] + "..."
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", line)


def code(name: str) -> str:
    """A name in a code span; `|` still ends a table cell inside one, so it is escaped too."""
    return "`" + name.replace("`", "'").replace("|", "\\|") + "`"


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _change(change: Change[int | None] | Change[int]) -> str:
    """`8 → 16`, or just `8` when the value is the same on both sides."""
    if change.before == change.after:
        return _count(change.before)
    return _count(change.before) + ARROW + _count(change.after)


def _opt(value: str | None) -> str:
    return NONE if value is None else value


def governance_markdown(diff: GovernanceDiff, people: People | None = None) -> str:
    """The summary of `diff`; with `people` (principal -> the identity store's answer), the
    Identity Center member lines say whom they bring or take away."""
    if diff.empty:
        return f"{TITLE}\n\nNo governance changes."
    lines = [TITLE, ""]
    lines += _quota_table(diff)
    lines += _guarantee_table(diff.clusters)
    if diff.org is not None:
        lines += _block("Org (`org.yaml`)", _org_lines(diff.org, people))
    for cluster in diff.clusters:
        if not cluster.only_guarantees:
            lines += _block(f"Cluster {code(cluster.name)}{_status_note(cluster.status)}", _cluster_lines(cluster))
    for project in diff.projects:
        body = _project_lines(project, people)
        if not body and project.status == "changed":
            continue  # only its guarantees changed: the quota table says it all
        lines += _block(f"Project {code(project.name)}{_status_note(project.status)}", body)
    return "\n".join(lines).rstrip()


def _status_note(status: str) -> str:
    return {"added": " (new)", "removed": " (removed)"}.get(status, "")


def _block(title: str, body: list[str]) -> list[str]:
    return [f"**{title}**", "", *body, ""]


def _quota_table(diff: GovernanceDiff) -> list[str]:
    rows = [q for p in diff.projects for q in p.quotas]
    if not rows:
        return []
    lines = ["| team | cluster | instance type | instances | GPUs |", "|---|---|---|---:|---:|"]
    lines += [f"| {code(q.team)} | {code(q.cluster)} | {code(q.instance_type)} | {_change(q.instances)} | "
              f"{_change(q.gpus)} |" for q in sorted(rows, key=lambda q: (q.cluster, q.team, q.instance_type))]
    return [*lines, ""]


def _share(guaranteed: int | None, capacity: int | None) -> str:
    if guaranteed is None or not capacity:
        return "?"
    return f"{guaranteed / capacity:.0%}"


def _guarantee_table(clusters: Sequence[ClusterDiff]) -> list[str]:
    """Every touched cluster whose guarantees or capacity moved: all teams' guaranteed GPUs
    against the GPUs the cluster has, and the share guaranteed."""
    moved = [c for c in clusters if c.guaranteed_gpus.before != c.guaranteed_gpus.after
             or c.capacity_gpus.before != c.capacity_gpus.after]
    if not moved:
        return []
    lines = ["| cluster | GPUs guaranteed to teams | GPUs in the cluster | share guaranteed |", "|---|---:|---:|---:|"]
    for c in moved:
        share: Change[str] = Change(_share(c.guaranteed_gpus.before, c.capacity_gpus.before),
                                    _share(c.guaranteed_gpus.after, c.capacity_gpus.after))
        share_text = share.before if share.before == share.after else share.before + ARROW + share.after
        lines.append(f"| {code(c.name)} | {_change(c.guaranteed_gpus)} | {_change(c.capacity_gpus)} | {share_text} |")
    return [*lines, ""]


def _pair(before: str | None, after: str | None, *, new: bool = False) -> str:
    """`before → after`; the value alone when it did not change or its entity is new (the
    block's title says so), `—` for a side where it is absent."""
    if before == after or new:
        return _opt(after)
    return _opt(before) + ARROW + _opt(after)


def _entry(entry: Entry, people: People | None = None) -> list[str]:
    sign = "+" if entry.added else "-"
    group = f" ({entry.group})" if entry.group else ""
    line = f"  - {code(f'{sign} {entry.value}')}{group}"
    if people is None or entry.value not in people:
        return [line]
    return _member_people(line, entry, people[entry.value])


def _people_count(count: int) -> str:
    return "1 person" if count == 1 else f"{count:,} people"


def _member_people(line: str, entry: Entry, answer: MemberPeople) -> list[str]:
    """The member's line with what the identity store said; what would leave a persona without
    anyone is bold where the change adds it (a removed member merely goes)."""
    def flagged(text: str) -> str:
        return f"{line}: **{text}**" if entry.added else f"{line}: {text}"

    if isinstance(answer, NotChecked):
        return [f"{line}: not checked ({escape_text(answer.reason)})"]
    if answer is None:
        return [flagged("not in the identity store")]
    kind, _ = identity_center_member(entry.value)
    if kind == "user":
        names = ", ".join(escape_text(p.display_name) for p in answer if p.display_name)
        return [f"{line}: {_people_count(len(answer))}" + (f" ({names})" if names else "")]
    if not answer:
        return [flagged("no members")]
    return [f"{line}: {_people_count(len(answer))}", *_who(answer)]


# The list item's content column: indented so, GitHub and GitLab render the block inside the item.
_IN_ITEM = "    "


def _who(people: Sequence[Person]) -> list[str]:
    """The people folded under a member line (the blank lines let the list inside render)."""
    names = [f"{_IN_ITEM}- {code(p.user_name)} {escape_text(p.display_name)}".rstrip() for p in people]
    return [f"{_IN_ITEM}<details><summary>who</summary>", "", *names, "", f"{_IN_ITEM}</details>"]


def _list(label: str, entries: Sequence[Entry], people: People | None = None) -> list[str]:
    return [f"- **{label}**", *(line for e in entries for line in _entry(e, people))] if entries else []


def _field(change: FieldChange, *, new: bool = False) -> str:
    before = None if change.before is None else escape_text(change.before)
    after = None if change.after is None else escape_text(change.after)
    return f"- {code(change.path)}: {_pair(before, after, new=new)}"


def _percent(value: int | None) -> str | None:
    return None if value is None else f"{value}%"


def _sharing(change: SharingChange, *, new: bool) -> str:
    strategy = _pair(change.strategy.before, change.strategy.after, new=new)
    limit = change.borrow_limit_percent
    if limit.before is None and limit.after is None:  # neither side borrows
        return f"- **Sharing** on {code(change.cluster)}: {strategy}"
    return (f"- **Sharing** on {code(change.cluster)}: {strategy}, borrow limit "
            f"{_pair(_percent(limit.before), _percent(limit.after), new=new)}")


def _usd(value: int | None) -> str | None:
    return None if value is None else f"${value:,}"


def _alerts(values: tuple[int, ...]) -> str:
    return ", ".join(f"{v}%" for v in values) or "none"


def _budget(change: BudgetChange, *, new: bool) -> list[str]:
    """One line for a budget added or removed, else a line per part that changed."""
    monthly, alerts = change.monthly_usd, change.alert_at_percent
    if monthly.after is None:
        return [f"- **Budget** removed (was {_usd(monthly.before)} a month)"]
    if monthly.before is None:
        label = "**Budget**:" if new else "**Budget** added:"
        return [f"- {label} {_usd(monthly.after)} a month, alerts at {_alerts(alerts.after)}"]
    lines = []
    if monthly.before != monthly.after:
        lines.append(f"- **Budget**: {_pair(_usd(monthly.before), _usd(monthly.after))} a month")
    if alerts.before != alerts.after:
        lines.append(f"- **Budget alerts** at: {_alerts(alerts.before)}{ARROW}{_alerts(alerts.after)}")
    return lines


def _workload(diff: WorkloadClassDiff) -> list[str]:
    title = f"- **Workload class** {code(diff.name)}{_status_note(diff.status)}"
    if diff.status == "removed":
        return [title]
    return [title, *("  " + _field(f, new=diff.status == "added") for f in diff.fields)]


def _project_lines(p: ProjectDiff, people: People | None) -> list[str]:
    if p.status == "removed":  # its quotas are in the table; say who loses access and what goes
        return [*_list("Members", p.members, people), *(_budget(p.budget, new=False) if p.budget else []),
                *(line for w in p.workload_classes for line in _workload(w))]
    new = p.status == "added"
    lines = [_sharing(s, new=new) for s in p.sharing]
    if p.fair_share_weight is not None:
        weight = p.fair_share_weight
        lines.append(f"- **Fair-share weight**: {_pair(_opt_int(weight.before), _opt_int(weight.after), new=new)}")
    lines += _list("Allowed priority classes", p.allowed_priority_classes)
    lines += _list("Permissions", p.permissions)
    lines += _list("Members", p.members, people)
    lines += _budget(p.budget, new=new) if p.budget is not None else []
    for workload in p.workload_classes:
        lines += _workload(workload)
    return lines + [_field(f, new=new) for f in p.fields]


def _opt_int(value: int | None) -> str | None:
    return None if value is None else str(value)


def _cluster_lines(c: ClusterDiff) -> list[str]:
    lines = [f"- **Capacity** {code(cap.instance_type)}: {_change(cap.instances)} instances ({_change(cap.gpus)} GPUs)"
             for cap in c.capacity]
    if c.status == "removed":
        return lines
    for pc in c.priority_classes:
        if pc.weight.before is None:
            lines.append(f"- **Priority class** {code('+ ' + pc.name)} weight {pc.weight.after}")
        elif pc.weight.after is None:
            lines.append(f"- **Priority class** {code('- ' + pc.name)} (was weight {pc.weight.before})")
        else:
            lines.append(f"- **Priority class** {code(pc.name)} weight {_change(pc.weight)}")
    return lines + [_field(f, new=c.status == "added") for f in c.fields]


def _org_lines(o: OrgDiff, people: People | None) -> list[str]:
    return [*_list("Permission boundary", o.permission_boundary), *_list("Persona policies", o.persona_actions),
            *_list("Platform admins", o.platform_admins, people), *(_field(f) for f in o.fields)]
