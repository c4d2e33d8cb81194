"""IAM fixes.

UpdateRole: moto resets the description and the maximum session duration when a request omits
them; AWS changes only what the request names (UpdateRole API reference). The Terraform provider
sends them separately, so the bug made every role drift after any update.

GetAccountAuthorizationDetails: moto ignores MaxItems and Marker and answers everything in one
page with IsTruncated false. AWS pages it (MaxItems 1-1000, default 100, per the API reference
and botocore's model; the paginator's result keys are the user, group, role and policy lists),
and the live scan counts those pages, so the endpoint pages as AWS does: MaxItems counts the
entries of all four lists together, in that order, and Marker is opaque. Each role's instance
profiles are found from one index per page (moto scans every instance profile per role:
roles x profiles per call).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from moto.core.responses import ActionResult, EmptyResult
from moto.iam.responses import IamResponse

from embedded_aws.errors import AwsError
from embedded_aws.extension import ModelValidatedResponse, page

GAAD_DEFAULT_MAX_ITEMS = 100  # "If you do not include this parameter, the number of items defaults to 100."
_GAAD_LISTS = (("users", "UserDetailList"), ("groups", "GroupDetailList"), ("roles", "RoleDetailList"),
               ("managed_policies", "Policies"))


class _Serialized:
    """A moto object as GAAD serializes it. moto's serializer finds `RoleName` as `name` (and
    `PolicyName`, `PolicyId` as `name`, `id`) by the object's class name, so each subclass is
    named after the botocore shape it stands for."""

    def __init__(self, wrapped: Any) -> None:
        self._wrapped = wrapped

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)


class Role(_Serialized):
    """With its instance profiles looked up once per page."""

    def __init__(self, wrapped: Any, profiles: list[Any]) -> None:
        super().__init__(wrapped)
        self.instance_profile_list = profiles


class Policy(_Serialized):
    """moto's class is ManagedPolicy: without this its GAAD entries lack PolicyName and PolicyId."""


class ExtendedIamResponse(ModelValidatedResponse, IamResponse):
    VALIDATED: ClassVar[frozenset[str]] = frozenset({"GetAccountAuthorizationDetails"})

    def update_role(self) -> ActionResult:
        role = self.backend.get_role(self._get_param("RoleName"))
        description = self._get_param("Description")
        duration = self._get_int_param("MaxSessionDuration")
        # moto annotates the duration as str but stores and returns it as given; AWS returns an int.
        self.backend.update_role(role.name, role.description if description is None else description,
                                 role.max_session_duration if duration is None else duration)  # type: ignore[arg-type]
        return EmptyResult()

    def get_account_authorization_details(self) -> ActionResult:
        details = self.backend.get_account_authorization_details(list(self._get_param("Filter", []) or []))
        entries = [(key, item) for list_name, key in _GAAD_LISTS for item in details[list_name]]
        max_items = self._get_param("MaxItems")
        chunk, marker = page(entries, max_results=int(max_items) if max_items else GAAD_DEFAULT_MAX_ITEMS,
                             next_token=self._get_param("Marker"),
                             invalid=AwsError("ValidationError", "Invalid Marker"))
        profiles = _profiles_by_role(details["instance_profiles"], [i for k, i in chunk if k == "RoleDetailList"])
        result: dict[str, Any] = {key: [] for _, key in _GAAD_LISTS}
        for key, item in chunk:
            if key == "RoleDetailList":
                item = Role(item, profiles[id(item)])
            elif key == "Policies":
                item = Policy(item)
            result[key].append(item)
        result["IsTruncated"] = marker is not None
        if marker is not None:
            result["Marker"] = marker
        return ActionResult(result)


def _profiles_by_role(instance_profiles: Iterable[Any], roles: Sequence[Any]) -> dict[int, list[Any]]:
    found: dict[int, list[Any]] = {id(r): [] for r in roles}
    for profile in instance_profiles:
        for role in profile.roles:
            if id(role) in found:
                found[id(role)].append(profile)
    return found
