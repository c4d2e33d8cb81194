"""The people behind a tree's Identity Center members, read from the identity store: for each
group the tree names (`identitycenter:group/<display name>`), its members; for each user it names
(`identitycenter:user/<user name>`), that user. A snapshot, for the access report
(`reconciler.access_report`), which decides nothing and calls nothing itself; and per member, for
the merge-request summary (`member_people`: "not checked" with the reason when the store cannot
be read, so that a plan goes on).

Calls (Identity Store API, in the account and region org.yaml's `identity_center` names): GetGroupId
by DisplayName, ListGroupMemberships (paginated), DescribeUser once per member; GetUserId by
UserName. A name the store does not know (ResourceNotFoundException) is recorded as missing
(None), never an error: the report says so. Every other failure (no credentials, access denied,
an unknown identity store) propagates, classified by the caller like any AWS error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from engines.aws_clients import AwsClients
from engines.outcomes import classify
from engines.settings import AwsSettings
from hypergov.identity_people import MemberPeople, Person, not_checked
from hypergov.model.common import IDENTITY_STORE_NAME_ATTRIBUTE, identity_center_member
from hypergov.model.org import Organization


@dataclass(frozen=True)
class IdentitySnapshot:
    """What the identity store said, by the names the tree uses: a group's members (sorted by user
    name) or None when the store has no such group; a user, or None when it has no such user."""

    identity_store_id: str
    groups: Mapping[str, tuple[Person, ...] | None] = field(default_factory=dict)
    users: Mapping[str, Person | None] = field(default_factory=dict)
    api_calls: int = 0


# The Identity Store API call that finds a member's id by its unique name, and the id's key.
MEMBER_ID_READ = {"group": ("get_group_id", "GroupId"), "user": ("get_user_id", "UserId")}


def member_id_request(kind: str, name: str) -> tuple[str, dict[str, Any], str]:
    """(operation, its arguments but the store id, the answer's id key) that finds a `kind`
    ("group" or "user") member named `name` (tree's name: display name or user name)."""
    operation, key = MEMBER_ID_READ[kind]
    return operation, {"AlternateIdentifier": {"UniqueAttribute": {
        "AttributePath": IDENTITY_STORE_NAME_ATTRIBUTE[kind], "AttributeValue": name}}}, key


def _not_found(exc: ClientError) -> bool:
    return bool(exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException")


class _Reader:
    def __init__(self, client: Any, store_id: str) -> None:
        self.client, self.store_id, self.calls = client, store_id, 0
        self._people: dict[str, Person] = {}  # user id -> person (a person in several groups is read once)

    def call(self, operation: str, **kwargs: Any) -> Any:
        self.calls += 1
        return getattr(self.client, operation)(IdentityStoreId=self.store_id, **kwargs)

    def lookup(self, kind: str, name: str) -> str | None:
        operation, arguments, key = member_id_request(kind, name)
        try:
            return str(self.call(operation, **arguments)[key])
        except ClientError as exc:
            if _not_found(exc):
                return None
            raise

    def person(self, user_id: str) -> Person:
        if user_id not in self._people:
            user = self.call("describe_user", UserId=user_id)
            emails = user.get("Emails") or []
            primary = next((e for e in emails if e.get("Primary")), emails[0] if emails else {})
            self._people[user_id] = Person(user_name=str(user.get("UserName") or user_id),
                                           display_name=str(user.get("DisplayName") or ""),
                                           email=str(primary.get("Value") or ""), user_id=user_id)
        return self._people[user_id]

    def members(self, group_id: str) -> tuple[Person, ...]:
        found: list[Person] = []
        token: str | None = None
        while True:
            page = self.call("list_group_memberships", GroupId=group_id, **({"NextToken": token} if token else {}))
            for membership in page.get("GroupMemberships", []):
                user_id = (membership.get("MemberId") or {}).get("UserId")
                if user_id:  # Identity Center groups hold users only
                    found.append(self.person(str(user_id)))
            token = page.get("NextToken")
            if not token:
                return tuple(sorted(set(found)))


def read_identity_store(client: Any, identity_store_id: str, *, groups: Iterable[str],
                        users: Iterable[str]) -> IdentitySnapshot:
    """The snapshot of `groups` (display names) and `users` (user names) from `client` (a boto3
    `identitystore` client in the Identity Center account and region)."""
    reader = _Reader(client, identity_store_id)
    by_group: dict[str, tuple[Person, ...] | None] = {}
    for name in sorted(set(groups)):
        group_id = reader.lookup("group", name)
        by_group[name] = None if group_id is None else reader.members(group_id)
    by_user: dict[str, Person | None] = {}
    for name in sorted(set(users)):
        user_id = reader.lookup("user", name)
        by_user[name] = None if user_id is None else reader.person(user_id)
    return IdentitySnapshot(identity_store_id=identity_store_id, groups=by_group, users=by_user,
                            api_calls=reader.calls)


class ClientMaker(Protocol):
    """What the store's client is made with: `engines.aws_clients.AwsClients`, or a stand-in."""

    def client(self, service: str, *, region: str, account: str | None = None) -> Any: ...


def identity_store_client(clients: ClientMaker, org: Organization) -> Any:
    """identitystore in the account and region org.yaml's `identity_center` names (the caller
    checks that it names one)."""
    ic = org.identity_center
    assert ic is not None
    account = org.account(ic.account)
    return clients.client("identitystore", region=ic.region, account=str(account.id) if account else None)


def read_named(aws: AwsSettings, org: Organization, principals: Iterable[str]) -> IdentitySnapshot:
    """The snapshot of the Identity Center `principals`, read with the settings' endpoint and
    credentials (NoCredentialsError before any call when there are none)."""
    ic = org.identity_center
    named = [identity_center_member(p) for p in principals]
    if ic is None or not named:  # validation refuses Identity Center members without identity_center
        return IdentitySnapshot(identity_store_id=ic.identity_store_id if ic else "")
    clients = AwsClients(aws, partition=org.partition)
    clients.require_credentials()
    return read_identity_store(identity_store_client(clients, org), ic.identity_store_id,
                               groups=[n for k, n in named if k == "group"], users=[n for k, n in named if k == "user"])


def member_people(aws: AwsSettings, org: Organization | None, principals: Iterable[str]) -> dict[str, MemberPeople]:
    """Each Identity Center principal's people (a user: one person), None when the store has no
    such group or user. Without credentials, or when the store cannot be read, every one is
    `NotChecked` with the reason: the caller goes on without the store."""
    wanted = sorted(set(principals))
    if org is None or org.identity_center is None:
        return not_checked(wanted, "org.yaml names no identity_center")
    try:
        snapshot = read_named(aws, org, wanted)
    except (BotoCoreError, ClientError) as exc:  # NoCredentialsError and EndpointConnectionError included
        failure = classify(exc)
        reason = "no AWS credentials" if failure.reason == "no-credentials" else \
            f"the identity store could not be read: {failure.message}"
        return not_checked(wanted, reason)
    return {p: _people(snapshot, p) for p in wanted}


def _people(snapshot: IdentitySnapshot, principal: str) -> tuple[Person, ...] | None:
    kind, name = identity_center_member(principal)
    if kind == "group":
        return snapshot.groups.get(name)
    user = snapshot.users.get(name)
    return None if user is None else (user,)
