"""moto's Identity Store, answering lookups as AWS does (Identity Store API reference).

- An identity store exists only as an Identity Center instance's store (``IdentityStoreId`` of
  ListInstances in that account and region); moto makes up an empty store for any id, so a
  typo read as "no such group" instead of ResourceNotFoundException (ResourceType IDENTITY_STORE).
- GetGroupId / GetUserId: the unique attributes are ``DisplayName`` (groups) and ``UserName`` or
  ``Emails.Value`` (users); another path is a ValidationException, an unknown value a
  ResourceNotFoundException (ResourceType GROUP / USER). ``ExternalId`` lookups find nothing:
  nothing here is provisioned from an external IdP (moto does not implement them).
- ListGroups / ListUsers ``Filters``: one filter, on ``DisplayName`` / ``UserName``; moto
  answers every group or user for any other path (a filter that looks as if it worked).
Every request is checked against botocore's model first (`ModelValidatedResponse`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import botocore.session
from moto.identitystore.responses import IdentityStoreResponse

from embedded_aws.errors import AwsError
from embedded_aws.extension import ModelValidatedResponse
from embedded_aws.sso_admin_ext import instances

GROUP_ATTRIBUTES = {"displayname": "DisplayName"}
USER_ATTRIBUTES = {"username": "UserName", "emails.value": "Emails.Value"}


def _operations() -> frozenset[str]:
    return frozenset(botocore.session.get_session().get_service_model("identitystore").operation_names)


def not_found(message: str, resource_type: str, resource_id: str | None = None) -> AwsError:
    return AwsError("ResourceNotFoundException", message, ResourceType=resource_type, ResourceId=resource_id)


def invalid(message: str) -> AwsError:
    return AwsError("ValidationException", message)


class ExtendedIdentityStoreResponse(ModelValidatedResponse, IdentityStoreResponse):
    VALIDATED: ClassVar[frozenset[str]] = _operations()

    def _validate(self, operation: str) -> AwsError | None:
        error = super()._validate(operation)
        if error is not None:
            return error
        store = self.param("IdentityStoreId")
        known = {i.identity_store_id for i in instances(self.current_account, self.region)}
        if store is not None and store not in known:
            return not_found(f"Identity store {store} does not exist.", "IDENTITY_STORE", store)
        return None

    def get_group_id(self) -> str:
        self._unique_attribute(GROUP_ATTRIBUTES, "GROUP")
        return str(super().get_group_id())

    def get_user_id(self) -> str:
        self._unique_attribute(USER_ATTRIBUTES, "USER")
        return str(super().get_user_id())

    def _unique_attribute(self, allowed: dict[str, str], resource_type: str) -> None:
        identifier = self.param("AlternateIdentifier")
        unique = identifier.get("UniqueAttribute")
        if unique is None:  # ExternalId: nothing here has external ids
            raise not_found(f"{resource_type} not found.", resource_type)
        path = str(unique["AttributePath"])
        if path.lower() not in allowed:
            raise invalid(f"The attribute {path} is not a unique attribute of a {resource_type.lower()}; use "
                          f"{' or '.join(allowed.values())}.")
        if not isinstance(unique.get("AttributeValue"), str) or not unique["AttributeValue"]:
            raise invalid(f"The value of attribute {path} must be a non-empty string.")

    def list_groups(self) -> str:
        self._filter("DisplayName")
        return str(super().list_groups())

    def list_users(self) -> str:
        self._filter("UserName")
        return str(super().list_users())

    def _filter(self, allowed: str) -> None:
        filters: list[dict[str, Any]] = self.param("Filters", [])
        if len(filters) > 1:
            raise invalid("Only one filter is supported.")
        for item in filters:
            if item["AttributePath"] != allowed:
                raise invalid(f"The attribute {item['AttributePath']} cannot be filtered on; use {allowed}.")
