"""Adoption of what already exists: a resource terraform would create but that is live already
(its state was lost, a killed apply created it and died before recording it, or somebody made it
by hand under the tree's name) is imported instead, so the apply does not fail with "already
exists" and nothing is recreated.

For each create of a stack's first plan, one read call asks AWS whether the object is there and
gives the import ID the AWS provider's documentation names for its type (the "Import" section of
each resource). The stack is then planned again with Terraform `import` blocks
(`imports.tf.json`, next to `main.tf.json`), and terraform's own plan shows those resources as
imported, with any update the import still needs. Only creates are probed: an object in the
state is terraform's to refresh.

`find_imports` does the reads (clients passed in); `imports_config` is pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from botocore.exceptions import ClientError

from engines.desired import DesiredObject
from engines.identity_store import MEMBER_ID_READ

IMPORTS_FILE = "imports.tf.json"
# A terraform reference to another resource's attribute, as `translate` writes it.
_REFERENCE = re.compile(r"^\$\{([a-z0-9_]+\.[A-Za-z0-9_-]+)\.([a-z_]+)\}$")
# A data source's result, as `translate` writes it: `${data.T.N.attr}` or `${one(data.T.N.attr)}`.
_DATA_REFERENCE = re.compile(r"^\$\{(?:one\()?data\.([a-z0-9_]+)\.([A-Za-z0-9_-]+)\.[a-z_]+\)?\}$")
# Error codes that mean "no such object" on the reads below (botocore's models of each service).
_ABSENT = frozenset({"NoSuchEntity", "NoSuchEntityException", "NotFoundException", "NotFound",
                     "ResourceNotFoundException", "PolicyNotFoundException", "TargetNotFoundException"})


class Clients(Protocol):
    """What adoption needs of `engines.aws_clients.AwsClients`."""

    def client(self, service: str, *, region: str, account: str | None = None) -> Any: ...
    def caller_account(self, region: str) -> str: ...


@dataclass(frozen=True)
class Import:
    """One Terraform `import` block: the address it fills and the live object's ID."""

    address: str
    id: str
    provider: str | None  # the resource's provider alias (`aws.aws_ml_prod_us_west_2`), None: the default


@dataclass(frozen=True)
class _Place:
    """Where a resource's reads go, and what it is (its terraform body)."""

    body: Mapping[str, Any]
    account: str | None
    region: str
    clients: Clients
    partition: str

    def client(self, service: str) -> Any:
        return self.clients.client(service, region=self.region, account=self.account)

    def own_account(self) -> str:
        return self.account or self.clients.caller_account(self.region)


def _absent(call: Callable[[], Any]) -> Any:
    """The call's answer, or None when the service says the object does not exist."""
    try:
        return call()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _ABSENT:
            return None
        raise


