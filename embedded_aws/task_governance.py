"""HyperPod task governance: compute quotas and cluster scheduler configs (cluster policies).

moto has neither. Both are versioned the way the SageMaker API documents: creation gives
version 1 and status ``Created``; every update must name the version it updates
(``TargetVersion``; a stale one is a ``ConflictException``, the optimistic-concurrency guard
that keeps two reconcilers from overwriting each other), bumps the version and ends in status
``Updated``. Old versions stay readable (``Describe...(..., ...Version=N)``). Describe says who
created and who last changed each (``CreatedBy``, ``LastModifiedBy``: a ``UserContext`` naming the
IAM identity that signed the request), as SageMaker does; List summaries do not carry them.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, TypeVar

from moto.core.utils import utcnow
from moto.moto_api._internal.managed_state_model import ManagedState

from embedded_aws.errors import sm_conflict, sm_not_found, sm_validation
from embedded_aws.extension import begin_transition, naive_utc, new_resource_id, sagemaker_arn, tag_list
from embedded_aws.quota_resources import check_quota_config, completed
from embedded_aws.sagemaker_clusters import ClusterStore, HyperPodCluster

QUOTA_FIELDS = ("Description", "ComputeQuotaConfig", "ComputeQuotaTarget", "ActivationState")
POLICY_FIELDS = ("Description", "SchedulerConfig")
TRANSITIONS: list[tuple[str | None, str]] = [("Creating", "Created"), ("Updating", "Updated")]
BUSY = ("Creating", "Updating", "Deleting")
UserContext = dict[str, Any]  # SageMaker's UserContext: {"IamIdentity": {"Arn", "PrincipalId"}}


class VersionedResource(ManagedState):
    """Common life cycle: id, ARN, versions of the mutable fields, status, tags."""

    KIND = ""
    LABEL = ""

    def __init__(self, *, model: str, arn_of: Any, name: str, cluster_arn: str, fields: dict[str, Any],
                 tags: Any, by: UserContext) -> None:
        super().__init__(model, TRANSITIONS)
        self.resource_id = new_resource_id()
        self.arn: str = arn_of(kind=self.KIND, resource_id=self.resource_id)
        self.name = name
        self.cluster_arn = cluster_arn
        self.created = utcnow()
        self.modified = self.created
        self.created_by = self.modified_by = by
        self.versions: list[dict[str, Any]] = [copy.deepcopy(fields)]
        self.tags = tag_list(tags)

    @property
    def version(self) -> int:
        return len(self.versions)

    @property
    def current(self) -> dict[str, Any]:
        return self.versions[-1]

    def update(self, *, target_version: int, changes: dict[str, Any], by: UserContext) -> None:
        status = self.status
        if status in BUSY:
            raise sm_conflict(f"{self.LABEL} {self.resource_id} is {status}; retry when the change completes.")
        if target_version != self.version:
            raise sm_conflict(f"TargetVersion {target_version} does not match the current version {self.version} "
                              f"of {self.LABEL} {self.resource_id}; describe it and retry with the current version.")
        self.versions.append({**copy.deepcopy(self.current), **copy.deepcopy(changes)})
        self.modified = utcnow()
        self.modified_by = by
        begin_transition(self, "Updating")

    def who(self) -> dict[str, Any]:
        return {"CreatedBy": copy.deepcopy(self.created_by), "LastModifiedBy": copy.deepcopy(self.modified_by)}

    def snapshot(self, version: int | None) -> dict[str, Any]:
        if version is None:
            self.advance()
            return self.current
        if not 1 <= version <= self.version:
            raise sm_not_found(f"Version {version} of {self.LABEL} {self.resource_id} does not exist.")
        return self.versions[version - 1]


R = TypeVar("R", bound=VersionedResource)



class ComputeQuota(VersionedResource):
    KIND = "compute-quota"
    LABEL = "Compute quota"

    def describe(self, version: int | None = None) -> dict[str, Any]:
        fields = self.snapshot(version)
        return {"ComputeQuotaArn": self.arn, "ComputeQuotaId": self.resource_id, "Name": self.name,
                "ComputeQuotaVersion": version or self.version, "Status": self.status, "ClusterArn": self.cluster_arn,
                "CreationTime": self.created, "LastModifiedTime": self.modified, **self.who(), **copy.deepcopy(fields)}


class SchedulerPolicy(VersionedResource):
    KIND = "cluster-scheduler-config"
    LABEL = "Cluster policy"

    def describe(self, version: int | None = None) -> dict[str, Any]:
        fields = self.snapshot(version)
        status = self.status
        components = [key for key in ("PriorityClasses", "FairShare", "IdleResourceSharing")
                      if key in fields.get("SchedulerConfig", {})]
        return {"ClusterSchedulerConfigArn": self.arn, "ClusterSchedulerConfigId": self.resource_id,
                "Name": self.name, "ClusterSchedulerConfigVersion": version or self.version, "Status": status,
                "StatusDetails": {key: status for key in components}, "ClusterArn": self.cluster_arn,
                "CreationTime": self.created, "LastModifiedTime": self.modified, **self.who(), **copy.deepcopy(fields)}


class GovernanceStore:
    """The compute quotas and cluster policies of one account and region."""

    def __init__(self, *, account: str, region: str, partition: str, clusters: ClusterStore) -> None:
        self.clusters = clusters
        self.quotas: dict[str, ComputeQuota] = {}
        self.policies: dict[str, SchedulerPolicy] = {}

        # A partial, not a closure: the store is pickled with the endpoint's state (snapshot.py).
        self._arn_of = functools.partial(sagemaker_arn, partition=partition, region=region, account=account)

    def uses_cluster(self, cluster_arn: str) -> bool:
        resources: list[VersionedResource] = [*self.quotas.values(), *self.policies.values()]
        return any(r.cluster_arn == cluster_arn for r in resources)

    # Compute quotas ---------------------------------------------------------------------------
    def create_quota(self, params: dict[str, Any], *, by: UserContext) -> ComputeQuota:
        cluster = self._governed_cluster(params["ClusterArn"])
        check_quota_config(params["ComputeQuotaConfig"], cluster)
        if any(q.name == params["Name"] for q in self.quotas.values()):
            raise sm_conflict(f"A compute quota named {params['Name']} already exists.")
        team = params["ComputeQuotaTarget"]["TeamName"]
        if any(q.cluster_arn == cluster.arn and q.current["ComputeQuotaTarget"]["TeamName"] == team
               for q in self.quotas.values()):
            raise sm_conflict(f"Team {team} already has a compute quota on cluster {cluster.name}.")
        fields = {key: params[key] for key in QUOTA_FIELDS if key in params}
        fields["ComputeQuotaConfig"] = completed(fields["ComputeQuotaConfig"])
        fields.setdefault("ActivationState", "Enabled")
        quota = ComputeQuota(model="sagemaker::compute-quota", arn_of=self._arn_of, name=params["Name"],
                             cluster_arn=cluster.arn, fields=fields, tags=params.get("Tags"), by=by)
        self.quotas[quota.resource_id] = quota
        return quota

    def quota(self, quota_id: str) -> ComputeQuota:
        if quota_id not in self.quotas:
            raise sm_not_found(f"Compute quota {quota_id} not found.")
        return self.quotas[quota_id]

    def update_quota(self, params: dict[str, Any], *, by: UserContext) -> ComputeQuota:
        quota = self.quota(params["ComputeQuotaId"])
        changes = {key: params[key] for key in QUOTA_FIELDS if key in params}
        if "ComputeQuotaConfig" in changes:
            check_quota_config(changes["ComputeQuotaConfig"], self.clusters.get(quota.cluster_arn))
            changes["ComputeQuotaConfig"] = completed(changes["ComputeQuotaConfig"])
        team = changes.get("ComputeQuotaTarget", {}).get("TeamName")
        if team is not None and team != quota.current["ComputeQuotaTarget"]["TeamName"]:
            raise sm_validation("The team of a compute quota cannot be changed; create a new compute quota.")
        quota.update(target_version=params["TargetVersion"], changes=changes, by=by)
        return quota

    def delete_quota(self, quota_id: str) -> None:
        self.quota(quota_id)
        del self.quotas[quota_id]

    def listed_quotas(self, params: dict[str, Any]) -> list[ComputeQuota]:
        return _filtered(list(self.quotas.values()), params)

    # Cluster policies (scheduler configs) -----------------------------------------------------
    def create_policy(self, params: dict[str, Any], *, by: UserContext) -> SchedulerPolicy:
        cluster = self._governed_cluster(params["ClusterArn"])
        _check_scheduler_config(params["SchedulerConfig"])
        if any(p.cluster_arn == cluster.arn for p in self.policies.values()):
            raise sm_conflict(f"Cluster {cluster.name} already has a cluster policy; update it instead.")
        if any(p.name == params["Name"] for p in self.policies.values()):
            raise sm_conflict(f"A cluster policy named {params['Name']} already exists.")
        fields = {key: params[key] for key in POLICY_FIELDS if key in params}
        policy = SchedulerPolicy(model="sagemaker::cluster-scheduler-config", arn_of=self._arn_of,
                                 name=params["Name"], cluster_arn=cluster.arn, fields=fields, tags=params.get("Tags"),
                                 by=by)
        self.policies[policy.resource_id] = policy
        return policy

    def policy(self, policy_id: str) -> SchedulerPolicy:
        if policy_id not in self.policies:
            raise sm_not_found(f"Cluster policy {policy_id} not found.")
        return self.policies[policy_id]

    def update_policy(self, params: dict[str, Any], *, by: UserContext) -> SchedulerPolicy:
        policy = self.policy(params["ClusterSchedulerConfigId"])
        changes = {key: params[key] for key in POLICY_FIELDS if key in params}
        if "SchedulerConfig" in changes:
            _check_scheduler_config(changes["SchedulerConfig"])
        policy.update(target_version=params["TargetVersion"], changes=changes, by=by)
        return policy

    def delete_policy(self, policy_id: str) -> None:
        self.policy(policy_id)
        del self.policies[policy_id]

    def listed_policies(self, params: dict[str, Any]) -> list[SchedulerPolicy]:
        return _filtered(list(self.policies.values()), params)

    def _governed_cluster(self, cluster_arn: str) -> HyperPodCluster:
        try:
            cluster = self.clusters.get(cluster_arn)
        except Exception:
            raise sm_validation(f"Cluster {cluster_arn} does not exist.") from None
        if cluster.eks_cluster_arn is None:
            raise sm_validation(f"Cluster {cluster.name} is not orchestrated by Amazon EKS; task governance "
                                "needs an EKS-orchestrated cluster.")
        return cluster


def _check_scheduler_config(config: dict[str, Any]) -> None:
    names = [pc["Name"] for pc in config.get("PriorityClasses", [])]
    if len(names) != len(set(names)):
        raise sm_validation("Priority class names must be unique.")


def _filtered(resources: list[R], params: dict[str, Any]) -> list[R]:
    chosen = [r for r in resources if params.get("NameContains", "") in r.name]
    if params.get("ClusterArn"):
        chosen = [r for r in chosen if r.cluster_arn == params["ClusterArn"]]
    if params.get("Status"):
        chosen = [r for r in chosen if r.status == params["Status"]]
    if params.get("CreatedAfter"):
        chosen = [r for r in chosen if r.created > naive_utc(params["CreatedAfter"])]
    if params.get("CreatedBefore"):
        chosen = [r for r in chosen if r.created < naive_utc(params["CreatedBefore"])]
    sort_by = params.get("SortBy", "CreationTime")

    def key(resource: R) -> str:
        fields = {"Name": resource.name, "Status": str(resource.status), "ClusterArn": resource.cluster_arn}
        return fields.get(sort_by, resource.created.isoformat())

    chosen.sort(key=key, reverse=params.get("SortOrder", "Descending") == "Descending")
    return chosen
