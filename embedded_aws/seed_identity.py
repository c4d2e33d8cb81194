"""Seed IAM Identity Center from a config tree: the instance ``org.yaml``'s ``identity_center``
names, in the account and region it names, and the identity store's people.

```yaml
identity_center:
  instance_arn: arn:aws:sso:::instance/ssoins-7223a7b5d1e5e2c4
  identity_store_id: d-9067c1a2b3
  region: us-west-2
  account: ml-prod        # an org.yaml `accounts` name
  session_duration: 8h
```

The SSO Admin API cannot choose an instance ARN or an identity store id (AWS generates them, and
so does moto, which gives every account and region one instance), but ``org.yaml`` names them.
The instance is read through the API like any client would (ListInstances), then the ARN and
store id of that one object are set in moto's backend, exactly as `seed_org` sets the OU id.
That is only possible where the endpoint's state lives, so this runs in the endpoint's own
process (the ``hypergov embedded-aws --seed-config`` child, or an in-process ``EmbeddedAws``).

People: every group and user the tree names as a member (``identitycenter:group/<name>`` and
``identitycenter:user/<name>`` in ``projects/*.yaml`` ``members`` and ``org.yaml``
``platform_admins``) is created through the Identity Store API, each group with the members
``identity_people.yaml`` (next to this module) lists for it; a group not listed there has none.
Seeding twice changes nothing. The section is read from the org document as written, so it
works whether or not hypergov's model knows ``identity_center`` yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from botocore.exceptions import ClientError

from embedded_aws.seed import SeedTarget
from hypergov.model.common import PERSONAS, identity_center_member, is_identity_center
from hypergov.model.tree import GovernanceTree

PEOPLE_FILE = Path(__file__).with_name("identity_people.yaml")


@dataclass(frozen=True)
class SeededIdentityCenter:
    instance_arn: str
    identity_store_id: str
    account: str
    region: str
    groups: dict[str, str] = field(default_factory=dict)  # display name -> group id
    users: dict[str, str] = field(default_factory=dict)  # user name -> user id


def tree_principals(tree: GovernanceTree) -> tuple[list[str], list[str]]:
    """(group names, user names) the tree names as Identity Center members, sorted."""
    named: list[str] = list(tree.org.model.platform_admins) if tree.org is not None else []
    for project in tree.projects.values():
        for persona in PERSONAS:
            named.extend(project.model.members.of(persona))
    return principals_of(named)


def load_people(path: Path = PEOPLE_FILE) -> dict[str, list[dict[str, str]]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(group): list(people or []) for group, people in data.items()}


def seed_identity_center(tree: GovernanceTree, endpoint: SeedTarget, *,
                         people: Mapping[str, list[dict[str, str]]] | None = None) -> SeededIdentityCenter | None:
    """Create (idempotently) the tree's Identity Center instance and people; None when org.yaml
    has no ``identity_center`` section."""
    ic = tree.org.model.identity_center if tree.org is not None else None
    if ic is None or tree.org is None:
        return None
    account = tree.org.model.account(ic.account)
    if account is None:
        raise ValueError(f"identity_center.account {ic.account!r} is not an account org.yaml lists")
    region, instance_arn, store_id = ic.region, ic.instance_arn, ic.identity_store_id
    sso = endpoint.client("sso-admin", account=account.id, region=region)
    listed = sso.list_instances()["Instances"]
    if not any(i["InstanceArn"] == instance_arn for i in listed):
        _set_instance_ids(account.id, region, listed[0]["InstanceArn"], instance_arn, store_id)
    groups, users = tree_principals(tree)
    members = load_people() if people is None else dict(people)
    seeded = SeededIdentityCenter(instance_arn=instance_arn, identity_store_id=store_id, account=account.id,
                                  region=region)
    store = endpoint.client("identitystore", account=account.id, region=region)
    for group in groups:
        seeded.groups[group] = _group(store, store_id, group)
    # People listed in a group first: a user the tree also names alone keeps the name and email listed.
    for person in [*(p for g in groups for p in members.get(g, [])), *({"UserName": u} for u in users)]:
        if person["UserName"] not in seeded.users:
            seeded.users[person["UserName"]] = _user(store, store_id, person)
    for group in groups:
        for person in members.get(group, []):
            _membership(store, store_id, seeded.groups[group], seeded.users[person["UserName"]])
    return seeded


def _set_instance_ids(account: str, region: str, generated: str, instance_arn: str, store_id: str) -> None:
    from moto.ssoadmin.models import ssoadmin_backends

    instance = next(i for i in ssoadmin_backends[account][region].instances if i.instance_arn == generated)
    instance.instance_arn = instance_arn
    instance.identity_store_id = store_id


def _lookup(call: Any, **kwargs: Any) -> str | None:
    try:
        response = call(**kwargs)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceNotFoundException":
            raise
        return None
    return str(next(v for k, v in response.items() if k.endswith("Id") and k != "IdentityStoreId"))


def _unique(path: str, value: str) -> dict[str, Any]:
    return {"UniqueAttribute": {"AttributePath": path, "AttributeValue": value}}


def _group(store: Any, store_id: str, name: str) -> str:
    found = _lookup(store.get_group_id, IdentityStoreId=store_id, AlternateIdentifier=_unique("DisplayName", name))
    if found is not None:
        return found
    return str(store.create_group(IdentityStoreId=store_id, DisplayName=name)["GroupId"])


def _user(store: Any, store_id: str, person: Mapping[str, str]) -> str:
    user_name = person["UserName"]
    found = _lookup(store.get_user_id, IdentityStoreId=store_id, AlternateIdentifier=_unique("UserName", user_name))
    if found is not None:
        return found
    display = person.get("DisplayName") or user_name
    given, _, family = display.partition(" ")
    email = person.get("email") or f"{user_name}@example.com"
    return str(store.create_user(
        IdentityStoreId=store_id, UserName=user_name, DisplayName=display,
        Name={"GivenName": given, "FamilyName": family or given, "Formatted": display},
        Emails=[{"Value": email, "Type": "work", "Primary": True}])["UserId"])


def _membership(store: Any, store_id: str, group_id: str, user_id: str) -> None:
    member = {"UserId": user_id}
    if _lookup(store.get_group_membership_id, IdentityStoreId=store_id, GroupId=group_id, MemberId=member) is None:
        store.create_group_membership(IdentityStoreId=store_id, GroupId=group_id, MemberId=member)


def principals_of(named: Iterable[str]) -> tuple[list[str], list[str]]:
    """(group names, user names) among member strings (``identitycenter:group/x`` ...)."""
    members = [identity_center_member(p) for p in named if is_identity_center(p)]
    return sorted({n for k, n in members if k == "group"}), sorted({n for k, n in members if k == "user"})
