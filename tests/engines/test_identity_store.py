"""`engines.identity_store`: the calls the snapshot makes, against a hand-made fake client (the
embedded endpoint's answers are in tests/integration/test_access.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from engines import identity_store
from engines.identity_store import member_people, read_identity_store
from engines.settings import AwsSettings
from hypergov.identity_people import NotChecked, Person
from tests.example_tree import example_tree


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


# --- member_people: per principal, for the merge-request summary --------------------------------

ORG = example_tree().org.model  # type: ignore[union-attr]  # config/org.yaml: identity_center d-9067c1a2b3
NAMED = ["identitycenter:group/ml", "identitycenter:group/ghosts", "identitycenter:user/ravi"]


def _without_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    for key in ("AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
        monkeypatch.setenv(key, str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for key in ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(key, raising=False)


def _store(monkeypatch: pytest.MonkeyPatch, store: FakeStore) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setattr(identity_store, "identity_store_client", lambda clients, org: store)


def test_member_people_answers_per_principal(monkeypatch: pytest.MonkeyPatch) -> None:
    store = FakeStore()
    _store(monkeypatch, store)
    people = member_people(AwsSettings(), ORG, [*NAMED, NAMED[0]])
    assert people == {"identitycenter:group/ghosts": None,
                      "identitycenter:group/ml": (Person("lwinter", "Lena Winter", "lwinter@example.com", "u-2"),
                                                  Person("ravi", "Ravi Shankar", "ravi@example.com", "u-1")),
                      "identitycenter:user/ravi": (Person("ravi", "Ravi Shankar", "ravi@example.com", "u-1"),)}
    assert store.calls.count("GetGroupId") == 2  # each principal asked once


def test_member_people_without_credentials_is_not_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _without_credentials(monkeypatch, tmp_path)
    assert member_people(AwsSettings(), ORG, NAMED) == {p: NotChecked("no AWS credentials") for p in NAMED}


def test_member_people_when_the_store_cannot_be_read_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    class Denied(FakeStore):
        def get_group_id(self, IdentityStoreId: str, AlternateIdentifier: dict[str, Any]) -> dict[str, str]:
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "GetGroupId")

    _store(monkeypatch, Denied())
    reason = "the identity store could not be read: AWS GetGroupId: AccessDeniedException: no"
    assert member_people(AwsSettings(), ORG, NAMED) == {p: NotChecked(reason) for p in NAMED}
