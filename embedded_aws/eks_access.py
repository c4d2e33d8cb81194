"""EKS access entries and access policy associations, which moto does not have.

They are how a HyperPod team's IAM role becomes a Kubernetes identity: the access entry maps the
role to a username and Kubernetes groups (RBAC binds those groups in the team namespace), the
policy association grants an EKS access policy cluster-wide or in listed namespaces. The rules
here are the ones the EKS API documents: only clusters whose authentication mode includes
``API`` accept entries, the principal must be an existing IAM role or user, ``system:`` groups
are reserved, and policies can only be associated with ``STANDARD`` entries.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from moto.core.base_backend import BackendDict, BaseBackend
from moto.core.utils import utcnow
from moto.eks.models import eks_backends
from moto.iam.models import iam_backends

from embedded_aws.errors import eks_in_use, eks_invalid_parameter, eks_invalid_request, eks_not_found

ENTRY_TYPES = ("STANDARD", "FARGATE_LINUX", "EC2_LINUX", "EC2_WINDOWS", "EC2", "HYBRID_LINUX", "HYPERPOD_LINUX")
RESERVED_PREFIXES = ("system:", "eks:", "aws:", "amazon:", "iam:")
# The EKS access policies AWS publishes (ListAccessPolicies).
ACCESS_POLICIES = (
    "AmazonEKSAdminPolicy", "AmazonEKSAdminViewPolicy", "AmazonEKSClusterAdminPolicy", "AmazonEKSEditPolicy",
    "AmazonEKSViewPolicy", "AmazonEMRJobPolicy", "AmazonEKSAutoNodePolicy", "AmazonEKSBlockStoragePolicy",
    "AmazonEKSComputePolicy", "AmazonEKSLoadBalancingPolicy", "AmazonEKSNetworkingPolicy", "AmazonEKSHybridPolicy",
    "AmazonSagemakerHyperpodClusterPolicy", "AmazonSagemakerHyperpodControllerPolicy",
    "AmazonSagemakerHyperpodSystemNamespacePolicy",
)
POLICY_ARN = re.compile(r"arn:aws[a-z-]*:eks::aws:cluster-access-policy/(?P<name>[A-Za-z0-9]+)")
PRINCIPAL_ARN = re.compile(r"arn:(?P<partition>aws[a-z-]*):iam::(?P<account>\d{12}):(?P<kind>role|user)/(?P<path>.+)")
CLUSTER_ARN = re.compile(r"arn:aws[a-z-]*:eks:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):cluster/(?P<name>.+)")
API_MODES = ("API", "API_AND_CONFIG_MAP")
DEFAULT_AUTH_MODE = "CONFIG_MAP"  # what the EKS API (not the console) gives a cluster created without accessConfig


@dataclass
class PolicyAssociation:
    policy_arn: str
    access_scope: dict[str, Any]
    associated_at: datetime
    modified_at: datetime

    def describe(self) -> dict[str, Any]:
        return {"policyArn": self.policy_arn, "accessScope": self.access_scope,
                "associatedAt": self.associated_at, "modifiedAt": self.modified_at}


@dataclass
class AccessEntry:
    cluster_name: str
    principal_arn: str
    arn: str
    entry_type: str
    username: str
    kubernetes_groups: list[str]
    created: datetime
    modified: datetime
    tags: dict[str, str] = field(default_factory=dict)
    policies: dict[str, PolicyAssociation] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        return {"clusterName": self.cluster_name, "principalArn": self.principal_arn,
                "kubernetesGroups": list(self.kubernetes_groups), "accessEntryArn": self.arn,
                "createdAt": self.created, "modifiedAt": self.modified, "tags": dict(self.tags),
                "username": self.username, "type": self.entry_type}


class AccessBackend(BaseBackend):
    """The access entries of every EKS cluster in one account and region."""

    def __init__(self, region_name: str, account_id: str) -> None:
        super().__init__(region_name, account_id)
        self.entries: dict[tuple[str, str], AccessEntry] = {}

    def create_entry(self, params: dict[str, Any]) -> AccessEntry:
        cluster = self._api_cluster(params["clusterName"])
        principal = params["principalArn"]
        self._check_principal(principal)
        key = (cluster.name, principal)
        if key in self.entries:
            raise eks_in_use("The specified access entry resource is already in use on this cluster.",
                             cluster=cluster.name)
        entry_type = params.get("type", "STANDARD")
        groups = list(params.get("kubernetesGroups", []))
        username = params.get("username")
        _check_identity(entry_type=entry_type, groups=groups, username=username, cluster=cluster.name)
        now = utcnow()
        entry = AccessEntry(cluster_name=cluster.name, principal_arn=principal,
                            arn=self._entry_arn(cluster.name, principal), entry_type=entry_type,
                            username=username or _default_username(principal, entry_type), kubernetes_groups=groups,
                            created=now, modified=now, tags=dict(params.get("tags", {})))
        self.entries[key] = entry
        return entry

    def entry(self, cluster_name: str, principal: str) -> AccessEntry:
        cluster = self._cluster(cluster_name)
        found = self.entries.get((cluster.name, principal))
        if found is None:
            raise eks_not_found(f"The specified access entry {principal} could not be found on cluster "
                                f"{cluster.name}.", cluster=cluster.name)
        return found

    def update_entry(self, params: dict[str, Any]) -> AccessEntry:
        entry = self.entry(params["clusterName"], params["principalArn"])
        groups = list(params.get("kubernetesGroups", entry.kubernetes_groups))
        username = params.get("username")
        _check_identity(entry_type=entry.entry_type, groups=groups if "kubernetesGroups" in params else [],
                        username=username, cluster=entry.cluster_name)
        entry.kubernetes_groups = groups
        entry.username = username or entry.username
        entry.modified = utcnow()
        return entry

    def delete_entry(self, cluster_name: str, principal: str) -> None:
        entry = self.entry(cluster_name, principal)
        del self.entries[(entry.cluster_name, entry.principal_arn)]

    def listed(self, cluster_name: str, associated_policy: str | None) -> list[str]:
        cluster = self._cluster(cluster_name)
        entries = [e for (name, _), e in self.entries.items() if name == cluster.name]
        if associated_policy:
            entries = [e for e in entries if associated_policy in e.policies]
        return sorted(e.principal_arn for e in entries)

    def associate(self, params: dict[str, Any]) -> tuple[AccessEntry, PolicyAssociation]:
        entry = self.entry(params["clusterName"], params["principalArn"])
        policy_arn = params["policyArn"]
        _check_policy_arn(policy_arn, cluster=entry.cluster_name)
        if entry.entry_type != "STANDARD":
            raise eks_invalid_request("Access policies can only be associated with access entries of type "
                                      f"STANDARD (this one is {entry.entry_type}).", cluster=entry.cluster_name)
        scope = _checked_scope(params["accessScope"], cluster=entry.cluster_name)
        now = utcnow()
        existing = entry.policies.get(policy_arn)
        association = PolicyAssociation(policy_arn=policy_arn, access_scope=scope,
                                        associated_at=existing.associated_at if existing else now, modified_at=now)
        entry.policies[policy_arn] = association
        return entry, association

    def disassociate(self, cluster_name: str, principal: str, policy_arn: str) -> None:
        entry = self.entry(cluster_name, principal)
        if policy_arn not in entry.policies:
            raise eks_not_found(f"The access policy {policy_arn} is not associated with access entry {principal}.",
                                cluster=entry.cluster_name)
        del entry.policies[policy_arn]

    def entry_by_arn(self, arn: str) -> AccessEntry | None:
        return next((e for e in self.entries.values() if e.arn == arn), None)

    def forget_cluster(self, cluster_name: str) -> None:
        """Access entries live and die with their cluster."""
        self.entries = {key: e for key, e in self.entries.items() if key[0] != cluster_name}

    def _cluster(self, name: str) -> Any:
        cluster = eks_backends[self.account_id][self.region_name].clusters.get(name)
        if cluster is None:
            raise eks_not_found(f"No cluster found for name: {name}.", cluster=name)
        return cluster

    def _api_cluster(self, name: str) -> Any:
        cluster = self._cluster(name)
        if authentication_mode(cluster) not in API_MODES:
            raise eks_invalid_request("The cluster's authentication mode must be set to one of [API, "
                                      "API_AND_CONFIG_MAP] to perform this operation.", cluster=name)
        return cluster

    def _check_principal(self, principal: str) -> None:
        match = PRINCIPAL_ARN.fullmatch(principal)
        if match is None:
            raise eks_invalid_parameter(f"The principalArn parameter format is not valid: {principal}")
        iam = iam_backends[match["account"]][match["partition"]]
        known = ({r.arn for r in iam.roles.values()} if match["kind"] == "role"
                 else {u.arn for u in iam.users.values()})
        if principal not in known:
            raise eks_invalid_parameter(f"The specified principalArn could not be found: {principal}. You can view "
                                        "your available IAM principals in the IAM console.")

    def _entry_arn(self, cluster: str, principal: str) -> str:
        match = PRINCIPAL_ARN.fullmatch(principal)
        assert match is not None
        name = match["path"].rsplit("/", 1)[-1]
        return (f"arn:{self.partition}:eks:{self.region_name}:{self.account_id}:access-entry/{cluster}/"
                f"{match['kind']}/{match['account']}/{name}/{uuid.uuid4()}")


access_backends: BackendDict[AccessBackend] = BackendDict(AccessBackend, "eks")


def authentication_mode(cluster: Any) -> str:
    """The authentication mode the extended CreateCluster recorded on moto's cluster object."""
    mode: str = getattr(cluster, "access_config", {}).get("authenticationMode", DEFAULT_AUTH_MODE)
    return mode


