"""The drifts the drift benchmark injects out of band with boto3, what the scan must report for
each, and the check that it reports exactly those.

Each `InjectedDrift` names the item it must cause (kind, and for a declared object its stack and
terraform-style address; for an unmanaged one the live name its address must carry) and the
items it may legitimately cause beside it (`also`: deleting an access entry deletes its policy
associations, as AWS does; a role made by hand has no boundary either). A drift whose service no
scanner in `engines.live.scan.SERVICES` reads yet is reported as not scanned, not as missed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engines.desired import DesiredObject, of_type
from engines.hyperpod import driver
from engines.live.hyperpod import GovernedCluster
from engines.live.items import DriftItem

ClientFor = Callable[[str, str, str], Any]  # (service, account, region) -> boto3 client
HANDMADE_ROLE = "synth-handmade-admin"
UNKNOWN_TEAM = "intruder"


@dataclass(frozen=True)
class InjectedDrift:
    what: str
    service: str  # the boto3 service whose scanner must find it
    kind: str
    stack: str | None  # None: not checked (who owns an unmanaged object is the scanner's call)
    address: str | None  # the declared object's address; None: an unmanaged object, matched by `name`
    name: str
    also: tuple[tuple[str, str], ...] = ()  # (kind, address fragment) of items it may cause beside

    def matches(self, item: DriftItem) -> bool:
        if item.kind != self.kind or (self.stack is not None and item.stack != self.stack):
            return False
        return item.address == self.address if self.address is not None else self.name in item.address

    def allows(self, item: DriftItem) -> bool:
        return any(item.kind == kind and fragment in item.address for kind, fragment in self.also)


def inject_drifts(desired: Sequence[DesiredObject], clusters: Sequence[GovernedCluster], client_for: ClientFor, *,
                  management_account: str) -> list[InjectedDrift]:
    """Change the live state out of band, one drift of each kind the issue lists."""
    drifts = [_quota_count_changed(clusters[0], client_for), _unknown_team_quota(clusters[-1], client_for)]
    roles = [o for o in of_type(desired, "aws:iam/role:Role")
             if o.stack.startswith("project-") and o.input("permissionsBoundary")]
    drifts.append(_boundary_removed(roles[len(roles) // 2], client_for))
    entries = [o for o in of_type(desired, "aws:eks/accessEntry:AccessEntry") if o.stack.startswith("project-")]
    associations = of_type(desired, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    drifts.append(_access_entry_deleted(entries[len(entries) // 3], associations, client_for))
    drifts.append(_handmade_role(roles[0], client_for))
    attachment = of_type(desired, "aws:organizations/policyAttachment:PolicyAttachment")[0]
    policies = of_type(desired, "aws:organizations/policy:Policy")
    drifts.append(_scp_detached(attachment, policies, client_for, management_account=management_account))
    return drifts


def _quota_id(sagemaker: Any, cluster: GovernedCluster, name: str) -> str:
    pages = sagemaker.get_paginator("list_compute_quotas").paginate(ClusterArn=cluster.arn)
    return next(str(s["ComputeQuotaId"]) for page in pages for s in page["ComputeQuotaSummaries"] if s["Name"] == name)


def _quota_count_changed(cluster: GovernedCluster, client_for: ClientFor) -> InjectedDrift:
    sagemaker = client_for("sagemaker", cluster.account, cluster.region)
    name, request = sorted(cluster.quotas.items())[0]
    quota_id = _quota_id(sagemaker, cluster, name)
    live = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)
    config = json.loads(json.dumps(request["ComputeQuotaConfig"]))
    config["ComputeQuotaResources"][0]["Count"] += 1
    sagemaker.update_compute_quota(ComputeQuotaId=quota_id, TargetVersion=live["ComputeQuotaVersion"],
                                   ComputeQuotaConfig=config)
    return InjectedDrift("a compute quota's instance count raised", "sagemaker", "changed", cluster.stack,
                         driver.address(driver.COMPUTE_QUOTA, name), name)


def _unknown_team_quota(cluster: GovernedCluster, client_for: ClientFor) -> InjectedDrift:
    sagemaker = client_for("sagemaker", cluster.account, cluster.region)
    any_request = next(iter(cluster.quotas.values()))
    instance_type = any_request["ComputeQuotaConfig"]["ComputeQuotaResources"][0]["InstanceType"]
    name = f"{UNKNOWN_TEAM}-quota"
    sagemaker.create_compute_quota(
        Name=name, ClusterArn=cluster.arn, ActivationState="Enabled",
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": instance_type, "Count": 1}],
                            "ResourceSharingConfig": {"Strategy": "DontLend"}, "PreemptTeamTasks": "Never"},
        ComputeQuotaTarget={"TeamName": UNKNOWN_TEAM, "FairShareWeight": 1})
    return InjectedDrift("a compute quota for a team the tree doesn't know", "sagemaker", "unmanaged", cluster.stack,
                         None, name)


def _boundary_removed(role: DesiredObject, client_for: ClientFor) -> InjectedDrift:
    assert role.account is not None
    client_for("iam", role.account, role.region).delete_role_permissions_boundary(RoleName=role.input("name"))
    return InjectedDrift("a role's permissions boundary removed", "iam", "unbounded", role.stack, role.address,
                         str(role.input("name")), also=(("changed", role.address),))


def _access_entry_deleted(entry: DesiredObject, associations: Sequence[DesiredObject],
                          client_for: ClientFor) -> InjectedDrift:
    assert entry.account is not None
    cluster, principal = entry.input("clusterName"), entry.input("principalArn")
    client_for("eks", entry.account, entry.region).delete_access_entry(clusterName=cluster, principalArn=principal)
    gone = tuple(("missing", a.address) for a in associations
                 if a.account == entry.account and a.input("clusterName") == cluster
                 and a.input("principalArn") == principal)  # AWS deletes an entry's associations with it
    return InjectedDrift("an access entry deleted", "eks", "missing", entry.stack, entry.address,
                         str(principal), also=gone)


def _handmade_role(like: DesiredObject, client_for: ClientFor) -> InjectedDrift:
    assert like.account is not None
    client_for("iam", like.account, like.region).create_role(
        RoleName=HANDMADE_ROLE, Path=like.input("path"), AssumeRolePolicyDocument=like.input("assumeRolePolicy"))
    return InjectedDrift("a role created by hand under hypergov's path", "iam", "unmanaged", None, None,
                         HANDMADE_ROLE, also=(("unbounded", HANDMADE_ROLE),))  # it has no boundary either


def _scp_detached(attachment: DesiredObject, policies: Sequence[DesiredObject], client_for: ClientFor, *,
                  management_account: str) -> InjectedDrift:
    organizations = client_for("organizations", management_account, attachment.region)
    target = attachment.input("targetId")
    policy_name = attachment.input("policyId")[len("<id:"):-1]
    name = next(p.input("name") for p in policies if p.stack == attachment.stack and p.name == policy_name)
    listed = organizations.list_policies_for_target(TargetId=target, Filter="SERVICE_CONTROL_POLICY")["Policies"]
    policy_id = next(p["Id"] for p in listed if p["Name"] == name)
    organizations.detach_policy(PolicyId=policy_id, TargetId=target)
    return InjectedDrift("the SCP detached from the OU", "organizations", "missing", attachment.stack,
                         attachment.address, str(name))


@dataclass(frozen=True)
class DriftCheck:
    found: dict[str, bool | None]  # drift -> found (None: its service is not scanned)
    unexpected: list[DriftItem]

    @property
    def ok(self) -> bool:
        return not self.unexpected and all(f is not False for f in self.found.values())


def check_found(drifts: Sequence[InjectedDrift], items: Sequence[DriftItem], scanned: frozenset[str]) -> DriftCheck:
    """Each drift found as its kind (where its service is scanned), and no item beyond them."""
    found: dict[str, bool | None] = {}
    for drift in drifts:
        found[drift.what] = any(drift.matches(i) for i in items) if drift.service in scanned else None
    unexpected = [i for i in items if not any(d.matches(i) or d.allows(i) for d in drifts)]
    return DriftCheck(found=found, unexpected=unexpected)
