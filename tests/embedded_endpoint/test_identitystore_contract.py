"""The Identity Store lookups the Terraform data sources (aws_identitystore_group / _user) and
hypergov's boto3 code use, as the Identity Store API reference documents them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .conftest import error_of


@pytest.fixture
def people(client: Callable[..., Any]) -> tuple[Any, str, str, str]:
    """(client, store id, group id, user id): group nlp-engineers with member ravi."""
    store_id = client("sso-admin").list_instances()["Instances"][0]["IdentityStoreId"]
    store = client("identitystore")
    group = store.create_group(IdentityStoreId=store_id, DisplayName="nlp-engineers")["GroupId"]
    user = store.create_user(IdentityStoreId=store_id, UserName="ravi", DisplayName="Ravi Shankar",
                             Name={"GivenName": "Ravi", "FamilyName": "Shankar"})["UserId"]
    store.create_group_membership(IdentityStoreId=store_id, GroupId=group, MemberId={"UserId": user})
    return store, store_id, group, user


def _unique(path: str, value: str) -> dict[str, Any]:
    return {"UniqueAttribute": {"AttributePath": path, "AttributeValue": value}}


def test_lookup_by_display_name_and_user_name(people: tuple[Any, str, str, str]) -> None:
    """GetGroupId by DisplayName and GetUserId by UserName answer the ids; DescribeGroup /
    DescribeUser answer the names."""
    store, store_id, group, user = people
    assert store.get_group_id(IdentityStoreId=store_id,
                              AlternateIdentifier=_unique("DisplayName", "nlp-engineers"))["GroupId"] == group
    assert store.get_user_id(IdentityStoreId=store_id,
                             AlternateIdentifier=_unique("UserName", "ravi"))["UserId"] == user
    assert store.describe_group(IdentityStoreId=store_id, GroupId=group)["DisplayName"] == "nlp-engineers"
    assert store.describe_user(IdentityStoreId=store_id, UserId=user)["UserName"] == "ravi"


def test_unknown_names_are_not_found(people: tuple[Any, str, str, str]) -> None:
    """An unknown value is ResourceNotFoundException (ResourceType GROUP / USER)."""
    store, store_id, _, _ = people
    assert error_of(store.get_group_id, IdentityStoreId=store_id,
                    AlternateIdentifier=_unique("DisplayName", "nobody"))[0] == "ResourceNotFoundException"
    assert error_of(store.get_user_id, IdentityStoreId=store_id,
                    AlternateIdentifier=_unique("UserName", "nobody"))[0] == "ResourceNotFoundException"


def test_unknown_identity_store_is_not_found(people: tuple[Any, str, str, str]) -> None:
    """An identity store id no Identity Center instance has is ResourceNotFoundException."""
    store, _, _, _ = people
    assert error_of(store.list_groups, IdentityStoreId="d-0000000000")[0] == "ResourceNotFoundException"


def test_not_a_unique_attribute(people: tuple[Any, str, str, str]) -> None:
    """A group's unique attribute is DisplayName: another path is a ValidationException."""
    store, store_id, _, _ = people
    assert error_of(store.get_group_id, IdentityStoreId=store_id,
                    AlternateIdentifier=_unique("Description", "x"))[0] == "ValidationException"


def test_memberships_and_filters(people: tuple[Any, str, str, str]) -> None:
    """ListGroupMemberships lists the group's members; ListGroups / ListUsers filter on
    DisplayName / UserName; filtering on another attribute is a ValidationException."""
    store, store_id, group, user = people
    memberships = store.list_group_memberships(IdentityStoreId=store_id, GroupId=group)["GroupMemberships"]
    assert [m["MemberId"]["UserId"] for m in memberships] == [user]
    groups = store.list_groups(IdentityStoreId=store_id, Filters=[
        {"AttributePath": "DisplayName", "AttributeValue": "nlp-engineers"}])["Groups"]
    assert [g["GroupId"] for g in groups] == [group]
    users = store.list_users(IdentityStoreId=store_id, Filters=[
        {"AttributePath": "UserName", "AttributeValue": "ravi"}])["Users"]
    assert [u["UserId"] for u in users] == [user]
    assert error_of(store.list_users, IdentityStoreId=store_id, Filters=[
        {"AttributePath": "Title", "AttributeValue": "x"}])[0] == "ValidationException"
