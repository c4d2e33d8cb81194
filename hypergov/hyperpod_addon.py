"""What HyperPod task governance's EKS add-on (`amazon-sagemaker-hyperpod-taskgovernance`) makes in a
cluster from the AWS objects hypergov manages (compute quotas, the cluster scheduler config),
named and labelled as AWS documents it: one table, one source per row.

Drift reads it to recognise the add-on's objects on a task-governance cluster, so they are never
reported as unmanaged (hypergov neither declares nor may prune them), while a hand-made object of
the same kind under another name still is; the tests check against it that hypergov declares none
of them there. The names are made from the tree (the teams with a quota on the cluster, its priority
classes and instance types): the add-on makes exactly those, and a name it would use cannot belong
to another object of the same kind at the same time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from hypergov import naming

ADD_ON = "amazon-sagemaker-hyperpod-taskgovernance"
KUEUE = "kueue.x-k8s.io"
ADMISSION = "admissionregistration.k8s.io"
MANAGED_QUEUE_LABEL = "sagemaker.amazonaws.com/sagemaker-managed-queue"
QUOTA_ALLOCATION_LABEL = "sagemaker.amazonaws.com/quota-allocation-id"
ACTIVATE_QUOTA_LABEL = "sagemaker.amazonaws.com/activate-quota"
ADMISSION_POLICY = "hyperpod-task-governance-admission-policy"

_CLI = "https://github.com/aws/sagemaker-hyperpod-cli/blob/011ca927123e02b35a399935bbb3ab1905fe33c7"
_SAMPLES = ("https://github.com/aws-samples/awsome-distributed-training/blob/7217859f67bc693c52ff175ccc6082c41dbd7a1b/"
            "1.architectures/7.sagemaker-hyperpod-eks/task-governance")
SOURCES = {
    "kinds": (
        f"{_SAMPLES}/README.md: 'When installed, HyperPod creates and modifies SageMaker AI-managed Kubernetes "
        "resources such as: KueueManagerConfig, ClusterQueues, LocalQueues, WorkloadPriorityClasses, "
        "ResourceFlavors, ValidatingAdmissionPolicies' ... 'any changes made to a SageMaker AI-managed resource "
        "may be updated and overwritten by the service'; 'aws eks create-addon ... --addon-name "
        "amazon-sagemaker-hyperpod-taskgovernance'"),
    "namespace": (
        f"{_CLI}/examples/end_to_end_walkthrough/00-getting-started/00-setup.md: 'This will create the "
        "team-specific compute quotas as well as the corresponding Kubernetes namespaces in the cluster "
        "with the HyperPod naming scheme. In this example, `hyperpod-ns-team-a` and `hyperpod-ns-team-b` "
        "are created.'"),
    "namespace labels": (
        f"{_CLI}/src/sagemaker/hyperpod/cli/clients/kubernetes_client.py: 'SageMaker created namespaces "
        "have custom label attached' ... `labels[SAGEMAKER_MANAGED_QUEUE_LABEL] == \"true\"`; "
        "src/sagemaker/hyperpod/cli/commands/cluster.py: `cluster_queue_name = HYPERPOD_NAMESPACE_PREFIX "
        "+ quota_allocation_id + SAGEMAKER_MANAGED_CLUSTER_QUEUE_SUFFIX` (the label's value is the team)"),
    "queues": (
        f"{_CLI}/src/sagemaker/hyperpod/cli/constants/command_constants.py: 'HYPERPOD_NAMESPACE_PREFIX = "
        "\"hyperpod-ns-\"', 'SAGEMAKER_MANAGED_LOCAL_QUEUE_SUFFIX = \"-localqueue\"', "
        "'SAGEMAKER_MANAGED_CLUSTER_QUEUE_SUFFIX = \"-clusterqueue\"'; "
        f"{_SAMPLES}/README.md: 'hyperpod-ns-team-b-localqueue   hyperpod-ns-team-b-clusterqueue'"),
    "priority classes": (
        f"{_SAMPLES}/1-imagenet-gpu-team-a.yaml: 'kueue.x-k8s.io/priority-class: training-priority' for "
        "the scheduler config's 'PriorityClasses=[...{Name=training,Weight=70}]'; "
        "https://github.com/awslabs/ai-on-sagemaker-hyperpod/blob/b13e484f58cbeb5a2f0fdffe8aa837c16fe3a698/"
        "website/docs/01-eks-blueprints/inference/inference-operator/sagemaker-jumpstart.md: 'Priority "
        "class: example/ `inference-priority` - This is created from the task governance cluster "
        "scheduler config'"),
    "resource flavors": (
        f"{_CLI}/examples/end_to_end_walkthrough/03-task-governance/00-task-governance.md: `kubectl get "
        "clusterqueue hyperpod-ns-team-a-clusterqueue -o jsonpath='{.status.flavorsUsage[0]}'` shows "
        "'\"name\": \"ml.g5.12xlarge\"' (a flavor per instance type, named as the type)"),
    "admission policy": (
        "https://awslabs.github.io/ai-on-sagemaker-hyperpod/docs/eks-orchestration/add-ons/"
        "Spaces-Node-Overprovisioning/namespace-and-priorityclass: 'If your cluster has Task Governance "
        "enabled, the hyperpod-task-governance-admission-policy ValidatingAdmissionPolicy applies to "
        "any namespace carrying both: sagemaker.amazonaws.com/activate-quota=Enabled "
        "sagemaker.amazonaws.com/sagemaker-managed-queue=true'"),
}

Per = Literal["team", "priority class", "instance type", "cluster"]


@dataclass(frozen=True)
class AddOnObject:
    """A kind of object the add-on makes, one per `per`, named by `name`; `labels` are the ones a
    live object must carry to be taken for the add-on's (only those AWS documents)."""

    group: str  # the API group, "" for the core group
    kind: str
    per: Per
    name: Callable[[str], str]
    in_team_namespace: bool
    made_from: str  # the AWS object it is made from
    sources: tuple[str, ...]  # keys of SOURCES: its name, and its labels where it has some
    labels: Callable[[str], Mapping[str, str]] = lambda _: {}