def eks_auth_mode_of(cluster_arn: str) -> str | None:
    """Authentication mode of the EKS cluster with this ARN, or None when it does not exist."""
    match = CLUSTER_ARN.fullmatch(cluster_arn)
    if match is None:
        return None
    cluster = eks_backends[match["account"]][match["region"]].clusters.get(match["name"])
    if cluster is None or cluster.arn != cluster_arn:
        return None
    return authentication_mode(cluster)


def _check_identity(*, entry_type: str, groups: list[str], username: str | None, cluster: str) -> None:
    if entry_type not in ENTRY_TYPES:
        raise eks_invalid_parameter(f"The type {entry_type} is not valid; use one of {', '.join(ENTRY_TYPES)}.",
                                    cluster=cluster)
    if entry_type != "STANDARD" and (groups or username):
        raise eks_invalid_parameter(f"kubernetesGroups and username can only be set for access entries of type "
                                    f"STANDARD (not {entry_type}).", cluster=cluster)
    reserved = [g for g in groups if g.startswith("system:")]
    if reserved:
        raise eks_invalid_parameter(f"kubernetesGroups must not start with 'system:': {', '.join(reserved)}.",
                                    cluster=cluster)
    if username and username.startswith(RESERVED_PREFIXES):
        raise eks_invalid_parameter(f"The username {username} uses a reserved prefix "
                                    f"({', '.join(RESERVED_PREFIXES)}).", cluster=cluster)


