"""Per account and region state of the HyperPod operations the endpoint serves.

moto keeps every service's state in a ``BackendDict`` (``backends[account][region]``), creates a
region's backend on first use and wipes all of them on ``/moto-api/reset``. Keeping the HyperPod
state in one of those means it is isolated per account and region and reset with the rest.
"""

from __future__ import annotations

from moto.core.base_backend import BackendDict, BaseBackend

from embedded_aws.sagemaker_clusters import ClusterStore
from embedded_aws.task_governance import GovernanceStore


class HyperPodBackend(BaseBackend):
    """HyperPod clusters and their task governance in one account and region."""

    def __init__(self, region_name: str, account_id: str) -> None:
        super().__init__(region_name, account_id)
        self.clusters = ClusterStore(account=account_id, region=region_name, partition=self.partition)
        self.governance = GovernanceStore(account=account_id, region=region_name, partition=self.partition,
                                          clusters=self.clusters)


hyperpod_backends: BackendDict[HyperPodBackend] = BackendDict(HyperPodBackend, "sagemaker")


def reserve_cluster_id(*, account: str, region: str, name: str, cluster_id: str) -> None:
    """The control API's hook: the next HyperPod cluster `name` created there gets `cluster_id`."""
    hyperpod_backends[account][region].clusters.reserve_id(name, cluster_id)
