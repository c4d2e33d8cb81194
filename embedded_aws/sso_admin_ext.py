"""moto's IAM Identity Center admin service (sso-admin) completed with what hypergov's permission
sets need and what the Terraform provider calls for ``aws_ssoadmin_permission_set``,
``aws_ssoadmin_permission_set_inline_policy``, ``aws_ssoadmin_permissions_boundary_attachment``
and ``aws_ssoadmin_account_assignment``, with AWS's semantics (SSO Admin API reference):

- permissions boundaries (Put/Get/DeletePermissionsBoundary...: moto lacks them);
- tags (TagResource, UntagResource, ListTagsForResource; moto keeps CreatePermissionSet's Tags
  but cannot read them back);
- provisioning that does what AWS does: ProvisionPermissionSet and CreateAccountAssignment
  create or update the permission set's IAM role in the target account, DeleteAccountAssignment
  of the last assignment deletes it (`embedded_aws.sso_roles`, the one place for that role);
  moto provisions nothing and always into the caller's account;
- request statuses: the operations answer IN_PROGRESS with a RequestId that
  Describe/ListPermissionSetProvisioningStatus and Describe/ListAccountAssignment{Creation,
  Deletion}Status find (SUCCEEDED, or FAILED with a FailureReason); moto forgets a creation
  request once its assignment is deleted and has no provisioning status at all;
- AWS's ARNs (``arn:aws:sso:::permissionSet/ssoins-.../ps-<16 hex>``; moto's lie under
  ``instance/`` and break the model's pattern), PT1H as the default session duration (moto:
  the integer 3600), UpdatePermissionSet changing only what the request names (moto resets the
  rest), ConflictException for a duplicate name and for deleting an assigned permission set,
  no duplicate assignment, ListPermissionSetsProvisionedToAccount /
  ListAccountsForProvisionedPermissionSet by account and ProvisioningStatus, DescribeInstance.

Identity store ids are hex (``d-[0-9a-f]{10}``) as the model requires; moto's default instance
gets letters, so its id is rewritten once (`instances`).
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable
from typing import Any, ClassVar

from moto.core.base_backend import BackendDict, BaseBackend
from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import unix_time
from moto.ssoadmin.models import PermissionSet, SSOAdminBackend, ssoadmin_backends
from moto.ssoadmin.responses import SSOAdminResponse

from embedded_aws.errors import AwsError
from embedded_aws.extension import ModelValidatedResponse, page
from embedded_aws.sso_roles import (
    PermissionSetSpec,
    ProvisioningFailed,
    deprovision,
    provision,
    session_seconds,
)

DEFAULT_SESSION_DURATION = "PT1H"
# CreatePermissionSet checks the name is free, creates, and gives the new set its ARN: one step
# for other request threads (the server answers each request on its own thread), or two creates of
# one name would both succeed.
_CREATING = threading.Lock()
MIN_SESSION_S, MAX_SESSION_S = 3600, 43200  # "from 1 hour up to 12 hours"
_HEX_STORE = re.compile(r"d-[0-9a-f]{10}")

EXTENDED = frozenset({
    "CreatePermissionSet", "DescribePermissionSet", "UpdatePermissionSet", "DeletePermissionSet", "ListPermissionSets",
    "PutInlinePolicyToPermissionSet", "GetInlinePolicyForPermissionSet", "DeleteInlinePolicyFromPermissionSet",
    "PutPermissionsBoundaryToPermissionSet", "GetPermissionsBoundaryForPermissionSet",
    "DeletePermissionsBoundaryFromPermissionSet",
    "AttachManagedPolicyToPermissionSet", "DetachManagedPolicyFromPermissionSet",
    "ListManagedPoliciesInPermissionSet", "AttachCustomerManagedPolicyReferenceToPermissionSet",
    "DetachCustomerManagedPolicyReferenceFromPermissionSet", "ListCustomerManagedPolicyReferencesInPermissionSet",
    "TagResource", "UntagResource", "ListTagsForResource",
    "ProvisionPermissionSet", "DescribePermissionSetProvisioningStatus", "ListPermissionSetProvisioningStatus",
    "ListPermissionSetsProvisionedToAccount", "ListAccountsForProvisionedPermissionSet",
    "CreateAccountAssignment", "DeleteAccountAssignment", "ListAccountAssignments",
    "ListAccountAssignmentsForPrincipal",
    "DescribeAccountAssignmentCreationStatus", "DescribeAccountAssignmentDeletionStatus",
    "ListAccountAssignmentCreationStatus", "ListAccountAssignmentDeletionStatus",
    "ListInstances", "DescribeInstance",
})


class SsoAdminExtensionBackend(BaseBackend):
    """What moto's sso-admin backend does not keep, per account and region (the instance's)."""

    def __init__(self, region_name: str, account_id: str) -> None:
        super().__init__(region_name, account_id)
        self.boundaries: dict[str, dict[str, Any]] = {}  # permission set ARN -> PermissionsBoundary
        self.tags: dict[str, dict[str, str]] = {}  # resource ARN -> tags
        self.provisioning: dict[str, dict[str, Any]] = {}  # request id -> PermissionSetProvisioningStatus
        self.creations: dict[str, dict[str, Any]] = {}  # request id -> AccountAssignmentOperationStatus
        self.deletions: dict[str, dict[str, Any]] = {}
        # permission set ARN -> account -> the permission set's revision last provisioned there
        self.provisioned: dict[str, dict[str, int]] = {}
        self.revisions: dict[str, int] = {}  # permission set ARN -> revision (bumped by every change)


sso_admin_extension_backends: BackendDict[SsoAdminExtensionBackend] = BackendDict(
    SsoAdminExtensionBackend, "sso-admin")


def instances(account: str, region: str) -> list[Any]:
    """moto's Identity Center instances of an account and region, with model-valid store ids."""
    backend: SSOAdminBackend = ssoadmin_backends[account][region]
    for instance in backend.instances:
        if not _HEX_STORE.fullmatch(instance.identity_store_id):
            instance.identity_store_id = "d-" + uuid.uuid4().hex[:10]
    return backend.instances


