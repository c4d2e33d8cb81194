"""EKS access entries as project members, decided without I/O.

An entry reaches a team when one of its Kubernetes groups is a team group (`naming.team_of_group`:
a persona group `hyperpod-ns-<team>-<persona>-group`, or HyperPod's namespace-level group) or an
access policy is scoped to the team namespace `hyperpod-ns-<team>`. Its principal becomes a member
of a persona only when its access is exactly what that persona gets (`components.namespace_access`:
`AmazonEKSViewPolicy` on the namespace, and the persona's own group for the rest):
- the persona's group, with at most the view policy on the team namespace: that persona;
- the view policy on the team namespace and no group: Viewer (what every persona holds, nothing more);
- anything else (AmazonEKSEditPolicy, an admin policy, HyperPod's namespace-level group, whose Role
  grants pod `create`, another group, a cluster-wide scope): no persona; a report item.
hypergov's own persona role (`/hypergov/<org>-<team>-<persona>`) is not a member: its members are
the principals its trust policy allows (read with IAM). An Identity Center role
(`AWSReservedSSO_*`) stands for the groups and users assigned its permission set, which the
import does not read: the persona's Identity Center members are kept from --keep-from, else the
role is a report item. Entries of other types (nodes) are HyperPod's, not governance.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from components.namespace_access import ACCESS_POLICY
from engines.importing.report import ImportItem
from engines.live.eks import LiveEntry
from hypergov import naming
from hypergov.model.common import PERSONAS, Persona

SSO_ROLE_PATH = "/aws-reserved/sso.amazonaws.com/"


@dataclass
class TeamMembers:
    """A team's members per persona with where each came from, and the Identity Center roles seen."""

    members: dict[Persona, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # principal -> source
    identity_center: set[Persona] = field(default_factory=set)
    role_tags: dict[str, str] = field(default_factory=dict)  # the tags of hypergov's roles of the team


def _policy_name(arn: str) -> str:
    return arn.rsplit("/", 1)[-1]


def teams_reached(entry: LiveEntry) -> set[str]:
    teams = {t for g in entry.kubernetes_groups if (t := naming.team_of_group(g))}
    for policy in entry.policies:
        teams |= {t for ns in policy.namespaces if (t := naming.team_of_namespace(ns))}
    return teams


def persona_of(entry: LiveEntry, team: str) -> Persona | str:
    """The persona whose access the entry has on `team`, or why it has none."""
    groups = set(entry.kubernetes_groups)
    personas = [p for p in PERSONAS if naming.persona_group(team, p) in groups]
    others = sorted(groups - {naming.persona_group(team, p) for p in personas})
    view_on_team = all(_policy_name(p.policy_arn) == ACCESS_POLICY and p.scope_type == "namespace"
                       and set(p.namespaces) == {naming.namespace(team)} for p in entry.policies)
    if others:
        return f"Kubernetes group(s) {', '.join(others)}: no persona is mapped there"
    if not view_on_team:
        shown = ", ".join(f"{_policy_name(p.policy_arn)} ({p.scope_type}"
                          f"{': ' + ', '.join(p.namespaces) if p.namespaces else ''})" for p in entry.policies)
        return f"access policies {shown}: a persona gets only {ACCESS_POLICY} on {naming.namespace(team)}"
    if len(personas) > 1:
        return f"groups of several personas ({', '.join(personas)})"
    if personas:
        return personas[0]
    if entry.policies:
        return "Viewer"
    return "no group and no access policy"


def _hypergov_role(principal: str, org: str, team: str) -> Persona | None:
    for persona in PERSONAS:
        if principal.endswith(f":role{naming.ROLE_PATH}{naming.role_name(org, team, persona)}"):
            return persona
    return None


def members_from_entries(*, cluster: str, entries: Sequence[LiveEntry], org: str,
                         role_trust: Mapping[str, tuple[str, ...]], found: dict[str, TeamMembers],
                         role_tags: Mapping[str, Mapping[str, str]],
                         is_known: Callable[[str], bool]) -> list[ImportItem]:
    """Adds each entry's principal to its team's persona in `found` (and the tags of hypergov's roles
    to the team's `role_tags`); what matches no persona is an item. `is_known`: principals org.yaml
    already names (platform admins)
    and hypergov's own org-level roles, whose cluster-wide entries are not a team's."""
    items: list[ImportItem] = []
    for entry in entries:
        if entry.type != "STANDARD":
            continue
        where = f"EKS access entry {entry.principal_arn} on {cluster}"
        teams = teams_reached(entry)
        if not teams:
            if not is_known(entry.principal_arn):
                items.append(ImportItem(kind="unmatched-principal", object=where, why=(
                    "reaches no team namespace (cluster-wide access): not a project persona; if it is a platform "
                    "administrator, add it to org.yaml platform_admins"), live=_shown(entry)))
            continue
        for team in sorted(teams):
            items += _add(entry, team, cluster=cluster, org=org, role_trust=role_trust, found=found, where=where)
            if team in found:
                found[team].role_tags.update(role_tags.get(entry.principal_arn, {}))
    return items


def _add(entry: LiveEntry, team: str, *, cluster: str, org: str, role_trust: Mapping[str, tuple[str, ...]],
         found: dict[str, TeamMembers], where: str) -> list[ImportItem]:
    persona = persona_of(entry, team)
    if persona not in PERSONAS:
        return [ImportItem(kind="outside-personas", object=where, why=f"on team {team}: {persona}",
                           live=_shown(entry), file=f"projects/{team}.yaml")]
    chosen: Persona = persona
    team_members = found.setdefault(team, TeamMembers())
    own = _hypergov_role(entry.principal_arn, org, team)
    if own is not None:
        trusted = role_trust.get(entry.principal_arn)
        if trusted is None:
            return [ImportItem(kind="not-read", object=where, why=(
                f"hypergov's role for {own} of team {team}; its trust policy was not read, so its members are not "
                "known"), file=f"projects/{team}.yaml")]
        for principal in trusted:
            team_members.members[own][principal] = f"trusted by {entry.principal_arn.rsplit('/', 1)[-1]}"
        return []
    if SSO_ROLE_PATH in entry.principal_arn:
        team_members.identity_center.add(chosen)
        return []
    team_members.members[chosen].setdefault(entry.principal_arn, f"access entry on {cluster}")
    return []


def _shown(entry: LiveEntry) -> dict[str, object]:
    return {"principalArn": entry.principal_arn, "kubernetesGroups": list(entry.kubernetes_groups),
            "accessPolicies": [{"policyArn": p.policy_arn, "scope": p.scope()} for p in entry.policies]}
