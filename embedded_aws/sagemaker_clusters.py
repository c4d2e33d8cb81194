"""HyperPod clusters as AWS serves them, replacing moto's model of them.

moto 5.2's HyperPod cluster breaks in ways a client notices: it names the ARN after the cluster
(AWS uses a 12-character id, and every task-governance API validates ``cluster/[a-z0-9]{12}``),
drops the ``Orchestrator`` (so a cluster cannot be found to be EKS-orchestrated), requires
``s3://sagemaker-`` lifecycle URIs and ``ThreadsPerCore`` (HTTP 500 without it) although AWS makes
neither mandatory, validates instance types against an outdated list, and has no UpdateCluster.
This module keeps the cluster state (per account and region, in the backend) and the rules.
"""

from __future__ import annotations

import copy
import datetime
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moto.core.utils import utcnow
from moto.moto_api._internal.managed_state_model import ManagedState

from embedded_aws.errors import sm_conflict, sm_in_use, sm_not_found, sm_validation
from embedded_aws.extension import begin_transition, naive_utc, new_resource_id, sagemaker_arn, tag_list

# Top-level CreateCluster/UpdateCluster members kept as the cluster's settings and echoed by
# DescribeCluster under the same name.
SETTINGS = ("VpcConfig", "Orchestrator", "NodeRecovery", "TieredStorageConfig", "NodeProvisioningMode",
            "ClusterRole", "AutoScaling", "RestrictedInstanceGroupsConfig")

CLUSTER_ID = re.compile(r"[a-z0-9]{12}")
GONE = "Deleted"  # the end of a delete: the cluster is no longer found
# Answers "what authentication mode has the EKS cluster with this ARN?" (None: no such cluster).
EksAuthLookup = Callable[[str], "str | None"]


@dataclass
class ClusterNode:
    node_id: str
    group: str
    instance_type: str
    launch_time: datetime.datetime

    def summary(self) -> dict[str, Any]:
        return {"InstanceGroupName": self.group, "InstanceId": self.node_id, "InstanceType": self.instance_type,
                "LaunchTime": self.launch_time, "InstanceStatus": {"Status": "Running", "Message": ""}}