def _namespace_labels(team: str) -> Mapping[str, str]:
    return {MANAGED_QUEUE_LABEL: "true", QUOTA_ALLOCATION_LABEL: team}


def _priority_class(name: str) -> str:
    return naming.kueue_priority_class(name)


ADD_ON_OBJECTS: tuple[AddOnObject, ...] = (
    AddOnObject("", "Namespace", "team", naming.namespace, False, "compute quota (ComputeQuotaTarget.TeamName)",
                ("namespace", "namespace labels"), _namespace_labels),
    AddOnObject(KUEUE, "ClusterQueue", "team", naming.kueue_cluster_queue, False,
                "compute quota (ComputeQuotaConfig, ResourceSharingConfig, FairShareWeight)", ("queues",)),
    AddOnObject(KUEUE, "LocalQueue", "team", naming.kueue_local_queue, True, "compute quota", ("queues",)),
    AddOnObject(KUEUE, "WorkloadPriorityClass", "priority class", _priority_class, False,
                "cluster scheduler config (SchedulerConfig.PriorityClasses)", ("priority classes",)),
    AddOnObject(KUEUE, "ResourceFlavor", "instance type", naming.kueue_resource_flavor, False,
                "the cluster's instance groups (the types compute quotas count)", ("resource flavors",)),
    AddOnObject(ADMISSION, "ValidatingAdmissionPolicy", "cluster", lambda _: ADMISSION_POLICY, False,
                "the add-on itself", ("admission policy",)),
)
"""Not listed, as no document names them: the admission policy's binding, Kueue's own configuration
and controller (in the add-on's namespace, outside what hypergov lists)."""

KINDS: frozenset[tuple[str, str]] = frozenset((o.group, o.kind) for o in ADD_ON_OBJECTS)


@dataclass(frozen=True)
class AddOnRef:
    """One object the add-on makes on a cluster: its identity and the labels it carries."""

    group: str
    kind: str
    namespace: str | None
    name: str
    labels: tuple[tuple[str, str], ...] = ()


def add_on_refs(*, teams: Iterable[str], priority_classes: Iterable[str],
                instance_types: Iterable[str]) -> dict[tuple[str, str, str | None, str], AddOnRef]:
    """Every object the add-on makes on one task-governance cluster, by (group, kind, namespace, name)."""
    inputs: dict[Per, tuple[str, ...]] = {"team": tuple(teams), "priority class": tuple(priority_classes),
                                          "instance type": tuple(instance_types), "cluster": ("",)}
    found = {}
    for made in ADD_ON_OBJECTS:
        for value in inputs[made.per]:
            namespace = naming.namespace(value) if made.in_team_namespace else None
            ref = AddOnRef(made.group, made.kind, namespace, made.name(value),
                           tuple(sorted(made.labels(value).items())))
            found[(ref.group, ref.kind, ref.namespace, ref.name)] = ref
    return found


def api_group(api_version: str) -> str:
    """`kueue.x-k8s.io/v1beta1` -> `kueue.x-k8s.io`; `v1` (the core group) -> ``."""
    return api_version.rpartition("/")[0]


def made_by_add_on(refs: Mapping[tuple[str, str, str | None, str], AddOnRef], *, api_version: str, kind: str,
                   namespace: str | None, name: str, labels: Mapping[str, str]) -> bool:
    """Whether a live object on a task-governance cluster is one the add-on makes there: its name
    and the labels AWS documents; or a Namespace with the add-on's mark, also one of a team that has
    left the tree (the add-on deletes it with the quota; pruning it would delete the team's jobs)."""
    if (api_group(api_version), kind) == ("", "Namespace") and labels.get(MANAGED_QUEUE_LABEL) == "true":
        return True
    ref = refs.get((api_group(api_version), kind, namespace, name))
    return ref is not None and all(labels.get(k) == v for k, v in ref.labels)
