"""The I/O of the live IAM scan: one scan unit per governed account (every account a desired IAM
object lives in, and every account of org.yaml), compared with the tree by `engines.live.iam`.

Per account: GetAccountAuthorizationDetails with Filter Role and LocalManagedPolicy, 1,000 items a
page (its most, MaxItems): every role with its trust policy, boundary, tags, inline policies and
attached policies, and every customer managed policy with its versions' documents, which botocore
URL-decodes and parses. Nothing is read per role. The role description and maximum session
duration are not in GAAD's RoleDetail (botocore's model), so where a declared role sets them, one
ListRoles of the declared roles' common path prefix (1,000 a page) reads them.

Pruners delete exactly the item's object: an unmanaged role (its inline policies, attached
policies and instance profiles first, as DeleteRole requires, read at delete time), an inline
policy, an attachment.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from engines.desired import DesiredObject, of_type
from engines.live.iam import ATTACHMENT, IAM_TYPES, LISTED_ROLE_INPUTS, ROLE, ROLE_POLICY, AccountIam, OrgIam, compare
from engines.live.items import DriftItem
from engines.live.runner import CallCounter, Pruner, ScanContext, ScanUnit
from hypergov import naming

PAGE_SIZE = 1000  # the most GetAccountAuthorizationDetails and ListRoles return a page (MaxItems)
GAAD_FILTER = ("Role", "LocalManagedPolicy")


def read_account(client: Any, calls: CallCounter, *, listed_prefix: str | None) -> AccountIam:
    """One account's roles and customer managed policies (and its ListRoles entries under
    `listed_prefix`, when given)."""
    roles: list[Any] = []
    policies: list[Any] = []
    for page in calls.pages(client, "get_account_authorization_details", Filter=list(GAAD_FILTER),
                            PaginationConfig={"PageSize": PAGE_SIZE}):
        roles += page.get("RoleDetailList", [])
        policies += page.get("Policies", [])
    listed = None
    if listed_prefix is not None:
        listed = {str(r["RoleName"]): r
                  for page in calls.pages(client, "list_roles", PathPrefix=listed_prefix,
                                          PaginationConfig={"PageSize": PAGE_SIZE})
                  for r in page.get("Roles", [])}
    return AccountIam.read(roles, policies, listed)


def listed_prefix(desired: Sequence[DesiredObject]) -> str | None:
    """The path prefix ListRoles must read (all declared roles' common prefix: "/hypergov" covers
    /hypergov/ and /hypergov-platform/), or None when no declared role sets what only it returns."""
    roles = [o for o in of_type(desired, ROLE) if any(o.input(k) is not None for k in LISTED_ROLE_INPUTS)]
    if not roles:
        return None
    # By character on purpose: ListRoles' PathPrefix is a string prefix, not a path component.
    return os.path.commonprefix([str(o.input("path") or "/") for o in roles]) or "/"  # noqa: RUF071


def scan_account(client: Any, calls: CallCounter, org: OrgIam, account: str | None, region: str,
                 desired: Sequence[DesiredObject]) -> list[DriftItem]:
    live = read_account(client, calls, listed_prefix=listed_prefix(desired))
    return compare(org, account or live.account_id(), region, desired, live)


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit per governed account: its IAM roles and customer managed policies."""
    org = OrgIam.of(context.tree, context.specs, context.desired)
    if org is None:
        return []
    desired = of_type(context.desired, *IAM_TYPES)
    by_account: dict[str | None, list[DesiredObject]] = {str(a.id): [] for a in org.model.accounts}
    for obj in desired:
        by_account.setdefault(context.account_of(obj), []).append(obj)
    # Its items name the stacks that declare IAM objects, or those an unmanaged role is attributed to.
    covers = frozenset({naming.org_stack(), *(o.stack for o in desired), *(s for s, _ in org.role_owners.values()),
                        *(s for s, _ in org.policy_owners.values())})
    return [account_unit(org, account, objs[0].region if objs else org.model.home_region, objs, covers)
            for account, objs in sorted(by_account.items(), key=lambda kv: kv[0] or "")]


def account_unit(org: OrgIam, account: str | None, region: str, desired: Sequence[DesiredObject],
                 covers: frozenset[str] | None = None) -> ScanUnit:
    return ScanUnit(service="iam", account=account, region=region, stack=naming.org_stack(),
                    what=f"IAM of account {account or '(caller)'}",
                    read=lambda client, calls: scan_account(client, calls, org, account, region, desired),
                    covers=covers)


def _delete_role(client: Any, item: DriftItem, calls: CallCounter) -> None:
    role = item.ref["RoleName"]
    for page in calls.pages(client, "list_role_policies", RoleName=role):
        for name in page.get("PolicyNames", []):
            calls(client, "delete_role_policy", RoleName=role, PolicyName=name)
    for page in calls.pages(client, "list_attached_role_policies", RoleName=role):
        for attached in page.get("AttachedPolicies", []):
            calls(client, "detach_role_policy", RoleName=role, PolicyArn=attached["PolicyArn"])
    for page in calls.pages(client, "list_instance_profiles_for_role", RoleName=role):
        for profile in page.get("InstanceProfiles", []):
            calls(client, "remove_role_from_instance_profile", RoleName=role,
                  InstanceProfileName=profile["InstanceProfileName"])
    calls(client, "delete_role", RoleName=role)


def _delete_inline(client: Any, item: DriftItem, calls: CallCounter) -> None:
    calls(client, "delete_role_policy", RoleName=item.ref["RoleName"], PolicyName=item.ref["PolicyName"])


def _detach(client: Any, item: DriftItem, calls: CallCounter) -> None:
    calls(client, "detach_role_policy", RoleName=item.ref["RoleName"], PolicyArn=item.ref["PolicyArn"])


PRUNERS = {ROLE: Pruner(service="iam", delete=_delete_role),
           ROLE_POLICY: Pruner(service="iam", delete=_delete_inline),
           ATTACHMENT: Pruner(service="iam", delete=_detach)}
