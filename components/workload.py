"""`WorkloadPolicy`: the workload layer, the team's workload classes as objects the cluster
enforces in the team namespace `hyperpod-ns-<team>`:

- a ValidatingAdmissionPolicy (+ binding) on what the team submits there (Jobs, PyTorchJobs,
  RayJobs, HyperPodPyTorchJobs, bare Pods, Deployments, ... and Kueue `Workload`s as a backstop):
  a job that asks for accelerators must name the team's queue, a priority class a workload class
  of the team uses, stay within that class's accelerators and run time and carry its
  `required_labels` (`components.admission_policy` builds it; the module says what is checked
  where);
- a LimitRange: no container asks for more accelerators than one of the team's instances has;
- a ResourceQuota: the namespace never holds more accelerators than the team can reach there
  (its guarantee plus what it may borrow);
- in plain-EKS mode only, the team's Kueue LocalQueue pointing at its ClusterQueue (the cluster
  stack declares the ClusterQueue, the counterpart of a HyperPod compute quota).

`required_labels` are checked on the submitted object, not on the Workload (Kueue copies only
configured label keys onto a Workload).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import admission_policy, kueue
from components.kube_objects import KubernetesObjects
from components.tags import cost_tags, k8s_labels
from hypergov import naming
from hypergov.model.cluster import Cluster
from hypergov.stack_views import EffectiveQuota, ProjectView

TYPE = "hypergov:index:WorkloadPolicy"


@dataclass(frozen=True)
class WorkloadPolicyArgs:
    view: ProjectView  # everything the policy is declared from
    cluster_name: str  # one of the project's clusters
    kubernetes: k8s.Provider | None  # None: declare no Kubernetes object (counted)


def reachable_accelerators(cluster: Cluster, quota: EffectiveQuota) -> dict[str, int]:
    """Per accelerator resource, the guarantee plus the borrowable part, capped by the cluster."""
    total: dict[str, int] = defaultdict(int)
    for itype in quota.reachable_types:
        reach = quota.reachable_gpus(itype)
        per = quota.accelerators_per_instance[itype]
        capacity = cluster.capacity[itype].instances * per if itype in cluster.capacity else reach
        for name in kueue.quota_resources(kueue.accelerator_resource(itype)):
            total[name] += min(reach, capacity)
    return dict(sorted(total.items()))


def per_container_max(quota: EffectiveQuota) -> dict[str, int]:
    best: dict[str, int] = defaultdict(int)
    for itype in quota.reachable_types:
        for name in kueue.quota_resources(kueue.accelerator_resource(itype)):
            best[name] = max(best[name], quota.accelerators_per_instance[itype])
    return dict(sorted(best.items()))


class WorkloadPolicy(pulumi.ComponentResource):
    def __init__(self, name: str, args: WorkloadPolicyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        team, cluster_name = args.view.team, args.cluster_name
        labels = k8s_labels(cost_tags(args.view.org, layer="workload", project=(team, args.view.project)))
        namespace = naming.namespace(team)
        self.kubernetes = kube = KubernetesObjects(parent=self, provider=args.kubernetes)
        in_ns = {"name": naming.WORKLOAD_LIMITS, "namespace": namespace, "labels": labels}
        most = per_container_max(args.view.quotas[args.cluster_name])
        kube.declare(k8s.core.v1.LimitRange, f"limit-range@{cluster_name}", metadata=in_ns,
                     spec={"limits": [{"type": "Container", "max": {r: str(n) for r, n in most.items()}}]})
        reach = reachable_accelerators(args.view.clusters[args.cluster_name], args.view.quotas[args.cluster_name])
        kube.declare(k8s.core.v1.ResourceQuota, f"resource-quota@{cluster_name}", metadata=in_ns,
                     spec={"hard": {f"requests.{r}": str(n) for r, n in reach.items()}})
        policy_name = naming.workload_admission_policy(team)
        policy = kube.declare(
            k8s.admissionregistration.v1.ValidatingAdmissionPolicy, f"admission-policy@{cluster_name}",
            metadata={"name": policy_name, "labels": labels}, spec=self._policy_spec(args))
        kube.declare(
            k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding, f"admission-binding@{cluster_name}",
            metadata={"name": policy_name, "labels": labels},
            spec={"policyName": policy_name, "validationActions": ["Deny"],
                  "matchResources": {"namespaceSelector": {"matchLabels": {
                      "kubernetes.io/metadata.name": namespace}}}},
            depends_on=[policy])
        if not args.view.clusters[args.cluster_name].task_governance:
            manifest = kueue.local_queue(team)
            kube.declare(k8s.apiextensions.CustomResource, f"local-queue@{cluster_name}",
                         api_version=manifest["apiVersion"], kind=manifest["kind"],
                         metadata={**manifest["metadata"], "labels": labels}, spec=manifest["spec"])
        self.register_outputs({"namespace": namespace, "cluster": cluster_name})

    @staticmethod
    def _policy_spec(args: WorkloadPolicyArgs) -> dict[str, Any]:
        return admission_policy.policy_spec(
            team=args.view.team, workloads=args.view.workloads,
            allowed=list(args.view.project.allowed_priority_classes),
            task_governance=args.view.clusters[args.cluster_name].task_governance)
