"""The I/O of the live Identity Center scan: one scan unit for the org's instance (org.yaml
`identity_center`: its account and region), compared with every stack's desired objects by
`engines.live.identity_center`.

ListPermissionSets returns ARNs only, and sso-admin has no call that lists permission sets with
their names or policies, so: DescribePermissionSet for every set (its name says whether it is
hypergov's), then, for hypergov's (declared, or named as hypergov names them) only,
GetInlinePolicyForPermissionSet, GetPermissionsBoundaryForPermissionSet (ResourceNotFound: none),
ListManagedPoliciesInPermissionSet, ListCustomerManagedPolicyReferencesInPermissionSet and
ListTagsForResource; and ListAccountAssignments (which takes one permission set and one account)
for every declared set in every org account and every account a declaration targets. The
per-set reads run side by side (`DEFAULT_CONCURRENCY`), each call counted, pages included.

Pruners delete exactly the item's object: an assignment (DeleteAccountAssignment, then its
deletion status until it leaves IN_PROGRESS), a permission set (every assignment in every account
it is provisioned to, then DeletePermissionSet), an attached managed policy or customer-managed
reference (detached, then the set provisioned again to every account it is in, as a change of a
permission set reaches accounts only by provisioning).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from engines.desired import DesiredObject, of_type
from engines.live.identity_center import (
    ASSIGNMENT,
    CUSTOMER_ATTACHMENT,
    IDENTITY_CENTER_TYPES,
    MANAGED_ATTACHMENT,
    PERMISSION_SET,
    Declared,
    LiveAssignment,
    LiveIdentityCenter,
    LivePermissionSet,
    OrgIdentityCenter,
    compare,
    member_lookups,
)
from engines.live.items import DriftItem
from engines.live.runner import DEFAULT_CONCURRENCY, CallCounter, Pruner, ScanContext, ScanUnit
from hypergov import naming

PAGE_SIZE = 100  # the most ListPermissionSets and ListAccountAssignments return a page (MaxResults)
STATUS_TIMEOUT_S = 300.0  # how long a pruner waits for a deletion or provisioning request to finish
STATUS_POLL_S = 1.0
IN_PROGRESS = "IN_PROGRESS"


def _boundary(client: Any, calls: CallCounter, instance: str, arn: str) -> Any:
    try:
        return calls(client, "get_permissions_boundary_for_permission_set", InstanceArn=instance,
                     PermissionSetArn=arn).get("PermissionsBoundary")
    except client.exceptions.ResourceNotFoundException:  # none attached
        return None


def read_permission_set(client: Any, calls: CallCounter, instance: str, described: Any) -> LivePermissionSet:
    """A hypergov permission set's policies and tags, read in full."""
    arn = str(described["PermissionSetArn"])
    inline = calls(client, "get_inline_policy_for_permission_set", InstanceArn=instance,
                   PermissionSetArn=arn).get("InlinePolicy")
    managed = [p for page in calls.pages(client, "list_managed_policies_in_permission_set", InstanceArn=instance,
                                         PermissionSetArn=arn, PaginationConfig={"PageSize": PAGE_SIZE})
               for p in page.get("AttachedManagedPolicies", [])]
    customer = [p for page in calls.pages(client, "list_customer_managed_policy_references_in_permission_set",
                                          InstanceArn=instance, PermissionSetArn=arn,
                                          PaginationConfig={"PageSize": PAGE_SIZE})
                for p in page.get("CustomerManagedPolicyReferences", [])]
    tags = [t for page in calls.pages(client, "list_tags_for_resource", InstanceArn=instance, ResourceArn=arn)
            for t in page.get("Tags", [])]
    return LivePermissionSet.read(described, inline=inline, boundary=_boundary(client, calls, instance, arn),
                                  managed=managed, customer=customer, tags=tags)


def _side_by_side(work: Callable[[Any], Any], inputs: Sequence[Any]) -> list[Any]:
    if len(inputs) <= 1:
        return [work(i) for i in inputs]
    with ThreadPoolExecutor(max_workers=min(DEFAULT_CONCURRENCY, len(inputs))) as pool:
        return list(pool.map(work, inputs))


def read_instance(client: Any, calls: CallCounter, org: OrgIdentityCenter, declared: Declared) -> LiveIdentityCenter:
    instance = org.instance_arn
    arns = [a for page in calls.pages(client, "list_permission_sets", InstanceArn=instance,
                                      PaginationConfig={"PageSize": PAGE_SIZE})
            for a in page.get("PermissionSets", [])]
    described = _side_by_side(lambda arn: calls(client, "describe_permission_set", InstanceArn=instance,
                                                PermissionSetArn=arn)["PermissionSet"], arns)
    ours = declared.hypergov_names(org)
    sets = _side_by_side(lambda d: read_permission_set(client, calls, instance, d),
                         [d for d in described if d["Name"] in ours])
    by_name = {ps.name: ps for ps in sets}
    accounts = sorted({*org.accounts, *(key[1] for key in declared.assignments)})
    pairs = [(by_name[name].arn, account) for name in sorted(declared.permission_sets) if name in by_name
             for account in accounts]

    def assignments(pair: tuple[str, str]) -> list[LiveAssignment]:
        arn, account = pair
        return [LiveAssignment.read(a) for page in calls.pages(
            client, "list_account_assignments", InstanceArn=instance, AccountId=account, PermissionSetArn=arn,
            PaginationConfig={"PageSize": PAGE_SIZE}) for a in page.get("AccountAssignments", [])]

    return LiveIdentityCenter(permission_sets=by_name,
                              assignments=tuple(a for found in _side_by_side(assignments, pairs) for a in found))


