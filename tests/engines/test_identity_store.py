"""`engines.identity_store`: the calls the snapshot makes, against a hand-made fake client (the
embedded endpoint's answers are in tests/integration/test_access.py)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from engines.identity_store import read_identity_store
from hypergov.identity_people import Person


class FakeStore:
    """Group 'ml' with two members over two pages; user 'ravi'; nothing else."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def _missing(self, operation: str) -> ClientError:
        return ClientError({"Error": {"Code": "ResourceNotFoundException", "Message": "nope"}}, operation)

    def get_group_id(self, IdentityStoreId: str, AlternateIdentifier: dict[str, Any]) -> dict[str, str]:
        self.calls.append("GetGroupId")
        if AlternateIdentifier["UniqueAttribute"] != {"AttributePath": "DisplayName", "AttributeValue": "ml"}:
            raise self._missing("GetGroupId")
        return {"GroupId": "g-1", "IdentityStoreId": IdentityStoreId}

    def get_user_id(self, IdentityStoreId: str, AlternateIdentifier: dict[str, Any]) -> dict[str, str]:
        self.calls.append("GetUserId")
        if AlternateIdentifier["UniqueAttribute"] != {"AttributePath": "UserName", "AttributeValue": "ravi"}:
            raise self._missing("GetUserId")
        return {"UserId": "u-1", "IdentityStoreId": IdentityStoreId}

    def list_group_memberships(self, IdentityStoreId: str, GroupId: str, NextToken: str | None = None) -> Any:
        self.calls.append("ListGroupMemberships")
        if NextToken is None:
            return {"GroupMemberships": [{"MemberId": {"UserId": "u-2"}}], "NextToken": "t"}
        return {"GroupMemberships": [{"MemberId": {"UserId": "u-1"}}]}

    def describe_user(self, IdentityStoreId: str, UserId: str) -> dict[str, Any]:
        self.calls.append("DescribeUser")
        name = {"u-1": ("ravi", "Ravi Shankar"), "u-2": ("lwinter", "Lena Winter")}[UserId]
        return {"UserName": name[0], "DisplayName": name[1], "UserId": UserId,
                "Emails": [{"Value": "other@example.com"}, {"Value": f"{name[0]}@example.com", "Primary": True}]}


def test_snapshot_pages_members_reads_each_person_once_and_records_missing_names() -> None:
    store = FakeStore()
    snapshot = read_identity_store(store, "d-1", groups=["ml", "ghosts"], users=["ravi", "nobody"])
    ravi = Person("ravi", "Ravi Shankar", "ravi@example.com", "u-1")
    assert snapshot.groups == {"ghosts": None, "ml": (Person("lwinter", "Lena Winter", "lwinter@example.com", "u-2"),
                                                      ravi)}
    assert snapshot.users == {"nobody": None, "ravi": ravi}
    assert store.calls.count("DescribeUser") == 2  # ravi is in the group and named alone: read once
    assert store.calls.count("ListGroupMemberships") == 2
    assert snapshot.api_calls == len(store.calls)


def test_other_errors_propagate() -> None:
    class Denied(FakeStore):
        def get_group_id(self, IdentityStoreId: str, AlternateIdentifier: dict[str, Any]) -> dict[str, str]:
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "GetGroupId")

    with pytest.raises(ClientError):
        read_identity_store(Denied(), "d-1", groups=["ml"], users=[])