class HyperPodCluster(ManagedState):
    """One HyperPod cluster: settings, instance groups (as last specified) and their nodes."""

    def __init__(self, *, name: str, cluster_id: str, account: str, region: str, partition: str,
                 request: dict[str, Any]) -> None:
        # AWS's ClusterStatus values (botocore's model); a deleted cluster passes through Deleting
        # before DescribeCluster stops finding it ("Deleted" is this model's end, never shown).
        super().__init__("sagemaker::hyperpod-cluster", [("Creating", "InService"), ("Updating", "InService"),
                                                          ("Deleting", GONE)])
        self.name = name
        self.cluster_id = cluster_id
        self.arn = sagemaker_arn(partition=partition, region=region, account=account, kind="cluster",
                                 resource_id=self.cluster_id)
        self.created = utcnow()
        self.settings = {key: copy.deepcopy(request[key]) for key in SETTINGS if key in request}
        self.groups: dict[str, dict[str, Any]] = {}
        self.nodes: dict[str, ClusterNode] = {}
        self.tags = tag_list(request.get("Tags"))
        for group in request.get("InstanceGroups", []):
            self._set_group(group)

    @property
    def eks_cluster_arn(self) -> str | None:
        arn: str | None = self.settings.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn")
        return arn

    def describe(self) -> dict[str, Any]:
        self.advance()
        if self.status == GONE:  # the deletion ended with this look
            raise sm_not_found(f"Cluster {self.name} not found.")
        groups = [self._group_details(spec) for spec in self.groups.values()]
        return {"ClusterArn": self.arn, "ClusterName": self.name, "ClusterStatus": self.status,
                "CreationTime": self.created, "InstanceGroups": groups, **copy.deepcopy(self.settings)}

    def summary(self) -> dict[str, Any]:
        return {"ClusterArn": self.arn, "ClusterName": self.name, "CreationTime": self.created,
                "ClusterStatus": self.status}

    def update(self, request: dict[str, Any]) -> None:
        if self.status == "Deleting":
            raise sm_conflict(f"Cluster {self.name} is being deleted and cannot be updated.")
        specs = request.get("InstanceGroups", [])
        _check_unique_groups(specs)
        for spec in specs:
            current = self.groups.get(spec["InstanceGroupName"])
            if current is not None and spec.get("InstanceType") not in (None, current.get("InstanceType")):
                raise sm_validation(f"The instance type of instance group '{spec['InstanceGroupName']}' cannot "
                                    "be changed; create a new instance group instead.")
        for name in request.get("InstanceGroupsToDelete", []):
            if name not in self.groups:
                raise sm_validation(f"Instance group '{name}' does not exist in cluster '{self.name}'.")
        new_eks = request.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn")
        if new_eks is not None and new_eks != self.eks_cluster_arn:
            raise sm_validation("The orchestrator of a cluster cannot be changed.")
        for spec in specs:
            self._set_group(spec)
        for name in request.get("InstanceGroupsToDelete", []):
            del self.groups[name]
            self.nodes = {nid: node for nid, node in self.nodes.items() if node.group != name}
        self.settings.update({key: copy.deepcopy(request[key]) for key in SETTINGS if key in request})
        begin_transition(self, "Updating")

    def _set_group(self, spec: dict[str, Any]) -> None:
        name = spec["InstanceGroupName"]
        merged = {**self.groups.get(name, {}), **copy.deepcopy(spec)}
        self.groups[name] = merged
        mine = [node for node in self.nodes.values() if node.group == name]
        wanted = int(merged["InstanceCount"])
        for node in mine[wanted:]:
            del self.nodes[node.node_id]
        for _ in range(wanted - len(mine)):
            node_id = "i-" + uuid.uuid4().hex[:17]
            self.nodes[node_id] = ClusterNode(node_id=node_id, group=name, instance_type=_instance_type(merged),
                                              launch_time=utcnow())

    def _group_details(self, spec: dict[str, Any]) -> dict[str, Any]:
        current = sum(1 for node in self.nodes.values() if node.group == spec["InstanceGroupName"])
        details = {**copy.deepcopy(spec), "CurrentCount": current, "TargetCount": spec["InstanceCount"],
                   "Status": "InService"}
        if "MinInstanceCount" in spec:
            details["MinCount"] = spec["MinInstanceCount"]
        return details


