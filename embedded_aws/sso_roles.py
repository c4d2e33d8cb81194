"""The IAM role IAM Identity Center provisions for a permission set in an account: the one place
that creates, updates and deletes it.

AWS documents it (IAM Identity Center user guide, "Referencing permission sets"): provisioning a
permission set to an account -- by assigning it (CreateAccountAssignment) or explicitly
(ProvisionPermissionSet) -- creates in that account the role
``AWSReservedSSO_<permission set name>_<16 hex>`` under the path
``/aws-reserved/sso.amazonaws.com/<region>/`` (no ``<region>/`` when Identity Center is in
us-east-1), trusted for SAML federation through the account's ``AWSSSO_<hex>_DO_NOT_DELETE``
provider, carrying the permission set's inline policy (as ``AwsSSOInlinePolicy``), managed
policies, customer managed policy references, permissions boundary and session duration.
Reprovisioning updates that role in place (same suffix); removing the last assignment of the
permission set in the account deletes it, and a later assignment creates a role with a new suffix.
A customer managed policy (or boundary) reference to a policy the account does not have fails the
provisioning.

Runs inside the endpoint's process: it writes moto's IAM backend of the target account.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

SSO_PATH_PREFIX = "/aws-reserved/sso.amazonaws.com/"
ROLE_PREFIX = "AWSReservedSSO_"
INLINE_POLICY_NAME = "AwsSSOInlinePolicy"
_DURATION = re.compile(r"P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+)S)?)?")


class ProvisioningFailed(Exception):
    """Provisioning to one account failed; the message is the status's FailureReason."""


@dataclass(frozen=True)
class PermissionSetSpec:
    """What a permission set puts into the role it provisions."""

    name: str
    instance_arn: str
    instance_region: str
    session_duration: str = "PT1H"
    inline_policy: str = ""
    managed_policy_arns: tuple[str, ...] = ()
    customer_managed_policies: tuple[tuple[str, str], ...] = ()  # (name, path)
    boundary: dict[str, Any] | None = field(default=None, hash=False)


def role_path(instance_region: str) -> str:
    """The path of every role Identity Center provisions from an instance in `instance_region`."""
    return SSO_PATH_PREFIX if instance_region == "us-east-1" else f"{SSO_PATH_PREFIX}{instance_region}/"


def role_name_pattern(permission_set_name: str) -> re.Pattern[str]:
    return re.compile(rf"{ROLE_PREFIX}{re.escape(permission_set_name)}_[0-9a-f]{{16}}")


def session_seconds(duration: str) -> int:
    """An ISO-8601 duration (PT8H) in seconds."""
    match = _DURATION.fullmatch(duration or "")
    if match is None or not any(match.groupdict().values()):
        raise ValueError(f"not an ISO-8601 duration: {duration!r}")
    parts = {k: int(v or 0) for k, v in match.groupdict().items()}
    return parts["d"] * 86400 + parts["h"] * 3600 + parts["m"] * 60 + parts["s"]


def saml_provider_arn(instance_arn: str, account: str, partition: str) -> str:
    """The account's Identity Center SAML provider (one per instance and account)."""
    digest = hashlib.sha256(f"{instance_arn}|{account}".encode()).hexdigest()[:16]
    return f"arn:{partition}:iam::{account}:saml-provider/AWSSSO_{digest}_DO_NOT_DELETE"


def trust_policy(instance_arn: str, account: str, partition: str) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow",
        "Principal": {"Federated": saml_provider_arn(instance_arn, account, partition)},
        "Action": ["sts:AssumeRoleWithSAML", "sts:TagSession"],
        "Condition": {"StringEquals": {"SAML:aud": "https://signin.aws.amazon.com/saml"}}}]})


def customer_policy_arn(account: str, partition: str, name: str, path: str = "/") -> str:
    return f"arn:{partition}:iam::{account}:policy{path}{name}"


def _iam(account: str, partition: str) -> Any:
    from moto.iam.models import iam_backends

    return iam_backends[account][partition]


