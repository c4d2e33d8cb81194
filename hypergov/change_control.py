"""Who must approve a change to the tree: `change_control` in org.yaml, like CODEOWNERS.

For every path a change adds, modifies or deletes, the last rule whose glob matches names the
owners; `<project>` in a glob matches one path segment and says which project the path belongs
to, so `project-leads` and `project-members` resolve to that project's people. Rules and people
are taken from the BASE tree (the target branch), never from the change itself: a change that
makes its author a project lead must not let that author approve it. A path no rule matches, or
whose project does not exist yet in the base, falls back to the platform admins.

Pure: two file maps and the base tree in, approvals out; the Git host enforces them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from hypergov.model.common import PERSONAS
from hypergov.model.tree import GovernanceTree
from hypergov.tree_files import TreeFiles

ChangeKind = Literal["added", "modified", "deleted"]


@dataclass(frozen=True)
class RequiredApproval:
    path: str
    change: ChangeKind
    owners: tuple[str, ...]  # who may approve: handles, e-mails, principals
    because: str  # which rule decided, or why the fallback applies


def changed_paths(base: TreeFiles, head: TreeFiles) -> list[tuple[str, ChangeKind]]:
    kinds: list[tuple[str, ChangeKind]] = []
    for path in sorted(set(base) | set(head)):
        if path not in base:
            kinds.append((path, "added"))
        elif path not in head:
            kinds.append((path, "deleted"))
        elif base[path] != head[path]:
            kinds.append((path, "modified"))
    return kinds


@lru_cache(maxsize=256)
def glob_pattern(glob: str) -> re.Pattern[str]:
    """`*` and `?` stay inside one path segment, `**` spans segments, `{a,b}` alternates,
    `<project>` captures one segment as the project."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("<project>", i):
            out.append("(?P<project>[^/]+)")
            i += len("<project>")
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "{":
            end = glob.find("}", i)
            if end < 0:
                out.append(re.escape(glob[i:]))
                break
            out.append("(?:" + "|".join(re.escape(a) for a in glob[i + 1:end].split(",")) + ")")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def required_approvals(base_files: TreeFiles, head_files: TreeFiles,
                       base: GovernanceTree) -> list[RequiredApproval]:
    return [_approval(path, kind, base) for path, kind in changed_paths(base_files, head_files)]


def _approval(path: str, kind: ChangeKind, base: GovernanceTree) -> RequiredApproval:
    assert base.org is not None
    org = base.org.model
    admins = tuple(org.platform_admins)
    for number in range(len(org.change_control), 0, -1):  # last matching rule wins
        rule = org.change_control[number - 1]
        for glob in rule.paths:
            match = glob_pattern(glob).match(path)
            if match is None:
                continue
            project = match.groupdict().get("project")
            owners = _resolve(rule.owners, project, base)
            if owners is None:
                why = (f"project '{project}' is new" if project else
                       "it names project owners but its glob has no <project>")
                return RequiredApproval(path, kind, admins,
                                        f"change_control rule {number} ({glob}): {why}, so the platform admins approve")
            return RequiredApproval(path, kind, owners, f"change_control rule {number} ({glob})")
    return RequiredApproval(path, kind, admins, "no change_control rule matches: the platform admins approve")


def _resolve(owners: list[str], project: str | None, base: GovernanceTree) -> tuple[str, ...] | None:
    """People for `owners`; None when they name a project that the base tree does not have."""
    assert base.org is not None
    people: list[str] = []
    for owner in owners:
        if owner == "platform-admins":
            people += base.org.model.platform_admins
        elif owner in ("project-leads", "project-members"):
            source = base.projects.get(project) if project else None
            if source is None:
                return None
            personas = ("ProjectLead",) if owner == "project-leads" else PERSONAS
            people += [p for persona in personas for p in source.model.members.of(persona)]
        else:
            people.append(owner)
    return tuple(dict.fromkeys(people))


def approvals_markdown(approvals: list[RequiredApproval]) -> str:
    """The merge-request section: one row per changed path, with who may approve it."""
    if not approvals:
        return "### Required approvals\n\nNo file of the tree changes."
    rows = [f"| `{a.path}` | {a.change} | {', '.join(f'`{o}`' for o in a.owners)} | {a.because} |"
            for a in approvals]
    return "\n".join(["### Required approvals (change_control in org.yaml, as on the target branch)", "",
                      "| path | change | approved by one of | rule |", "|---|---|---|---|", *rows])