def scan_instance(client: Any, calls: CallCounter, org: OrgIdentityCenter,
                  desired: Sequence[DesiredObject]) -> list[DriftItem]:
    return compare(org, desired, read_instance(client, calls, org, Declared.of(desired)))


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit for the org's Identity Center instance (none when org.yaml names none). Its items
    name the stacks that declare Identity Center objects or whose naming an unmanaged one follows."""
    org = OrgIdentityCenter.of(context.tree, context.specs, member_lookups(context.lookups))
    if org is None:
        return []
    desired = of_type(context.desired, *IDENTITY_CENTER_TYPES)
    covers = frozenset({naming.org_stack(), *(o.stack for o in desired), *(s for s, _ in org.owners.values())})
    return [ScanUnit(service="sso-admin", account=org.account, region=org.region, stack=naming.org_stack(),
                     what=f"Identity Center instance {org.instance_arn} ({org.account} {org.region})",
                     read=lambda client, calls: scan_instance(client, calls, org, desired), covers=covers)]


def _wait(client: Any, calls: CallCounter, operation: str, request: str, request_id: str, key: str,
          instance: str) -> None:
    """Until the request leaves IN_PROGRESS; a FAILED one raises with its reason."""
    deadline = time.monotonic() + STATUS_TIMEOUT_S
    while True:
        status = calls(client, operation, InstanceArn=instance, **{request: request_id})[key]
        if status.get("Status") != IN_PROGRESS:
            if status.get("Status") == "FAILED":
                raise RuntimeError(f"{operation} {request_id}: {status.get('FailureReason') or 'FAILED'}")
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{operation} {request_id} still {IN_PROGRESS} after {STATUS_TIMEOUT_S:.0f} s")
        time.sleep(STATUS_POLL_S)


def delete_assignment(client: Any, calls: CallCounter, instance: str, permission_set: str, account: str,
                      principal_type: str, principal_id: str) -> None:
    started = calls(client, "delete_account_assignment", InstanceArn=instance, TargetId=account,
                    TargetType="AWS_ACCOUNT", PermissionSetArn=permission_set, PrincipalType=principal_type,
                    PrincipalId=principal_id)["AccountAssignmentDeletionStatus"]
    if started.get("Status") == IN_PROGRESS:
        _wait(client, calls, "describe_account_assignment_deletion_status", "AccountAssignmentDeletionRequestId",
              str(started["RequestId"]), "AccountAssignmentDeletionStatus", instance)
    elif started.get("Status") == "FAILED":
        raise RuntimeError(f"DeleteAccountAssignment: {started.get('FailureReason') or 'FAILED'}")


def _delete_assignment(client: Any, item: DriftItem, calls: CallCounter) -> None:
    ref = item.ref
    delete_assignment(client, calls, ref["InstanceArn"], ref["PermissionSetArn"], ref["TargetId"],
                      ref["PrincipalType"], ref["PrincipalId"])


def _delete_permission_set(client: Any, item: DriftItem, calls: CallCounter) -> None:
    instance, arn = item.ref["InstanceArn"], item.ref["PermissionSetArn"]
    accounts = [a for page in calls.pages(client, "list_accounts_for_provisioned_permission_set",
                                          InstanceArn=instance, PermissionSetArn=arn)
                for a in page.get("AccountIds", [])]
    for account in accounts:
        for page in calls.pages(client, "list_account_assignments", InstanceArn=instance, AccountId=account,
                                PermissionSetArn=arn):
            for a in page.get("AccountAssignments", []):
                delete_assignment(client, calls, instance, arn, account, a["PrincipalType"], a["PrincipalId"])
    calls(client, "delete_permission_set", InstanceArn=instance, PermissionSetArn=arn)


def _provision(client: Any, calls: CallCounter, instance: str, arn: str) -> None:
    """The permission set provisioned again where it is (a change reaches accounts no other way)."""
    started = calls(client, "provision_permission_set", InstanceArn=instance, PermissionSetArn=arn,
                    TargetType="ALL_PROVISIONED_ACCOUNTS")["PermissionSetProvisioningStatus"]
    if started.get("Status") == IN_PROGRESS:
        _wait(client, calls, "describe_permission_set_provisioning_status", "ProvisionPermissionSetRequestId",
              str(started["RequestId"]), "PermissionSetProvisioningStatus", instance)


def _detach_managed(client: Any, item: DriftItem, calls: CallCounter) -> None:
    instance, arn = item.ref["InstanceArn"], item.ref["PermissionSetArn"]
    calls(client, "detach_managed_policy_from_permission_set", InstanceArn=instance, PermissionSetArn=arn,
          ManagedPolicyArn=item.ref["ManagedPolicyArn"])
    _provision(client, calls, instance, arn)


def _detach_customer(client: Any, item: DriftItem, calls: CallCounter) -> None:
    instance, arn = item.ref["InstanceArn"], item.ref["PermissionSetArn"]
    calls(client, "detach_customer_managed_policy_reference_from_permission_set", InstanceArn=instance,
          PermissionSetArn=arn, CustomerManagedPolicyReference={"Name": item.ref["Name"], "Path": item.ref["Path"]})
    _provision(client, calls, instance, arn)


PRUNERS = {ASSIGNMENT: Pruner(service="sso-admin", delete=_delete_assignment),
           PERMISSION_SET: Pruner(service="sso-admin", delete=_delete_permission_set),
           MANAGED_ATTACHMENT: Pruner(service="sso-admin", delete=_detach_managed),
           CUSTOMER_ATTACHMENT: Pruner(service="sso-admin", delete=_detach_customer)}