def not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFoundException", message)


def invalid(message: str) -> AwsError:
    return AwsError("ValidationException", message)


def conflict(message: str) -> AwsError:
    return AwsError("ConflictException", message)


class ExtendedSsoAdminResponse(ModelValidatedResponse, SSOAdminResponse):
    VALIDATED: ClassVar[frozenset[str]] = EXTENDED

    # State ------------------------------------------------------------------------------------
    @property
    def backend(self) -> SSOAdminBackend:
        return ssoadmin_backends[self.current_account][self.region]

    @property
    def ext(self) -> SsoAdminExtensionBackend:
        return sso_admin_extension_backends[self.current_account][self.region]

    def _instance(self, arn: str | None = None) -> Any:
        arn = arn or self.param("InstanceArn")
        found = next((i for i in instances(self.current_account, self.region) if i.instance_arn == arn), None)
        if found is None:
            raise not_found(f"Could not find Identity Center instance {arn}")
        return found

    def _permission_set(self, arn: str | None = None) -> PermissionSet:
        instance = self._instance()
        arn = arn or self.param("PermissionSetArn")
        # A copy: moto's DeletePermissionSet removes from the list another thread may be walking,
        # and a list's iterator then skips the entry after the removed one.
        found = next((p for p in tuple(self.backend.permission_sets)
                      if p.instance_arn == instance.instance_arn and p.permission_set_arn == arn), None)
        if found is None:
            raise not_found(f"Could not find PermissionSet with id {arn.rsplit('/', 1)[-1]}")
        return found

    def _changed(self, ps: PermissionSet) -> None:
        self.ext.revisions[ps.permission_set_arn] = self.ext.revisions.get(ps.permission_set_arn, 0) + 1

    def _spec(self, ps: PermissionSet) -> PermissionSetSpec:
        return PermissionSetSpec(
            name=ps.name, instance_arn=ps.instance_arn, instance_region=self.region,
            session_duration=str(ps.session_duration or DEFAULT_SESSION_DURATION),
            inline_policy=ps.inline_policy or "",
            managed_policy_arns=tuple(p.arn for p in ps.managed_policies),
            customer_managed_policies=tuple((c.name, c.path) for c in ps.customer_managed_policies),
            boundary=self.ext.boundaries.get(ps.permission_set_arn))

    def _assignments(self, ps_arn: str, account: str | None = None) -> list[Any]:
        return [a for a in self.backend.account_assignments
                if a.permission_set_arn == ps_arn and (account is None or a.target_id == account)]

    def _provision_to(self, ps: PermissionSet, account: str) -> str | None:
        """Provision `ps` into `account`: None, or the failure reason."""
        try:
            provision(self._spec(ps), account, partition=self.partition)
        except ProvisioningFailed as exc:
            return str(exc)
        self.ext.provisioned.setdefault(ps.permission_set_arn, {})[account] = \
            self.ext.revisions.get(ps.permission_set_arn, 0)
        return None

    def _page(self, items: list[Any]) -> tuple[list[Any], str | None]:
        return page(items, max_results=self.param("MaxResults"), next_token=self.param("NextToken"),
                    invalid=invalid("The NextToken is not valid."))

    # Permission sets --------------------------------------------------------------------------
    def create_permission_set(self) -> ActionResult:  # type: ignore[override]  # moto: str
        instance = self._instance()
        name = self.param("Name")
        duration = self._duration(self.param("SessionDuration", DEFAULT_SESSION_DURATION))
        with _CREATING:
            if any(p.name == name and p.instance_arn == instance.instance_arn for p in self.backend.permission_sets):
                raise conflict(f"PermissionSet with name {name} already exists.")
            created = self.backend.create_permission_set(
                name=name, description=self.param("Description"), instance_arn=instance.instance_arn,
                session_duration=duration, relay_state=self.param("RelayState"), tags=[])
            # Found by moto's own ARN, not as the list's last entry: under load another create may
            # have appended since, and the new ARN then went to that set (its creator's ARN named
            # nothing: "couldn't find resource" in a provider engine apply of 100 stacks at once).
            ps = next(p for p in self.backend.permission_sets if p.permission_set_arn == created["PermissionSetArn"])
            instance_id = instance.instance_arn.rsplit("/", 1)[-1]
            ps.permission_set_arn = \
                f"arn:{self.partition}:sso:::permissionSet/{instance_id}/ps-{uuid.uuid4().hex[:16]}"
        self.ext.tags[ps.permission_set_arn] = {t["Key"]: t["Value"] for t in self.param("Tags", [])}
        self._changed(ps)
        return self.shaped({"PermissionSet": {**created, "PermissionSetArn": ps.permission_set_arn}})

    def describe_permission_set(self) -> ActionResult:  # type: ignore[override]
        return self.shaped({"PermissionSet": self._permission_set().to_json(include_creation_date=True)})

    def update_permission_set(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        if self.param("Description") is not None:
            ps.description = self.param("Description")
        if self.param("SessionDuration") is not None:
            ps.session_duration = self._duration(self.param("SessionDuration"))
        if self.param("RelayState") is not None:
            ps.relay_state = self.param("RelayState")
        self._changed(ps)
        return EmptyResult()

    def delete_permission_set(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        if self._assignments(ps.permission_set_arn):
            raise conflict("Could not delete because PermissionSet has ApplicationProfile associated with it")
        for account in self.ext.provisioned.pop(ps.permission_set_arn, {}):
            deprovision(self._spec(ps), account, partition=self.partition)
        self.backend.delete_permission_set(instance_arn=ps.instance_arn, permission_set_arn=ps.permission_set_arn)
        self.ext.boundaries.pop(ps.permission_set_arn, None)
        self.ext.tags.pop(ps.permission_set_arn, None)
        self.ext.revisions.pop(ps.permission_set_arn, None)
        return EmptyResult()

    def list_permission_sets(self) -> ActionResult:  # type: ignore[override]
        instance = self._instance()
        arns = [p.permission_set_arn for p in self.backend.permission_sets if p.instance_arn == instance.instance_arn]
        chunk, token = self._page(arns)
        return self.shaped({"PermissionSets": chunk, "NextToken": token})

    def _duration(self, duration: str) -> str:
        try:
            seconds = session_seconds(duration)
        except ValueError:
            seconds = -1
        if not MIN_SESSION_S <= seconds <= MAX_SESSION_S:
            raise invalid(f"The session duration {duration} is not valid: permission set sessions last from 1 "
                          "to 12 hours (PT1H to PT12H).")
        return duration

    # Policies of a permission set ------------------------------------------------------------
    def put_inline_policy_to_permission_set(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        ps.inline_policy = self.param("InlinePolicy")
        self._changed(ps)
        return EmptyResult()

    def get_inline_policy_for_permission_set(self) -> ActionResult:  # type: ignore[override]
        return self.shaped({"InlinePolicy": self._permission_set().inline_policy or None})

    def delete_inline_policy_from_permission_set(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        ps.inline_policy = ""
        self._changed(ps)
        return EmptyResult()

    def put_permissions_boundary_to_permission_set(self) -> ActionResult:
        ps = self._permission_set()
        boundary = self.param("PermissionsBoundary")
        reference, managed = boundary.get("CustomerManagedPolicyReference"), boundary.get("ManagedPolicyArn")
        if (reference is None) == (managed is None):
            raise invalid("A permissions boundary is either a CustomerManagedPolicyReference or a ManagedPolicyArn, "
                          "exactly one of them.")
        self.ext.boundaries[ps.permission_set_arn] = (
            {"ManagedPolicyArn": managed} if managed is not None
            else {"CustomerManagedPolicyReference": {"Name": reference["Name"], "Path": reference.get("Path") or "/"}})
        self._changed(ps)
        return EmptyResult()

    def get_permissions_boundary_for_permission_set(self) -> ActionResult:
        ps = self._permission_set()
        boundary = self.ext.boundaries.get(ps.permission_set_arn)
        if boundary is None:
            raise not_found(f"Could not find PermissionsBoundary for PermissionSet with id "
                            f"{ps.permission_set_arn.rsplit('/', 1)[-1]}")
        return self.shaped({"PermissionsBoundary": boundary})

    def delete_permissions_boundary_from_permission_set(self) -> ActionResult:
        ps = self._permission_set()
        if self.ext.boundaries.pop(ps.permission_set_arn, None) is None:
            raise not_found(f"Could not find PermissionsBoundary for PermissionSet with id "
                            f"{ps.permission_set_arn.rsplit('/', 1)[-1]}")
        self._changed(ps)
        return EmptyResult()

    def _moto_policy_change(self, method: Callable[[], Any]) -> Any:
        ps = self._permission_set()
        result = method()
        self._changed(ps)
        return result

    def attach_managed_policy_to_permission_set(self) -> Any:
        return self._moto_policy_change(super().attach_managed_policy_to_permission_set)

    def detach_managed_policy_from_permission_set(self) -> Any:
        return self._moto_policy_change(super().detach_managed_policy_from_permission_set)

    def attach_customer_managed_policy_reference_to_permission_set(self) -> Any:
        return self._moto_policy_change(super().attach_customer_managed_policy_reference_to_permission_set)

    def detach_customer_managed_policy_reference_from_permission_set(self) -> Any:
        return self._moto_policy_change(super().detach_customer_managed_policy_reference_from_permission_set)

    def list_managed_policies_in_permission_set(self) -> Any:
        self._permission_set()
        return super().list_managed_policies_in_permission_set()

    def list_customer_managed_policy_references_in_permission_set(self) -> Any:
        self._permission_set()
        return super().list_customer_managed_policy_references_in_permission_set()

    # Tags --------------------------------------------------------------------------------------
    def _taggable(self) -> str:
        arn = str(self.param("ResourceArn"))
        if ":permissionSet/" in arn:
            instance_id = arn.split("/")[1]
            owner = next((i for i in instances(self.current_account, self.region)
                          if i.instance_arn.endswith(f"/{instance_id}")), None)
            if owner is None or (self.param("InstanceArn") and self.param("InstanceArn") != owner.instance_arn):
                raise not_found(f"Could not find PermissionSet with id {arn.rsplit('/', 1)[-1]}")
            self._permission_set_in(owner.instance_arn, arn)
        elif ":instance/" in arn:
            self._instance(arn)
        else:
            raise not_found(f"Could not find resource {arn}")
        return arn

    def _permission_set_in(self, instance_arn: str, arn: str) -> None:
        sets = self.backend.permission_sets
        if not any(p.instance_arn == instance_arn and p.permission_set_arn == arn for p in sets):
            raise not_found(f"Could not find PermissionSet with id {arn.rsplit('/', 1)[-1]}")

    def list_tags_for_resource(self) -> ActionResult:
        tags = self.ext.tags.get(self._taggable(), {})
        chunk, token = page([{"Key": k, "Value": v} for k, v in tags.items()], max_results=None,
                            next_token=self.param("NextToken"), invalid=invalid("The NextToken is not valid."))
        return self.shaped({"Tags": chunk, "NextToken": token})

    def tag_resource(self) -> ActionResult:
        arn = self._taggable()
        tags = {**self.ext.tags.get(arn, {}), **{t["Key"]: t["Value"] for t in self.param("Tags", [])}}
        if len(tags) > 50:
            raise AwsError("ServiceQuotaExceededException", "A resource can have at most 50 tags.")
        self.ext.tags[arn] = tags
        return EmptyResult()

    def untag_resource(self) -> ActionResult:
        arn = self._taggable()
        for key in self.param("TagKeys", []):
            self.ext.tags.get(arn, {}).pop(key, None)
        return EmptyResult()

    # Provisioning ------------------------------------------------------------------------------
    def provision_permission_set(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        target_type, target = self.param("TargetType"), self.param("TargetId")
        if target_type == "AWS_ACCOUNT" and not target:
            raise invalid("TargetId is required when TargetType is AWS_ACCOUNT.")
        if target_type == "ALL_PROVISIONED_ACCOUNTS" and target:
            raise invalid("TargetId must not be given when TargetType is ALL_PROVISIONED_ACCOUNTS.")
        accounts = [target] if target_type == "AWS_ACCOUNT" else sorted(self.ext.provisioned.get(ps.permission_set_arn,
                                                                                                  {}))
        failures = [reason for account in accounts if (reason := self._provision_to(ps, account))]
        status: dict[str, Any] = {"RequestId": str(uuid.uuid4()), "PermissionSetArn": ps.permission_set_arn,
                                  "CreatedDate": unix_time(), "AccountId": target,
                                  "Status": "FAILED" if failures else "SUCCEEDED",
                                  "FailureReason": "; ".join(failures) or None}
        self.ext.provisioning[status["RequestId"]] = status
        return self.shaped({"PermissionSetProvisioningStatus": {**status, "Status": "IN_PROGRESS",
                                                                "FailureReason": None}})

    def describe_permission_set_provisioning_status(self) -> ActionResult:
        self._instance()
        request_id = self.param("ProvisionPermissionSetRequestId")
        status = self.ext.provisioning.get(request_id)
        if status is None:
            raise not_found(f"Could not find the provisioning request {request_id}")
        return self.shaped({"PermissionSetProvisioningStatus": status})

    def list_permission_set_provisioning_status(self) -> ActionResult:
        self._instance()
        return self._list_statuses(self.ext.provisioning, "PermissionSetsProvisioningStatus")

    def list_permission_sets_provisioned_to_account(self) -> ActionResult:  # type: ignore[override]
        instance = self._instance()
        account, wanted = self.param("AccountId"), self.param("ProvisioningStatus")
        arns = [p.permission_set_arn for p in self.backend.permission_sets
                if p.instance_arn == instance.instance_arn
                and account in self.ext.provisioned.get(p.permission_set_arn, {})
                and self._matches(p.permission_set_arn, account, wanted)]
        chunk, token = self._page(arns)
        return self.shaped({"PermissionSets": chunk, "NextToken": token})

    def list_accounts_for_provisioned_permission_set(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        wanted = self.param("ProvisioningStatus")
        accounts = [a for a in sorted(self.ext.provisioned.get(ps.permission_set_arn, {}))
                    if self._matches(ps.permission_set_arn, a, wanted)]
        chunk, token = self._page(accounts)
        return self.shaped({"AccountIds": chunk, "NextToken": token})

    def _matches(self, ps_arn: str, account: str, wanted: str | None) -> bool:
        if wanted is None:
            return True
        latest = self.ext.provisioned[ps_arn][account] == self.ext.revisions.get(ps_arn, 0)
        return latest == (wanted == "LATEST_PERMISSION_SET_PROVISIONED")

    # Account assignments -----------------------------------------------------------------------
    def _assignment_status(self, status: str, reason: str | None = None) -> dict[str, Any]:
        return {"Status": status, "FailureReason": reason, "RequestId": str(uuid.uuid4()),
                "TargetId": self.param("TargetId"), "TargetType": self.param("TargetType"),
                "PermissionSetArn": self.param("PermissionSetArn"), "PrincipalType": self.param("PrincipalType"),
                "PrincipalId": self.param("PrincipalId"), "CreatedDate": unix_time()}

    def _key(self) -> tuple[Any, ...]:
        return tuple(self.param(k) for k in ("TargetId", "TargetType", "PermissionSetArn", "PrincipalType",
                                             "PrincipalId"))

    def _find_assignment(self) -> Any | None:
        return next((a for a in self.backend.account_assignments
                     if a.instance_arn == self.param("InstanceArn")
                     and (a.target_id, a.target_type, a.permission_set_arn, a.principal_type, a.principal_id)
                     == self._key()), None)

    def create_account_assignment(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        account = self.param("TargetId")
        reason = self._provision_to(ps, account)
        if reason is None and self._find_assignment() is None:
            self.backend.create_account_assignment(
                instance_arn=ps.instance_arn, target_id=account, target_type=self.param("TargetType"),
                permission_set_arn=ps.permission_set_arn, principal_type=self.param("PrincipalType"),
                principal_id=self.param("PrincipalId"))
        status = self._assignment_status("FAILED" if reason else "SUCCEEDED", reason)
        self.ext.creations[status["RequestId"]] = status
        return self.shaped({"AccountAssignmentCreationStatus": {**status, "Status": "IN_PROGRESS",
                                                                "FailureReason": None}})

    def delete_account_assignment(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        assignment = self._find_assignment()
        if assignment is None:
            raise not_found(f"Could not find the account assignment of {self.param('PrincipalType')} "
                            f"{self.param('PrincipalId')} to account {self.param('TargetId')} with PermissionSet "
                            f"{ps.permission_set_arn.rsplit('/', 1)[-1]}")
        self.backend.account_assignments.remove(assignment)
        account = assignment.target_id
        if not self._assignments(ps.permission_set_arn, account):
            deprovision(self._spec(ps), account, partition=self.partition)
            self.ext.provisioned.get(ps.permission_set_arn, {}).pop(account, None)
        status = self._assignment_status("SUCCEEDED")
        self.ext.deletions[status["RequestId"]] = status
        return self.shaped({"AccountAssignmentDeletionStatus": {**status, "Status": "IN_PROGRESS"}})

    def describe_account_assignment_creation_status(self) -> ActionResult:  # type: ignore[override]
        return self._describe_status(self.ext.creations, "AccountAssignmentCreationRequestId",
                                     "AccountAssignmentCreationStatus")

    def describe_account_assignment_deletion_status(self) -> ActionResult:  # type: ignore[override]
        return self._describe_status(self.ext.deletions, "AccountAssignmentDeletionRequestId",
                                     "AccountAssignmentDeletionStatus")

    def list_account_assignment_creation_status(self) -> ActionResult:
        self._instance()
        return self._list_statuses(self.ext.creations, "AccountAssignmentsCreationStatus")

    def list_account_assignment_deletion_status(self) -> ActionResult:
        self._instance()
        return self._list_statuses(self.ext.deletions, "AccountAssignmentsDeletionStatus")

    def _describe_status(self, statuses: dict[str, dict[str, Any]], request_member: str, key: str) -> ActionResult:
        self._instance()
        request_id = self.param(request_member)
        status = statuses.get(request_id)
        if status is None:
            raise not_found(f"Could not find the request {request_id}")
        return self.shaped({key: status})

    def _list_statuses(self, statuses: dict[str, dict[str, Any]], key: str) -> ActionResult:
        wanted = (self.param("Filter") or {}).get("Status")
        listed = [s for s in statuses.values() if wanted is None or s["Status"] == wanted]
        chunk, token = self._page(listed)
        return self.shaped({key: chunk, "NextToken": token})

    def list_account_assignments(self) -> ActionResult:  # type: ignore[override]
        ps = self._permission_set()
        listed = [{"AccountId": a.target_id, "PermissionSetArn": a.permission_set_arn,
                   "PrincipalType": a.principal_type, "PrincipalId": a.principal_id}
                  for a in self._assignments(ps.permission_set_arn, self.param("AccountId"))]
        chunk, token = self._page(listed)
        return self.shaped({"AccountAssignments": chunk, "NextToken": token})

    def list_account_assignments_for_principal(self) -> Any:
        self._instance()
        return super().list_account_assignments_for_principal()

    # Instances ---------------------------------------------------------------------------------
    def list_instances(self) -> ActionResult:  # type: ignore[override]
        listed = [self._instance_json(i) for i in instances(self.current_account, self.region)]
        chunk, token = self._page(listed)
        return self.shaped({"Instances": chunk, "NextToken": token})

    def describe_instance(self) -> ActionResult:
        return self.shaped(self._instance_json(self._instance()))

    def _instance_json(self, instance: Any) -> dict[str, Any]:
        return {**instance.to_json(), "PrimaryRegion": self.region, "PermissionSetsEnabled": True,
                "IdentityStoreArn": f"arn:{self.partition}:identitystore::{instance.account_id}:identitystore/"
                                    f"{instance.identity_store_id}"}
