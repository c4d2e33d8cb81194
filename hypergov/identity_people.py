"""The people behind Identity Center members, as the identity store named them: the shape the
identity-store reader (`engines.identity_store`) fills and the merge-request summary
(`hypergov.governance_markdown`) shows, so that the pure core can say "vision-engineers: 4 people"
without calling AWS.

A member's answer is its people (a group's members, sorted by user name; a user: that one person),
None when the store has no such group or user, or `NotChecked` with the reason the store was not
asked or could not answer (no credentials, an unreadable store). "Not checked" is never a count:
offline, nothing claims a member exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hypergov.model.common import PERSONAS, is_identity_center
from hypergov.model.tree import GovernanceTree


@dataclass(frozen=True, order=True)
class Person:
    """An identity-store user as hypergov shows one."""

    user_name: str
    display_name: str = ""
    email: str = ""
    user_id: str = ""


@dataclass(frozen=True)
class NotChecked:
    """The identity store was not asked, or could not answer; `reason` says why, in a few words."""

    reason: str


MemberPeople = tuple[Person, ...] | NotChecked | None
People = Mapping[str, MemberPeople]  # principal (identitycenter:group/... | identitycenter:user/...) -> answer


def not_checked(principals: Iterable[str], reason: str) -> dict[str, MemberPeople]:
    """Every one of `principals` not checked, for the same reason."""
    answer = NotChecked(reason)
    return {p: answer for p in principals}


def tree_identity_center_members(tree: GovernanceTree) -> frozenset[str]:
    """The distinct Identity Center principals a tree names: project members of every persona
    and the org's platform admins."""
    named = {p for project in tree.projects.values() for persona in PERSONAS for p in project.model.members.of(persona)}
    if tree.org is not None:
        named |= set(tree.org.model.platform_admins)
    return frozenset(p for p in named if is_identity_center(p))