def provisioned_role(account: str, permission_set_name: str, *, instance_region: str,
                     partition: str = "aws") -> Any | None:
    """moto's IAM role provisioned for `permission_set_name` in `account`, or None."""
    pattern, path = role_name_pattern(permission_set_name), role_path(instance_region)
    return next((r for r in _iam(account, partition).get_roles()
                 if r.path == path and pattern.fullmatch(r.name)), None)


def provision(spec: PermissionSetSpec, account: str, *, partition: str = "aws") -> str:
    """Create or update the permission set's role in `account`; its name. ProvisioningFailed
    when a referenced customer managed policy is missing (nothing is changed then)."""
    iam = _iam(account, partition)
    attached = _policy_arns(spec, account, partition)
    boundary = _boundary_arn(spec, account, partition)
    known = {p.arn for p in iam.managed_policies.values()}
    for arn in [*attached, *([boundary] if boundary else [])]:
        if arn not in known and f":iam::{account}:" in arn:
            raise ProvisioningFailed(f"Received a 404 status error: Policy {arn} does not exist in account "
                                     f"{account}. Make sure the customer managed policy exists in the account.")
    duration = session_seconds(spec.session_duration)
    role = provisioned_role(account, spec.name, instance_region=spec.instance_region, partition=partition)
    trust = trust_policy(spec.instance_arn, account, partition)
    if role is None:
        name = f"{ROLE_PREFIX}{spec.name}_{uuid.uuid4().hex[:16]}"
        role = iam.create_role(name, trust, role_path(spec.instance_region), boundary, "", [], duration)
    else:
        role.assume_role_policy_document = trust
        role.max_session_duration = duration
        role.permissions_boundary_arn = boundary
    if spec.inline_policy:
        iam.put_role_policy(role.name, INLINE_POLICY_NAME, spec.inline_policy)
    elif INLINE_POLICY_NAME in role.policies:
        iam.delete_role_policy(role.name, INLINE_POLICY_NAME)
    for arn in set(role.managed_policies) - set(attached):
        iam.detach_role_policy(arn, role.name)
    for arn in attached:
        if arn not in role.managed_policies and arn in known:
            iam.attach_role_policy(arn, role.name)
    return str(role.name)


def deprovision(spec: PermissionSetSpec, account: str, *, partition: str = "aws") -> str | None:
    """Delete the permission set's role in `account` (its policies first); its name, or None."""
    iam = _iam(account, partition)
    role = provisioned_role(account, spec.name, instance_region=spec.instance_region, partition=partition)
    if role is None:
        return None
    for arn in list(role.managed_policies):
        iam.detach_role_policy(arn, role.name)
    for policy_name in list(role.policies):
        iam.delete_role_policy(role.name, policy_name)
    iam.delete_role(role.name)
    return str(role.name)


def _policy_arns(spec: PermissionSetSpec, account: str, partition: str) -> list[str]:
    return [*spec.managed_policy_arns,
            *(customer_policy_arn(account, partition, name, path) for name, path in spec.customer_managed_policies)]


def _boundary_arn(spec: PermissionSetSpec, account: str, partition: str) -> str | None:
    if not spec.boundary:
        return None
    if spec.boundary.get("ManagedPolicyArn"):
        return str(spec.boundary["ManagedPolicyArn"])
    reference = spec.boundary["CustomerManagedPolicyReference"]
    return customer_policy_arn(account, partition, reference["Name"], reference.get("Path") or "/")


def find_provisioned_role(endpoint: Any, *, account: str, permission_set_name: str,
                          identity_center_region: str) -> dict[str, Any] | None:
    """Through the API (any `EndpointHandle`, in-process or child): the role Identity Center
    provisioned for `permission_set_name` in `account` (IAM's Role dict), or None."""
    iam = endpoint.client("iam", account=account, region="us-east-1")
    pattern = role_name_pattern(permission_set_name)
    for listed in iam.get_paginator("list_roles").paginate(PathPrefix=role_path(identity_center_region)):
        for role in listed["Roles"]:
            if pattern.fullmatch(role["RoleName"]) and role["Path"] == role_path(identity_center_region):
                return dict(iam.get_role(RoleName=role["RoleName"])["Role"])
    return None