def _pages(client: Any, operation: str, key: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    for page in client.get_paginator(operation).paginate(**kwargs):
        yield from page.get(key, [])


def _role(place: _Place, _: Callable[[str], str | None]) -> str | None:
    name = place.body["name"]
    return name if _absent(lambda: place.client("iam").get_role(RoleName=name)) else None


def _policy(place: _Place, _: Callable[[str], str | None]) -> str | None:
    path = place.body.get("path") or "/"
    arn = f"arn:{place.partition}:iam::{place.own_account()}:policy{path}{place.body['name']}"
    return arn if _absent(lambda: place.client("iam").get_policy(PolicyArn=arn)) else None


def _role_policy(place: _Place, _: Callable[[str], str | None]) -> str | None:
    role, name = place.body["role"], place.body["name"]
    found = _absent(lambda: place.client("iam").get_role_policy(RoleName=role, PolicyName=name))
    return f"{role}:{name}" if found else None


def _role_policy_attachment(place: _Place, _: Callable[[str], str | None]) -> str | None:
    role, arn = place.body["role"], place.body["policy_arn"]
    attached = _absent(lambda: list(_pages(place.client("iam"), "list_attached_role_policies",
                                           "AttachedPolicies", RoleName=role)))
    return f"{role}/{arn}" if any(p["PolicyArn"] == arn for p in attached or []) else None


def _organizations_policy(place: _Place, _: Callable[[str], str | None]) -> str | None:
    kind, name = place.body.get("type") or "SERVICE_CONTROL_POLICY", place.body["name"]
    found = [p["Id"] for p in _pages(place.client("organizations"), "list_policies", "Policies", Filter=kind)
             if p["Name"] == name]
    return found[0] if found else None


def _organizations_policy_attachment(place: _Place, resolve: Callable[[str], str | None]) -> str | None:
    policy, target = resolve(place.body["policy_id"]), place.body["target_id"]
    if policy is None:  # the policy itself is not live: neither is its attachment
        return None
    targets = _absent(lambda: list(_pages(place.client("organizations"), "list_targets_for_policy", "Targets",
                                          PolicyId=policy)))
    return f"{target}:{policy}" if any(t["TargetId"] == target for t in targets or []) else None


def _budget(place: _Place, _: Callable[[str], str | None]) -> str | None:
    account = place.body.get("account_id") or place.own_account()
    name = place.body["name"]
    found = _absent(lambda: place.client("budgets").describe_budget(AccountId=account, BudgetName=name))
    return f"{account}:{name}" if found else None


def _access_entry(place: _Place, resolve: Callable[[str], str | None]) -> str | None:
    cluster, principal = place.body["cluster_name"], resolve(place.body["principal_arn"])
    if principal is None:  # a role Identity Center has not provisioned: no entry names it
        return None
    found = _absent(lambda: place.client("eks").describe_access_entry(clusterName=cluster, principalArn=principal))
    return f"{cluster}:{principal}" if found else None


def _access_policy_association(place: _Place, resolve: Callable[[str], str | None]) -> str | None:
    cluster, principal, arn = place.body["cluster_name"], resolve(place.body["principal_arn"]), place.body["policy_arn"]
    if principal is None:
        return None
    associated = _absent(lambda: list(_pages(place.client("eks"), "list_associated_access_policies",
                                             "associatedAccessPolicies", clusterName=cluster, principalArn=principal)))
    return f"{cluster}#{principal}#{arn}" if any(p["policyArn"] == arn for p in associated or []) else None


def _permission_set(place: _Place, _: Callable[[str], str | None]) -> str | None:
    instance, name = place.body["instance_arn"], place.body["name"]
    sso = place.client("sso-admin")
    for arn in _pages(sso, "list_permission_sets", "PermissionSets", InstanceArn=instance):
        described = sso.describe_permission_set(InstanceArn=instance, PermissionSetArn=arn)["PermissionSet"]
        if described.get("Name") == name:
            return f"{arn},{instance}"
    return None


def _of_permission_set(place: _Place, resolve: Callable[[str], str | None],
                       read: Callable[[Any, str, str], Any]) -> str | None:
    """`<permission set ARN>,<instance ARN>` when `read` finds the permission set's part live."""
    instance, permission_set = place.body["instance_arn"], resolve(place.body["permission_set_arn"])
    if permission_set is None:  # the permission set is not live: neither is what hangs on it
        return None
    found = _absent(lambda: read(place.client("sso-admin"), instance, permission_set))
    return f"{permission_set},{instance}" if found else None


def _permission_set_inline_policy(place: _Place, resolve: Callable[[str], str | None]) -> str | None:
    return _of_permission_set(place, resolve, lambda sso, instance, arn: sso.get_inline_policy_for_permission_set(
        InstanceArn=instance, PermissionSetArn=arn).get("InlinePolicy"))


def _permissions_boundary_attachment(place: _Place, resolve: Callable[[str], str | None]) -> str | None:
    return _of_permission_set(place, resolve, lambda sso, instance, arn: (
        sso.get_permissions_boundary_for_permission_set(InstanceArn=instance, PermissionSetArn=arn)
        .get("PermissionsBoundary")))


def _account_assignment(place: _Place, resolve: Callable[[str], str | None]) -> str | None:
    body = place.body
    instance, permission_set, principal = body["instance_arn"], resolve(body["permission_set_arn"]), \
        resolve(body["principal_id"])
    if permission_set is None or principal is None:
        return None
    assigned = _absent(lambda: list(_pages(place.client("sso-admin"), "list_account_assignments", "AccountAssignments",
                                           InstanceArn=instance, AccountId=body["target_id"],
                                           PermissionSetArn=permission_set)))
    if not any((a["PrincipalType"], a["PrincipalId"]) == (body["principal_type"], principal) for a in assigned or []):
        return None
    return ",".join([principal, body["principal_type"], body["target_id"], body["target_type"], permission_set,
                     instance])


def _topic(place: _Place, _: Callable[[str], str | None]) -> str | None:
    arn = f"arn:{place.partition}:sns:{place.region}:{place.own_account()}:{place.body['name']}"
    return arn if _absent(lambda: place.client("sns").get_topic_attributes(TopicArn=arn)) else None


def _topic_policy(place: _Place, _: Callable[[str], str | None]) -> str | None:
    arn = place.body["arn"]  # a topic always has a policy (SNS writes a default one): live with its topic
    return arn if _absent(lambda: place.client("sns").get_topic_attributes(TopicArn=arn)) else None


# Per terraform type: the read that finds the live object and returns its import ID. The order is
# the order of the reads: what others refer to (an Organizations policy's id) comes first.
PROBES: Mapping[str, Callable[[_Place, Callable[[str], str | None]], str | None]] = {
    "aws_organizations_policy": _organizations_policy,
    "aws_organizations_policy_attachment": _organizations_policy_attachment,
    "aws_iam_policy": _policy,
    "aws_iam_role": _role,
    "aws_iam_role_policy": _role_policy,
    "aws_iam_role_policy_attachment": _role_policy_attachment,
    "aws_budgets_budget": _budget,
    "aws_eks_access_entry": _access_entry,
    "aws_eks_access_policy_association": _access_policy_association,
    "aws_sns_topic": _topic,
    "aws_sns_topic_policy": _topic_policy,
    "aws_ssoadmin_permission_set": _permission_set,
    "aws_ssoadmin_permission_set_inline_policy": _permission_set_inline_policy,
    "aws_ssoadmin_permissions_boundary_attachment": _permissions_boundary_attachment,
    "aws_ssoadmin_account_assignment": _account_assignment,
}
# A reference to another resource's attribute that is a part of that resource's import ID.
_ID_PARTS: Mapping[tuple[str, str], Callable[[str], str]] = {
    ("aws_ssoadmin_permission_set", "arn"): lambda live_id: live_id.split(",")[0],
}


def _identity_store_id(kind: str) -> Callable[[_Place, Mapping[str, Any]], str | None]:
    """A data source `aws_identitystore_<kind>`: the member's id, read as terraform reads it."""
    def read(place: _Place, body: Mapping[str, Any]) -> str | None:
        operation, key = MEMBER_ID_READ[kind]
        unique = body["alternate_identifier"][0]["unique_attribute"]
        found = _absent(lambda: getattr(place.client("identitystore"), operation)(
            IdentityStoreId=body["identity_store_id"], AlternateIdentifier={"UniqueAttribute": {
                "AttributePath": unique["attribute_path"], "AttributeValue": unique["attribute_value"]}}))
        return str(found[key]) if found else None
    return read


def _one_role(place: _Place, body: Mapping[str, Any]) -> str | None:
    """`one(data.aws_iam_roles.X.arns)`: the one role whose name matches, else nothing."""
    pattern = re.compile(body["name_regex"])
    arns = [r["Arn"] for r in _pages(place.client("iam"), "list_roles", "Roles", PathPrefix=body["path_prefix"])
            if pattern.search(r["RoleName"])]
    return arns[0] if len(arns) == 1 else None


# The data sources a resource's reference reads (as terraform reads them before it plans), in the
# account and region of the resource that refers to them (the same provider in `translate`).
DATA_READS: Mapping[str, Callable[[_Place, Mapping[str, Any]], str | None]] = {
    "aws_identitystore_group": _identity_store_id("group"),
    "aws_identitystore_user": _identity_store_id("user"),
    "aws_iam_roles": _one_role,
}


def find_imports(creates: Sequence[str], config: Mapping[str, Any], objects: Mapping[str, DesiredObject], *,
                 clients: Clients, partition: str = "aws") -> list[Import]:
    """The creates (terraform addresses of one stack's plan) whose object is live already, with
    their import IDs. `config`: the stack's `main.tf.json`; `objects`: its desired objects by
    address (where each acts). A reference to another resource's id (an Organizations policy's)
    is resolved by reading that resource too, whether it is being created or is in the state."""
    resources, data = config.get("resource", {}), config.get("data", {})
    found: dict[str, str | None] = {}

    def probe(address: str) -> str | None:
        if address not in found:
            tf_type, _, name = address.partition(".")
            body, obj, read = resources.get(tf_type, {}).get(name), objects.get(address), PROBES.get(tf_type)
            if body is None or obj is None or read is None:
                found[address] = None
            else:
                place = _Place(body=body, account=obj.account, region=obj.region, clients=clients,
                               partition=partition)
                found[address] = read(place, lambda value: resolve(value, place))
        return found[address]

    def resolve(value: str, place: _Place) -> str | None:
        read = _DATA_REFERENCE.match(value)
        if read is not None:
            body, reader = data.get(read.group(1), {}).get(read.group(2)), DATA_READS.get(read.group(1))
            return reader(place, body) if body is not None and reader is not None else None
        match = _REFERENCE.match(value)
        if match is None:
            return value  # a literal id
        live_id = probe(match.group(1))
        if live_id is None or match.group(2) == "id":
            return live_id
        part = _ID_PARTS.get((match.group(1).partition(".")[0], match.group(2)))
        return part(live_id) if part else None

    order = {tf_type: i for i, tf_type in enumerate(PROBES)}
    wanted = sorted((a for a in creates if a.partition(".")[0] in PROBES), key=lambda a: (order[a.split(".")[0]], a))
    imports = []
    for address in wanted:
        live_id = probe(address)
        if live_id is not None:
            tf_type, _, name = address.partition(".")
            imports.append(Import(address=address, id=live_id, provider=resources[tf_type][name].get("provider")))
    return imports


def imports_config(imports: Sequence[Import]) -> dict[str, Any]:
    """The `import` blocks in Terraform's JSON syntax (pure)."""
    blocks = []
    for item in sorted(imports, key=lambda i: i.address):
        block: dict[str, Any] = {"to": item.address, "id": item.id}
        if item.provider:
            block["provider"] = item.provider
        blocks.append(block)
    return {"import": blocks}
