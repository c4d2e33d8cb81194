"""Identity Center members looked up in the identity store before their stack is planned.

A permission set is assigned to a member by its id in the identity store, which only the store
knows; a group or user the tree names that the store lacks would fail terraform's plan deep in a
data source read. Looked up first, it fails the stack's plan with the file and line that name it.
The members and their positions come from the tree (pure); the lookups are one boto3 call per
member, made once per engine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engines.identity_store import member_id_request
from hypergov.model.common import PERSONAS, identity_center_member, is_identity_center
from hypergov.model.tree import GovernanceTree
from hypergov.problems import SourcePos
from stacks.spec import StackSpec


@dataclass(frozen=True)
class NamedMember:
    principal: str  # identitycenter:group/<display name> | identitycenter:user/<user name>
    pos: SourcePos  # where the tree names it


def stack_members(tree: GovernanceTree, spec: StackSpec) -> list[NamedMember]:
    """The Identity Center members a stack assigns permission sets to, where the tree names them."""
    found: list[NamedMember] = []
    if spec.kind == "org" and tree.org is not None:
        found = [NamedMember(p, tree.org.pos("platform_admins", i))
                 for i, p in enumerate(tree.org.model.platform_admins) if is_identity_center(p)]
    elif spec.kind == "project" and spec.subject in tree.projects:
        project = tree.projects[spec.subject]
        found = [NamedMember(p, project.pos("members", persona, i)) for persona in PERSONAS
                 for i, p in enumerate(project.model.members.of(persona)) if is_identity_center(p)]
    return found


Exists = Callable[[str], bool]  # principal -> whether the identity store has it


def missing_message(missing: Sequence[NamedMember], *, store: str) -> str:
    lines = [f"{m.pos}: {m.principal} is not in the identity store {store}" for m in missing]
    return "; ".join(lines) + " (create it in IAM Identity Center, or fix the name: a group by its display name, " \
                              "a user by its user name)"


def identity_store_exists(client: Any, store: str) -> Exists:
    """`client`: identitystore in the Identity Center account and region. Each member looked up
    once (the answers are cached for the engine's life: one run)."""
    known: dict[str, bool] = {}
    lock = threading.Lock()

    def exists(principal: str) -> bool:
        with lock:
            if principal in known:
                return known[principal]
        kind, name = identity_center_member(principal)
        operation, arguments, _ = member_id_request(kind, name)
        try:
            getattr(client, operation)(IdentityStoreId=store, **arguments)
            found = True
        except client.exceptions.ResourceNotFoundException:
            found = False
        with lock:
            known[principal] = found
        return found

    return exists
