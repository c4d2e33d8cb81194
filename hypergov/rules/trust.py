"""Trust stays inside the organization: every principal the tree names is one of the org's own.

hypergov writes the principals of the tree into trust policies of roles inside the boundary
(project members, platform admins) and into the record of who owns what (cluster owners). A role
in another company's account named there could assume a role of ours. So every IAM user or role
must be in the org's partition and in one of its `accounts`, or in an account org.yaml lists under
`trusted_external_accounts` with a reason (IDN009).

IAM Identity Center principals (`identitycenter:user/...`, `identitycenter:group/...`) are the
org's by construction: the trust policy names them only through the permission-set roles
`aws-reserved/sso.amazonaws.com/...` in the role's own account, which only the organization's
Identity Center instance can provision there (see `components.policies`). There is no way to
spell a foreign identity store, so there is nothing to check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hypergov.model.common import IAM_PRINCIPAL_RE, PERSONAS
from hypergov.model.org import Organization
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem, SourcePos
from hypergov.rules.base import problem


@dataclass(frozen=True)
class NamedPrincipal:
    principal: str
    what: str  # who names it, for the message
    pos: SourcePos


def named_principals(tree: GovernanceTree) -> Iterator[NamedPrincipal]:
    """Every principal field of the tree: platform admins, cluster owners, project members."""
    if tree.org is not None:
        for i, principal in enumerate(tree.org.model.platform_admins):
            yield NamedPrincipal(principal, "platform admin", tree.org.pos("platform_admins", i))
    for name, cluster in sorted(tree.clusters.items()):
        yield NamedPrincipal(cluster.model.owner, f"owner of cluster '{name}'", cluster.pos("owner"))
    for team, project in sorted(tree.projects.items()):
        for persona in PERSONAS:
            for i, principal in enumerate(project.model.members.of(persona)):
                yield NamedPrincipal(principal, f"{persona} of project '{team}'",
                                     project.pos("members", persona, i))


def _partition_and_account(principal: str) -> tuple[str, str] | None:
    """('aws', '111122223333') for an IAM ARN; None for an Identity Center principal."""
    if not IAM_PRINCIPAL_RE.match(principal):
        return None
    parts = principal.split(":")
    return parts[1], parts[4]


def check_trust(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    org = tree.org.model
    trusted = org.trusted_account_ids()
    for named in named_principals(tree):
        located = _partition_and_account(named.principal)
        if located is None:
            continue
        partition, account = located
        if partition != org.partition:
            yield problem(named.pos, "IDN009",
                          f"{named.what} '{named.principal}' is in partition '{partition}'; "
                          f"the org is in '{org.partition}'",
                          f"use a principal of the org's partition (arn:{org.partition}:iam::...); IAM cannot "
                          "trust a principal of another partition, and trusted_external_accounts cannot either")
        elif account not in trusted:
            yield problem(named.pos, "IDN009",
                          f"{named.what} '{named.principal}' is in account {account}, which is not one of "
                          f"the org's accounts ({_own(org)})",
                          f"name a principal of the org's accounts, or, if account {account} is meant to be "
                          "trusted, list it under trusted_external_accounts in org.yaml with a reason")


def _own(org: Organization) -> str:
    own = ", ".join(str(a.id) for a in org.accounts)
    external = ", ".join(str(a.id) for a in org.trusted_external_accounts)
    return f"{own}; trusted external: {external}" if external else own
