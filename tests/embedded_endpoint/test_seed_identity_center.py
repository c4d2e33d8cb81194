"""Seeding IAM Identity Center from a config tree whose org.yaml has an `identity_center` section:
the instance with exactly the ARN and identity store id the tree names (AWS's ListInstances
reports an instance's InstanceArn and IdentityStoreId), the groups and users the tree names as
members, and each group's members from embedded_aws/identity_people.yaml."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_aws import EmbeddedAws
from embedded_aws.seed_identity import load_people, seed_identity_center
from hypergov.model.tree import GovernanceTree
from hypergov.validate import load_valid_tree

CONFIG = Path(__file__).resolve().parents[2] / "config"
SECTION = {"instance_arn": "arn:aws:sso:::instance/ssoins-7223a7b5d1e5e2c4", "identity_store_id": "d-9067c1a2b3",
           "region": "us-west-2", "account": "ml-prod", "session_duration": "8h"}
ACCOUNT = "111122223333"  # ml-prod in the example org.yaml
TREE_GROUPS = {"ml-platform-admins", "nlp-engineers", "research-scientists", "research-interns", "speech-engineers",
               "support", "vision-engineers", "finance-analysts"}


def _tree(tmp_path: Path) -> GovernanceTree:
    """The example tree, whose org.yaml has exactly SECTION."""
    tree = load_valid_tree(CONFIG)
    assert tree.org is not None and tree.org.model.identity_center is not None
    assert tree.org.model.identity_center.model_dump() == SECTION
    return tree


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[EmbeddedAws, GovernanceTree]]:
    with EmbeddedAws() as aws:
        aws.reset()
        tree = _tree(tmp_path)
        seed_identity_center(tree, aws)
        yield aws, tree


def _group_members(store: object, store_id: str, group: str) -> set[str]:
    group_id = store.get_group_id(  # type: ignore[attr-defined]
        IdentityStoreId=store_id,
        AlternateIdentifier={"UniqueAttribute": {"AttributePath": "DisplayName", "AttributeValue": group}})["GroupId"]
    memberships = store.list_group_memberships(IdentityStoreId=store_id, GroupId=group_id)  # type: ignore[attr-defined]
    return {store.describe_user(IdentityStoreId=store_id,  # type: ignore[attr-defined]
                                UserId=m["MemberId"]["UserId"])["UserName"] for m in memberships["GroupMemberships"]}


def test_instance_has_the_arn_and_store_id_the_tree_names(seeded: tuple[EmbeddedAws, GovernanceTree]) -> None:
    """ListInstances (in the Identity Center account and region) reports the instance's ARN and store id."""
    aws, _ = seeded
    instances = aws.client("sso-admin", account=ACCOUNT, region="us-west-2").list_instances()["Instances"]
    assert [(i["InstanceArn"], i["IdentityStoreId"]) for i in instances] == [
        (SECTION["instance_arn"], SECTION["identity_store_id"])]


def test_groups_users_and_memberships(seeded: tuple[EmbeddedAws, GovernanceTree]) -> None:
    """Every group the tree names exists (ListGroups), with the people file's members
    (ListGroupMemberships); a user named alone exists by UserName (GetUserId)."""
    aws, _ = seeded
    store = aws.client("identitystore", account=ACCOUNT, region="us-west-2")
    store_id = SECTION["identity_store_id"]
    groups = {g["DisplayName"] for g in store.list_groups(IdentityStoreId=store_id)["Groups"]}
    assert groups == TREE_GROUPS
    people = load_people()
    for group in TREE_GROUPS:
        assert _group_members(store, store_id, group) == {p["UserName"] for p in people.get(group, [])}
    assert store.get_user_id(IdentityStoreId=store_id, AlternateIdentifier={
        "UniqueAttribute": {"AttributePath": "UserName", "AttributeValue": "ravi"}})["UserId"]
    # the people file itself: 2-4 people per tree group, some people in two groups
    assert all(2 <= len(people[g]) <= 4 for g in TREE_GROUPS)
    names = [p["UserName"] for g in people for p in people[g]]
    assert len(names) > len(set(names))


def test_seeding_twice_changes_nothing(seeded: tuple[EmbeddedAws, GovernanceTree]) -> None:
    """Idempotent: a second seeding leaves one of each group, user and membership."""
    aws, tree = seeded
    store = aws.client("identitystore", account=ACCOUNT, region="us-west-2")
    store_id = SECTION["identity_store_id"]

    def state() -> tuple[object, ...]:
        return (store.list_groups(IdentityStoreId=store_id)["Groups"],
                store.list_users(IdentityStoreId=store_id)["Users"], _group_members(store, store_id, "nlp-engineers"))

    before = state()
    seed_identity_center(tree, aws)
    assert state() == before


def test_no_section_no_identity_center(tmp_path: Path) -> None:
    """A tree without `identity_center` (and so without Identity Center members) seeds nothing."""
    copy = tmp_path / "config"
    shutil.copytree(CONFIG, copy)
    org_text = (copy / "org.yaml").read_text(encoding="utf-8")
    (copy / "org.yaml").write_text(org_text[:org_text.index("identity_center:")], encoding="utf-8")
    for path in [copy / "org.yaml", *(copy / "projects").glob("*.yaml")]:
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"identitycenter:(group|user)/([\w.-]+)", r"arn:aws:iam::111122223333:role/\2", text),
                        encoding="utf-8")
    with EmbeddedAws() as aws:
        assert seed_identity_center(load_valid_tree(copy), aws) is None