def _default_username(principal: str, entry_type: str) -> str:
    match = PRINCIPAL_ARN.fullmatch(principal)
    assert match is not None
    if entry_type == "FARGATE_LINUX":
        return "system:node:{{SessionName}}"
    if entry_type != "STANDARD":
        return "system:node:{{EC2PrivateDNSName}}"
    if match["kind"] == "user":
        return principal
    name = match["path"].rsplit("/", 1)[-1]
    return f"arn:{match['partition']}:sts::{match['account']}:assumed-role/{name}/{{{{SessionName}}}}"


def _check_policy_arn(policy_arn: str, *, cluster: str) -> None:
    match = POLICY_ARN.fullmatch(policy_arn)
    if match is None:
        raise eks_invalid_parameter(f"The policyArn parameter format is not valid: {policy_arn}", cluster=cluster)
    if match["name"] not in ACCESS_POLICIES:
        raise eks_not_found(f"The access policy {policy_arn} could not be found.", cluster=cluster)


def _checked_scope(scope: dict[str, Any], *, cluster: str) -> dict[str, Any]:
    kind = scope.get("type")
    namespaces = list(scope.get("namespaces", []))
    if kind == "namespace" and not namespaces:
        raise eks_invalid_parameter("An access scope of type namespace needs at least one namespace.", cluster=cluster)
    if kind != "namespace" and namespaces:
        raise eks_invalid_parameter("Namespaces can only be given for an access scope of type namespace.",
                                    cluster=cluster)
    if kind is None:
        raise eks_invalid_parameter("accessScope.type is required (cluster or namespace).", cluster=cluster)
    return {"type": kind, "namespaces": namespaces}
