"""The workload admission policy of one team namespace, as a ValidatingAdmissionPolicy spec: the
team's workload classes turned into CEL the API server evaluates when a job is submitted.

Where it checks:

- **At submission**, the objects people create: batch Jobs, Kubeflow PyTorchJobs and MPIJobs,
  Ray RayJobs and RayClusters, SageMaker HyperPodPyTorchJobs, and bare Pods, Deployments,
  StatefulSets and ReplicaSets (Kueue's pod integrations manage those too). An object whose
  controller is one of these kinds (a Job's Pods, a Deployment's ReplicaSet) was checked as its
  owner and is skipped, so the engineer is refused once, at the object they wrote. Pods of any
  other kind (a CronJob's Jobs are Jobs, so they are checked; an MPIJob v1 launcher, a JobSet,
  a LeaderWorkerSet...) are checked as bare pods: they need the queue label on their pod template,
  or they get no accelerators in the team namespace.
- **Backstop**, Kueue `Workload`s (every queued job becomes one, under task governance and plain
  Kueue alike): the same priority, size and run-time limits, and the team's queue, on the values
  Kueue copied from the job. Labels are not checked there (Kueue copies only configured keys).

What it checks, for an object that asks for accelerators (any of `ACCELERATOR_RESOURCES`):
the team's LocalQueue in `kueue.x-k8s.io/queue-name` (a bare Pod, Deployment or StatefulSet too:
with the label Kueue's pod integrations queue it, without it nothing would); a priority class
(`kueue.x-k8s.io/priority-class`, its in-cluster name: `naming.kueue_priority_class`) that one of
the team's workload classes uses; at most the largest `max_gpus_per_job` of the classes with that
priority; a `kueue.x-k8s.io/max-exec-time-seconds` of at most their `max_run_time`; and the
`required_labels` of one of those classes.

Accelerators are counted as the scheduler counts a pod's requests
(https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#resource-sharing-within-containers
and https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/#resource-sharing-within-containers):
per resource, the larger of the largest init container and the sum of the app containers plus the
sidecars (init containers with `restartPolicy: Always`); a container's request is its request,
else its limit (an extended resource's request defaults to its limit and must equal it). A job is
the sum over its pod sets of pods x accelerators per pod. Where Kubernetes is finer (a sidecar
started before an init container counts with that init container) this count is lower only for
pods whose init containers and sidecars both ask for accelerators.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.kueue import ACCELERATOR_RESOURCES
from hypergov import naming
from hypergov.model.common import duration_seconds
from hypergov.model.workload import WorkloadClass

QUEUE_LABEL = naming.KUEUE_QUEUE_NAME_LABEL
PRIORITY_LABEL = naming.KUEUE_PRIORITY_CLASS_LABEL
MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"

# (API group, plural resource) -> kinds, of everything the policy checks at submission.
SUBMITTED: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("Pod",),
    ("apps", "deployments"): ("Deployment",),
    ("apps", "statefulsets"): ("StatefulSet",),
    ("apps", "replicasets"): ("ReplicaSet",),
    ("batch", "jobs"): ("Job",),
    ("kubeflow.org", "pytorchjobs"): ("PyTorchJob",),
    ("kubeflow.org", "mpijobs"): ("MPIJob",),
    ("ray.io", "rayjobs"): ("RayJob",),
    ("ray.io", "rayclusters"): ("RayCluster",),
    # AWS's samples spell the kind both ways; the CRD's is HyperPodPyTorchJob.
    ("sagemaker.amazonaws.com", "hyperpodpytorchjobs"): ("HyperPodPyTorchJob", "HyperPodPytorchJob"),
}
BACKSTOP = ("kueue.x-k8s.io", "workloads")


@dataclass(frozen=True)
class PriorityLimits:
    """What the team's workload classes with one priority class allow together."""
    max_accelerators: int  # the largest max_gpus_per_job among them
    max_seconds: int  # the longest max_run_time among them
    label_sets: tuple[tuple[str, tuple[str, ...]], ...]  # (class, its required_labels): one set must be present


def limits_by_priority(workloads: Mapping[str, WorkloadClass]) -> dict[str, PriorityLimits]:
    """Per in-cluster priority class name, the most any workload class with that priority allows."""
    found: dict[str, PriorityLimits] = {}
    for class_name, wl in sorted(workloads.items()):
        name = naming.kueue_priority_class(wl.priority_class)
        seen = found.get(name, PriorityLimits(0, 0, ()))
        found[name] = PriorityLimits(max(seen.max_accelerators, wl.max_gpus_per_job),
                                     max(seen.max_seconds, duration_seconds(wl.max_run_time)),
                                     (*seen.label_sets, (class_name, tuple(sorted(wl.required_labels)))))
    return dict(sorted(found.items()))


# ----------------------------------------------------------------------------- accelerators


def _request(container: str) -> str:
    """CEL: the request of container `container` for resource `r` (a bound variable), else its limit."""
    res = f"{container}.resources"
    return (f"(has({res}) && has({res}.requests) && r in {res}.requests ? int(string({res}.requests[r])) : "
            f"has({res}) && has({res}.limits) && r in {res}.limits ? int(string({res}.limits[r])) : 0)")


