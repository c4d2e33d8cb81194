"""moto's SageMaker service with HyperPod served by this package: clusters (Create, Describe,
Update, Delete, List, nodes, tags) and task governance (compute quotas, cluster policies).

Every operation here is validated against botocore's SageMaker model before it runs and its
answer is cut to the model's output shape; the state is in `hyperpod_backends`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from moto.core.responses import ActionResult, EmptyResult
from moto.sagemaker.responses import SageMakerResponse

from embedded_aws.eks_access import eks_auth_mode_of
from embedded_aws.errors import sm_not_found, sm_validation
from embedded_aws.extension import ModelValidatedResponse, caller_identity, page, tag_list
from embedded_aws.sagemaker_backend import HyperPodBackend, hyperpod_backends

CLUSTER_OPERATIONS = frozenset({
    "CreateCluster", "DescribeCluster", "UpdateCluster", "DeleteCluster", "ListClusters", "ListClusterNodes",
    "DescribeClusterNode",
})
GOVERNANCE_OPERATIONS = frozenset({
    "CreateComputeQuota", "DescribeComputeQuota", "UpdateComputeQuota", "DeleteComputeQuota", "ListComputeQuotas",
    "CreateClusterSchedulerConfig", "DescribeClusterSchedulerConfig", "UpdateClusterSchedulerConfig",
    "DeleteClusterSchedulerConfig", "ListClusterSchedulerConfigs",
})
TAG_OPERATIONS = frozenset({"AddTags", "ListTags", "DeleteTags"})
# ARN resource types whose tags this package keeps (moto keeps the others).
OWN_KINDS = ("cluster", "compute-quota", "cluster-scheduler-config")


class ExtendedSageMakerResponse(ModelValidatedResponse, SageMakerResponse):
    VALIDATED: ClassVar[frozenset[str]] = CLUSTER_OPERATIONS | GOVERNANCE_OPERATIONS | TAG_OPERATIONS

    @property
    def hyperpod(self) -> HyperPodBackend:
        return hyperpod_backends[self.current_account][self.region]

    def _caller(self) -> dict[str, Any]:
        """The UserContext of the identity that signed this request (CreatedBy, LastModifiedBy)."""
        user_id, arn = caller_identity(self.get_access_key(), account=self.current_account, region=self.region,
                                       partition=self.partition)
        return {"IamIdentity": {"Arn": arn, "PrincipalId": user_id}}

    # HyperPod clusters ---------------------------------------------------------------------
    def create_cluster(self) -> ActionResult:
        cluster = self.hyperpod.clusters.create(self.params, eks_auth=eks_auth_mode_of)
        return self.shaped({"ClusterArn": cluster.arn})

    def describe_cluster(self) -> ActionResult:
        return self.shaped(self.hyperpod.clusters.get(self.param("ClusterName")).describe())

    def update_cluster(self) -> ActionResult:
        cluster = self.hyperpod.clusters.get(self.param("ClusterName"))
        cluster.update(self.params)
        return self.shaped({"ClusterArn": cluster.arn})

    def delete_cluster(self) -> ActionResult:
        governance = self.hyperpod.governance
        cluster = self.hyperpod.clusters.delete(self.param("ClusterName"), in_use_by=governance.uses_cluster)
        return self.shaped({"ClusterArn": cluster.arn})

    def list_clusters(self) -> ActionResult:
        clusters = self.hyperpod.clusters.listed(self.params)
        chunk, token = self._page(clusters)
        return self.shaped({"ClusterSummaries": [c.summary() for c in chunk], "NextToken": token})

    def list_cluster_nodes(self) -> ActionResult:
        cluster = self.hyperpod.clusters.get(self.param("ClusterName"))
        nodes = [n for n in cluster.nodes.values() if self.param("InstanceGroupNameContains", "") in n.group]
        by_name = self.param("SortBy") == "NAME"
        nodes.sort(key=lambda n: n.group if by_name else n.launch_time.isoformat(),
                   reverse=self.param("SortOrder", "Descending") == "Descending")
        chunk, token = self._page(nodes)
        return self.shaped({"ClusterNodeSummaries": [n.summary() for n in chunk], "NextToken": token})

    def describe_cluster_node(self) -> ActionResult:
        cluster = self.hyperpod.clusters.get(self.param("ClusterName"))
        node = cluster.nodes.get(self.param("NodeId", ""))
        if node is None:
            raise sm_not_found(f"Node {self.param('NodeId')} not found in cluster {cluster.name}.")
        group = cluster.groups[node.group]
        copied = ("LifeCycleConfig", "ThreadsPerCore", "InstanceStorageConfigs")
        details: dict[str, Any] = {**node.summary(), **{key: group[key] for key in copied if key in group}}
        return self.shaped({"NodeDetails": details})

    # Compute quotas --------------------------------------------------------------------------
    def create_compute_quota(self) -> ActionResult:
        quota = self.hyperpod.governance.create_quota(self.params, by=self._caller())
        return self.shaped({"ComputeQuotaArn": quota.arn, "ComputeQuotaId": quota.resource_id})

    def describe_compute_quota(self) -> ActionResult:
        quota = self.hyperpod.governance.quota(self.param("ComputeQuotaId"))
        return self.shaped(quota.describe(self.param("ComputeQuotaVersion")))

    def update_compute_quota(self) -> ActionResult:
        quota = self.hyperpod.governance.update_quota(self.params, by=self._caller())
        return self.shaped({"ComputeQuotaArn": quota.arn, "ComputeQuotaVersion": quota.version})

    def delete_compute_quota(self) -> ActionResult:
        self.hyperpod.governance.delete_quota(self.param("ComputeQuotaId"))
        return EmptyResult()

    def list_compute_quotas(self) -> ActionResult:
        chunk, token = self._page(self.hyperpod.governance.listed_quotas(self.params))
        return self.shaped({"ComputeQuotaSummaries": [q.describe() for q in chunk], "NextToken": token})

    # Cluster policies (scheduler configs) ------------------------------------------------------
    def create_cluster_scheduler_config(self) -> ActionResult:
        policy = self.hyperpod.governance.create_policy(self.params, by=self._caller())
        return self.shaped({"ClusterSchedulerConfigArn": policy.arn, "ClusterSchedulerConfigId": policy.resource_id})

    def describe_cluster_scheduler_config(self) -> ActionResult:
        policy = self.hyperpod.governance.policy(self.param("ClusterSchedulerConfigId"))
        return self.shaped(policy.describe(self.param("ClusterSchedulerConfigVersion")))

    def update_cluster_scheduler_config(self) -> ActionResult:
        policy = self.hyperpod.governance.update_policy(self.params, by=self._caller())
        return self.shaped({"ClusterSchedulerConfigArn": policy.arn, "ClusterSchedulerConfigVersion": policy.version})

    def delete_cluster_scheduler_config(self) -> ActionResult:
        self.hyperpod.governance.delete_policy(self.param("ClusterSchedulerConfigId"))
        return EmptyResult()

    def list_cluster_scheduler_configs(self) -> ActionResult:
        chunk, token = self._page(self.hyperpod.governance.listed_policies(self.params))
        return self.shaped({"ClusterSchedulerConfigSummaries": [p.describe() for p in chunk], "NextToken": token})

    # Tags of the resources above (moto's tag operations cover its own resources) ---------------
    def add_tags(self) -> ActionResult:
        owner = self._tag_owner()
        if owner is None:
            return super().add_tags()
        owner.tags = tag_list([*owner.tags, *self.param("Tags", [])])
        return self.shaped({"Tags": owner.tags})

    def list_tags(self) -> ActionResult:
        owner = self._tag_owner()
        if owner is None:
            return super().list_tags()
        chunk, token = self._page(list(owner.tags))
        return self.shaped({"Tags": chunk, "NextToken": token})

    def delete_tags(self) -> ActionResult:
        owner = self._tag_owner()
        if owner is None:
            return super().delete_tags()
        keys = set(self.param("TagKeys", []))
        owner.tags = [tag for tag in owner.tags if tag["Key"] not in keys]
        return EmptyResult()

    def _tag_owner(self) -> Any:
        arn = self.param("ResourceArn", "")
        kind = arn.split(":", 5)[-1].split("/", 1)[0]
        if kind not in OWN_KINDS:
            return None
        governance = self.hyperpod.governance
        owners: list[Any] = [*self.hyperpod.clusters.by_name.values(), *governance.quotas.values(),
                             *governance.policies.values()]
        found = next((o for o in owners if o.arn == arn), None)
        if found is None:
            raise sm_validation(f"Could not find resource {arn}.")
        return found

    def _page(self, items: list[Any]) -> tuple[list[Any], str | None]:
        return page(items, max_results=self.param("MaxResults"), next_token=self.param("NextToken"),
                    invalid=sm_validation("The NextToken is not valid."))
