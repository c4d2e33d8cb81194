"""Kueue objects for clusters without HyperPod task governance (plain-EKS mode), built as plain
manifests with the semantics the HyperPod objects have:

| HyperPod task governance            | Kueue (plain EKS)                                          |
|-------------------------------------|------------------------------------------------------------|
| compute quota: instances per type   | ClusterQueue nominalQuota: accelerators per flavor         |
| Lend                                | borrowingLimit 0, lendingLimit unset (all idle quota lent)  |
| DontLend                            | borrowingLimit 0, lendingLimit 0                           |
| LendAndBorrow, BorrowLimit p %      | borrowingLimit = nominal * p / 100 (default 50), lends all |
| AbsoluteBorrowLimits (instances or  | borrowingLimit = the limit in accelerators, regardless of  |
|   accelerators) on a type           |   p; a type with no guarantee: nominalQuota 0              |
| a guarantee in accelerators         | nominalQuota = those accelerators                           |
| idle-resource sharing off           | every queue: borrowingLimit 0, lendingLimit 0               |
| fair share on, team weight w        | ClusterQueue fairSharing.weight w                           |
| preempt own lower-priority tasks    | preemption.withinClusterQueue LowerPriority (else Never)    |
| priority class name/weight          | WorkloadPriorityClass name/value                            |
| the cluster                         | one cohort; one ResourceFlavor per instance type            |

Quotas count accelerators, as Kueue counts resources; an instance type's accelerators per
instance come from the cluster (or the built-in table). Guarantees and limits in MIG partitions,
vCPU or memory have no queue here (validation refuses them on a plain-EKS cluster: CAP010).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hypergov import naming
from hypergov.kube_resources import NEURON_CORE, NEURON_DEVICE, NEURON_DEVICE_ALIAS, NVIDIA_GPU
from hypergov.stack_views import EffectiveQuota

API = "kueue.x-k8s.io/v1beta1"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

ACCELERATOR_RESOURCES = (NVIDIA_GPU, NEURON_DEVICE, NEURON_CORE, NEURON_DEVICE_ALIAS)
"""Every extended resource a pod can ask accelerators by: NVIDIA's device plugin advertises
`nvidia.com/gpu`; the Neuron device plugin `aws.amazon.com/neuron` (devices), its aliases
`aws.amazon.com/neurondevice` and `aws.amazon.com/neuroncore` (cores). Kueue quotas count the
first two (`accelerator_resource`), a namespace's LimitRange and ResourceQuota the device names
too (`quota_resources`); the admission policy counts all four, one unit each."""


def quota_resources(resource: str) -> tuple[str, ...]:
    """The names a namespace's limits must cover for accelerators counted in `resource`: Neuron
    devices are asked for under two names of one unit. (`neuroncore` counts cores, whose number per
    device depends on the chip; the admission policy counts it, the namespace quota does not.)"""
    return (resource, NEURON_DEVICE_ALIAS) if resource == NEURON_DEVICE else (resource,)


def accelerator_resource(instance_type: str) -> str:
    """The extended resource a node of this type advertises (Neuron devices on Trainium)."""
    return NEURON_DEVICE if ".trn" in instance_type or ".inf" in instance_type else NVIDIA_GPU


def resource_flavor(instance_type: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceFlavor",
            "metadata": {"name": naming.kueue_resource_flavor(instance_type)},
            "spec": {"nodeLabels": {INSTANCE_TYPE_LABEL: instance_type}}}


def workload_priority_class(name: str, weight: int) -> dict[str, Any]:
    """Plain-EKS mode only: on task-governance clusters the add-on makes these from the policy."""
    return {"apiVersion": API, "kind": "WorkloadPriorityClass",
            "metadata": {"name": naming.kueue_priority_class(name)}, "value": weight,
            "description": f"hypergov: scheduler priority class '{name}'"}


def _limits(quota: EffectiveQuota, instance_type: str) -> dict[str, int]:
    if quota.sharing == "DontLend":
        return {"borrowingLimit": 0, "lendingLimit": 0}
    if quota.sharing == "Lend":
        return {"borrowingLimit": 0}
    return {"borrowingLimit": quota.borrowable_gpus(instance_type)}


def cluster_queue(quota: EffectiveQuota, *, fair_share: bool) -> dict[str, Any]:
    """The ClusterQueue of one team's effective quota (plain-EKS mode: HyperPod's quota as Kueue)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for itype in quota.reachable_types:
        nominal = quota.gpus(itype)
        groups[accelerator_resource(itype)].append({
            "name": naming.kueue_resource_flavor(itype),
            "resources": [{"name": accelerator_resource(itype), "nominalQuota": nominal, **_limits(quota, itype)}]})
    spec: dict[str, Any] = {
        "cohort": naming.kueue_cohort(quota.cluster),
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": naming.namespace(quota.team)}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [{"coveredResources": [res], "flavors": flavors} for res, flavors in sorted(groups.items())],
        "preemption": {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"},
                       "withinClusterQueue": quota.preempt_team_tasks},
    }
    if fair_share:
        spec["fairSharing"] = {"weight": quota.fair_share_weight}
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": naming.kueue_cluster_queue(quota.team)},
            "spec": spec}


def local_queue(team: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "LocalQueue",
            "metadata": {"name": naming.kueue_local_queue(team), "namespace": naming.namespace(team)},
            "spec": {"clusterQueue": naming.kueue_cluster_queue(team)}}