def pod_accelerators(spec: str) -> str:
    """CEL: the accelerators one pod of pod spec `spec` takes, as the scheduler counts them."""
    sidecar = "has(c.restartPolicy) && c.restartPolicy == 'Always'"
    inits = f"(has({spec}.initContainers) ? {spec}.initContainers : [])"
    running = (f"{spec}.containers.map(c, {_request('c')}).sum() + "
               f"{inits}.filter(c, {sidecar}).map(c, {_request('c')}).sum()")
    init_only = f"{inits}.filter(c, !({sidecar})).map(c, {_request('c')})"
    listed = ", ".join(f"'{r}'" for r in ACCELERATOR_RESOURCES)
    return f"[{listed}].map(r, ([{running}] + {init_only}).max()).sum()"


def _replica_map(field: str) -> str:
    """Kubeflow's `spec.<x>ReplicaSpecs`: a map of replica type -> {replicas (default 1), template}."""
    specs = f"object.spec.{field}"
    return (f"{specs}.map(k, (has({specs}[k].replicas) ? {specs}[k].replicas : 1) * "
            f"{pod_accelerators(f'{specs}[k].template.spec')}).sum()")


def _ray_cluster(spec: str) -> str:
    """A Ray cluster spec: one head pod, and per worker group replicas (default 0) x numOfHosts."""
    groups = f"(has({spec}.workerGroupSpecs) ? {spec}.workerGroupSpecs : [])"
    workers = (f"{groups}.map(g, (has(g.replicas) ? g.replicas : 0) * (has(g.numOfHosts) ? g.numOfHosts : 1) * "
               f"{pod_accelerators('g.template.spec')}).sum()")
    return f"{pod_accelerators(f'{spec}.headGroupSpec.template.spec')} + {workers}"


def _replicas(default: int = 1) -> str:
    return f"(has(object.spec.replicas) ? object.spec.replicas : {default})"


def _job_pods() -> str:
    """A batch Job runs `parallelism` pods at once (default 1), fewer when it needs fewer completions."""
    parallelism = "(has(object.spec.parallelism) ? object.spec.parallelism : 1)"
    return (f"(has(object.spec.completions) && object.spec.completions < {parallelism} ? "
            f"object.spec.completions : {parallelism})")


def job_accelerators() -> str:
    """CEL: the accelerators the object asks for in all, by kind (0 for kinds it does not know)."""
    per_kind: Sequence[tuple[Sequence[str], str]] = [
        (["Pod"], pod_accelerators("object.spec")),
        (["Deployment", "StatefulSet", "ReplicaSet"],
         f"{_replicas()} * {pod_accelerators('object.spec.template.spec')}"),
        (["Job"], f"{_job_pods()} * {pod_accelerators('object.spec.template.spec')}"),
        (["PyTorchJob"], _replica_map("pytorchReplicaSpecs")),
        (["MPIJob"], _replica_map("mpiReplicaSpecs")),
        (["RayCluster"], _ray_cluster("object.spec")),
        (["RayJob"], f"has(object.spec.rayClusterSpec) ? {_ray_cluster('object.spec.rayClusterSpec')} : 0"),
        # HyperPod keeps `spares` pods ready beside `replicas`: they hold nodes too.
        (SUBMITTED[("sagemaker.amazonaws.com", "hyperpodpytorchjobs")],
         "object.spec.replicaSpecs.map(s, ((has(s.replicas) ? s.replicas : 1) + (has(s.spares) ? s.spares : 0)) * "
         f"{pod_accelerators('s.template.spec')}).sum()"),
        (["Workload"], f"object.spec.podSets.map(ps, ps.count * {pod_accelerators('ps.template.spec')}).sum()"),
    ]
    expression = "0"
    for kinds, count in reversed(per_kind):
        test = " || ".join(f"object.kind == '{k}'" for k in kinds)
        expression = f"({test}) ? ({count}) : {expression}"
    return expression


# ----------------------------------------------------------------------------- the policy


def _label(key: str) -> str:
    return f"('{key}' in variables.labels ? variables.labels['{key}'] : '')"