class ClusterStore:
    """The HyperPod clusters of one account and region (a part of the backend)."""

    def __init__(self, *, account: str, region: str, partition: str) -> None:
        self.account, self.region, self.partition = account, region, partition
        self.by_name: dict[str, HyperPodCluster] = {}
        self.reserved_ids: dict[str, str] = {}

    def reserve_id(self, name: str, cluster_id: str) -> None:
        """Make the next CreateCluster of `name` use `cluster_id`, so that a seeded cluster gets the
        ARN a config tree already names (AWS picks the id; a config records the one it picked)."""
        if not CLUSTER_ID.fullmatch(cluster_id):
            raise ValueError(f"a HyperPod cluster id is 12 lowercase letters or digits, not {cluster_id!r}")
        if any(c.cluster_id == cluster_id and c.name != name for c in self.by_name.values()):
            raise ValueError(f"cluster id {cluster_id} already belongs to another cluster")
        self.reserved_ids[name] = cluster_id

    def _present(self) -> dict[str, HyperPodCluster]:
        """The clusters that still exist: one whose delete has finished is dropped."""
        for name in [n for n, c in self.by_name.items() if c.status == GONE]:
            del self.by_name[name]
        return self.by_name

    def create(self, request: dict[str, Any], *, eks_auth: EksAuthLookup) -> HyperPodCluster:
        name = request["ClusterName"]
        if name in self._present():
            raise sm_in_use(f"Resource Already Exists: Cluster with name {name} already exists. "
                            "Choose a different name.")
        if not request.get("InstanceGroups") and not request.get("RestrictedInstanceGroups"):
            raise sm_validation("At least one of InstanceGroups or RestrictedInstanceGroups must be specified.")
        _check_unique_groups(request.get("InstanceGroups", []))
        for spec in request.get("InstanceGroups", []):
            if not spec.get("InstanceType") and not spec.get("InstanceRequirements"):
                raise sm_validation(f"Instance group '{spec['InstanceGroupName']}' needs an InstanceType.")
        eks_arn = request.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn")
        if eks_arn is not None:
            self._check_eks(eks_arn, eks_auth)
        cluster_id = self.reserved_ids.pop(name, None) or new_resource_id()
        cluster = HyperPodCluster(name=name, cluster_id=cluster_id, account=self.account, region=self.region,
                                  partition=self.partition, request=request)
        self.by_name[name] = cluster
        return cluster

    def get(self, name_or_arn: str) -> HyperPodCluster:
        """The cluster named (or with the ARN) `name_or_arn`, or the documented ResourceNotFound."""
        for cluster in self._present().values():
            if name_or_arn in (cluster.name, cluster.arn):
                return cluster
        raise sm_not_found(f"Cluster {name_or_arn} not found.")

    def delete(self, name_or_arn: str, *, in_use_by: Callable[[str], bool]) -> HyperPodCluster:
        """The cluster goes to Deleting; it is gone once the transition ends (see `_present`)."""
        cluster = self.get(name_or_arn)
        if cluster.status == "Deleting":
            raise sm_conflict(f"Cluster {cluster.name} is already being deleted.")
        if in_use_by(cluster.arn):
            raise sm_conflict(f"Cluster {cluster.name} still has compute quotas or a cluster policy; "
                              "delete them first.")
        begin_transition(cluster, "Deleting")
        return cluster

    def listed(self, params: dict[str, Any]) -> list[HyperPodCluster]:
        clusters = [c for c in self._present().values() if params.get("NameContains", "") in c.name]
        if params.get("CreationTimeAfter"):
            clusters = [c for c in clusters if c.created > naive_utc(params["CreationTimeAfter"])]
        if params.get("CreationTimeBefore"):
            clusters = [c for c in clusters if c.created < naive_utc(params["CreationTimeBefore"])]
        by_name = params.get("SortBy") == "NAME"
        clusters.sort(key=lambda c: c.name if by_name else c.created.isoformat(),
                      reverse=params.get("SortOrder", "Descending") == "Descending")
        return clusters

    def _check_eks(self, eks_arn: str, eks_auth: EksAuthLookup) -> None:
        _, _, _, region, account, _ = (eks_arn.split(":", 5) + [""] * 6)[:6]
        if (account, region) != (self.account, self.region):
            raise sm_validation(f"The EKS cluster {eks_arn} must be in the same account and region as the "
                                "HyperPod cluster.")
        mode = eks_auth(eks_arn)
        if mode is None:
            raise sm_validation(f"The EKS cluster {eks_arn} does not exist.")
        if mode not in ("API", "API_AND_CONFIG_MAP"):
            raise sm_validation(f"The EKS cluster {eks_arn} must use authentication mode API or "
                                f"API_AND_CONFIG_MAP (it uses {mode}).")


def _check_unique_groups(specs: list[dict[str, Any]]) -> None:
    names = [spec["InstanceGroupName"] for spec in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise sm_validation(f"Instance group names must be unique; repeated: {', '.join(duplicates)}.")


def _instance_type(spec: dict[str, Any]) -> str:
    if spec.get("InstanceType"):
        return str(spec["InstanceType"])
    return str(spec.get("InstanceRequirements", {}).get("InstanceTypes", ["ml.c5.large"])[0])

