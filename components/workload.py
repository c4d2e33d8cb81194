"""`WorkloadPolicy`: the workload layer, the team's workload classes as objects the cluster
enforces in the team namespace `hyperpod-ns-<team>`:

- a ValidatingAdmissionPolicy (+ binding) on Kueue `Workload`s, the one object every job kind
  becomes under both HyperPod task governance and plain Kueue: the priority class must be one a
  workload class of the team uses; a job's total accelerators may not exceed the largest
  `max_gpus_per_job` of the classes with that priority, nor its maximum execution time their
  `max_run_time`;
- a LimitRange: no container asks for more accelerators than one of the team's instances has;
- a ResourceQuota: the namespace never holds more accelerators than the team can reach there
  (its guarantee plus what it may borrow);
- in plain-EKS mode only, the team's Kueue LocalQueue pointing at its ClusterQueue (the cluster
  stack declares the ClusterQueue, the counterpart of a HyperPod compute quota).

`required_labels` are not enforced in-cluster: Kueue copies only configured label keys onto a
Workload, so a check there would be unreliable; validation reports classes that lack them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import kueue
from components.kube_objects import KubernetesObjects
from components.tags import cost_tags, k8s_labels
from hypergov import naming
from hypergov.model.cluster import Cluster
from hypergov.model.common import duration_seconds
from hypergov.model.workload import WorkloadClass
from hypergov.stack_views import EffectiveQuota, ProjectView

TYPE = "hypergov:index:WorkloadPolicy"
ACCELERATOR_RESOURCES = ("nvidia.com/gpu", "aws.amazon.com/neuron")


@dataclass(frozen=True)
class WorkloadPolicyArgs:
    view: ProjectView  # everything the policy is declared from
    cluster_name: str  # one of the project's clusters
    kubernetes: k8s.Provider | None  # None: declare no Kubernetes object (counted)


@dataclass(frozen=True)
class PriorityLimits:
    max_accelerators: int
    max_seconds: int


def limits_by_priority(workloads: Mapping[str, WorkloadClass]) -> dict[str, PriorityLimits]:
    """Per priority class, the most any workload class with that priority allows."""
    found: dict[str, PriorityLimits] = {}
    for _, wl in sorted(workloads.items()):
        seen = found.get(wl.priority_class, PriorityLimits(0, 0))
        found[wl.priority_class] = PriorityLimits(max(seen.max_accelerators, wl.max_gpus_per_job),
                                                  max(seen.max_seconds, duration_seconds(wl.max_run_time)))
    return dict(sorted(found.items()))


def reachable_accelerators(cluster: Cluster, quota: EffectiveQuota) -> dict[str, int]:
    """Per accelerator resource, the guarantee plus the borrowable part, capped by the cluster."""
    total: dict[str, int] = defaultdict(int)
    for itype in quota.reachable_types:
        reach = quota.reachable_gpus(itype)
        per = quota.accelerators_per_instance[itype]
        capacity = cluster.capacity[itype].instances * per if itype in cluster.capacity else reach
        total[kueue.accelerator_resource(itype)] += min(reach, capacity)
    return dict(sorted(total.items()))


def per_container_max(quota: EffectiveQuota) -> dict[str, int]:
    best: dict[str, int] = defaultdict(int)
    for itype in quota.reachable_types:
        res = kueue.accelerator_resource(itype)
        best[res] = max(best[res], quota.accelerators_per_instance[itype])
    return dict(sorted(best.items()))


_GPUS = ("object.spec.podSets.map(ps, ps.count * ps.template.spec.containers.map(c, "
         + " + ".join(f"(has(c.resources) && has(c.resources.limits) && '{r}' in c.resources.limits ? "
                      f"int(string(c.resources.limits['{r}'])) : 0)" for r in ACCELERATOR_RESOURCES)
         + ").sum()).sum()")


def admission_validations(workloads: Mapping[str, WorkloadClass], allowed: list[str]) -> list[dict[str, str]]:
    limits = limits_by_priority(workloads)
    priorities = sorted(limits) if limits else sorted(allowed)
    listed = ", ".join(f"'{p}'" for p in priorities)
    checks = [{"expression": f"has(object.spec.priorityClassName) && object.spec.priorityClassName in [{listed}]",
               "message": f"the team's workload classes allow priority classes {listed} only"}]
    for priority, lim in limits.items():
        guard = f"!has(object.spec.priorityClassName) || object.spec.priorityClassName != '{priority}'"
        checks.append({"expression": f"{guard} || variables.accelerators <= {lim.max_accelerators}",
                       "message": f"a '{priority}' job may use at most {lim.max_accelerators} accelerators"})
        checks.append({"expression": f"{guard} || (has(object.spec.maximumExecutionTimeSeconds) && "
                                     f"object.spec.maximumExecutionTimeSeconds <= {lim.max_seconds})",
                       "message": f"a '{priority}' job must set a maximum execution time of at most "
                                  f"{lim.max_seconds} s (label kueue.x-k8s.io/max-exec-time-seconds)"})
    return checks


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
        return {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": ["kueue.x-k8s.io"], "apiVersions": ["*"],
                                                    "operations": ["CREATE", "UPDATE"], "resources": ["workloads"]}]},
            "variables": [{"name": "accelerators", "expression": _GPUS}],
            "validations": admission_validations(args.view.workloads, list(args.view.project.allowed_priority_classes)),
        }