def policy_variables() -> list[dict[str, str]]:
    """What the validations read, the same for a submitted object and a Kueue Workload."""
    workload = "object.kind == 'Workload'"
    label = f"variables.labels['{MAX_EXEC_LABEL}']"
    seconds = f"'{MAX_EXEC_LABEL}' in variables.labels && {label}.matches('^[0-9]{{1,9}}$') ? int({label}) : 0"
    return [
        {"name": "accelerators", "expression": job_accelerators()},
        {"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
        {"name": "queue", "expression": f"{workload} ? (has(object.spec.queueName) ? object.spec.queueName : '') "
                                        f": {_label(QUEUE_LABEL)}"},
        {"name": "priority", "expression": f"{workload} ? (has(object.spec.priorityClassName) ? "
                                           f"object.spec.priorityClassName : '') : {_label(PRIORITY_LABEL)}"},
        # 0: not set (or not a number Kueue would accept)
        {"name": "maxSeconds", "expression": f"{workload} ? (has(object.spec.maximumExecutionTimeSeconds) ? "
                                             f"object.spec.maximumExecutionTimeSeconds : 0) : ({seconds})"},
    ]


def match_conditions() -> list[dict[str, str]]:
    checked = sorted({k for kinds in SUBMITTED.values() for k in kinds})
    listed = ", ".join(f"'{k}'" for k in checked)
    return [
        # its owner was checked when it was submitted; refusing the child would only stall the owner
        {"name": "not-made-by-a-checked-owner",
         "expression": "object.kind == 'Workload' || !has(object.metadata.ownerReferences) || "
                       "!object.metadata.ownerReferences.exists(o, has(o.controller) && o.controller && "
                       f"o.kind in [{listed}])"},
        # finalizers must come off objects that predate the policy, or they could never be deleted
        {"name": "not-being-deleted", "expression": "!has(object.metadata.deletionTimestamp)"},
    ]


def _per_priority(priority: str, lim: PriorityLimits) -> list[dict[str, str]]:
    guard = f"variables.accelerators == 0 || variables.priority != '{priority}'"
    job = f"a job of priority class '{priority}'"
    checks = [
        {"expression": f"{guard} || variables.accelerators <= {lim.max_accelerators}",
         "message": f"{job} may ask for at most {lim.max_accelerators} accelerators in all "
                    "(pods x accelerators per pod, init containers and sidecars counted as the scheduler counts "
                    "them): ask for fewer, or use a workload class that allows more"},
        {"expression": f"{guard} || (variables.maxSeconds > 0 && variables.maxSeconds <= {lim.max_seconds})",
         "message": f"{job} must set the label {MAX_EXEC_LABEL} to at most {lim.max_seconds} "
                    "(seconds: the longest max_run_time of the team's workload classes with this priority)"}]
    if all(labels for _, labels in lim.label_sets):
        options = " || ".join("[" + ", ".join(f"'{k}'" for k in labels) + "].all(k, k in variables.labels)"
                              for _, labels in lim.label_sets)
        named = "; or ".join(f"{', '.join(labels)} (workload class {cls})" for cls, labels in lim.label_sets)
        checks.append({"expression": f"{guard} || object.kind == 'Workload' || {options}",
                       "message": f"{job} must carry the labels {named}"})
    return checks


def add_on_equivalent() -> dict[str, str]:
    """What HyperPod task governance's own admission policy requires in a team namespace
    (`hypergov.hyperpod_addon.ADMISSION_POLICY`: every Pod and Deployment carries a non-empty
    queue-name label, accelerators or not), for plain-EKS clusters, where no add-on declares it.
    On a task-governance cluster hypergov relies on the add-on's and declares nothing of it."""
    return {"expression": "!(object.kind in ['Pod', 'Deployment']) || variables.queue != ''",
            "message": f"every Pod and Deployment in a team namespace names a queue, as on a HyperPod "
                       f"task-governance cluster: set the label {QUEUE_LABEL}"}


def admission_validations(*, team: str, workloads: Mapping[str, WorkloadClass], allowed: Sequence[str],
                          task_governance: bool) -> list[dict[str, str]]:
    """Every check, the first failing one's message is the refusal. `allowed`: the project's
    priority classes, the allow-list when the team has no workload class."""
    limits = limits_by_priority(workloads)
    priorities = sorted(limits) if limits else sorted(
        naming.kueue_priority_class(p) for p in allowed)
    listed = ", ".join(f"'{p}'" for p in priorities)
    queue = naming.kueue_local_queue(team)
    checks = [
        {"expression": f"variables.accelerators == 0 || variables.queue == '{queue}'",
         "message": f"a job that asks for accelerators must be queued: set the label {QUEUE_LABEL}: {queue} "
                    "(bare Pods, Deployments and StatefulSets too)"},
        {"expression": f"variables.accelerators == 0 || variables.priority in [{listed}]",
         "message": f"a job that asks for accelerators must set the label {PRIORITY_LABEL} to one of {listed} "
                    "(the priority classes of the team's workload classes)"},
    ]
    if not task_governance:
        checks.insert(0, add_on_equivalent())
    for priority, lim in limits.items():
        checks += _per_priority(priority, lim)
    return checks


def policy_spec(*, team: str, workloads: Mapping[str, WorkloadClass], allowed: Sequence[str],
                task_governance: bool) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy spec of one team namespace on a cluster of this mode (the
    priority classes have the same in-cluster names in both, `naming.kueue_priority_class`; on
    plain EKS it also holds the task-governance add-on's own check, `add_on_equivalent`)."""
    groups: dict[str, list[str]] = {}
    for group, resource in [*SUBMITTED, BACKSTOP]:
        groups.setdefault(group, []).append(resource)
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [
            {"apiGroups": [group], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
             "resources": sorted(resources)} for group, resources in sorted(groups.items())]},
        "matchConditions": match_conditions(),
        "variables": policy_variables(),
        "validations": admission_validations(team=team, workloads=workloads, allowed=allowed,
                                             task_governance=task_governance),
    }
