"""What each persona of a project may do in its team namespace (`hyperpod-ns-<team>`): the one table
the project layer's Roles are generated from and README.md's persona matrix is checked against.

The article's personas ("Project Lead (can manage resource quotas and team members within their
project), and R&D Engineer (can submit and monitor training jobs but cannot modify cluster
configurations)") differ in the cluster, not only in AWS:

- a Viewer reads the team's jobs, their Kueue workloads and queue, pods, logs and events;
- an Engineer also submits, changes and deletes jobs of the kinds HyperPod runs (Kubernetes Jobs,
  Kubeflow PyTorchJobs, HyperPodPyTorchJobs, Ray jobs and clusters), and nothing that runs pods
  around Kueue: no pods, Deployments, StatefulSets or ReplicaSets;
- a ProjectLead also deletes and evicts the team's pods (to free the team's quota from a stuck or
  runaway job). Quotas, the queue and the members are the tree's (`projects/<team>.yaml`), changed
  by merge request: no persona changes ResourceQuotas, LocalQueues, Roles or RoleBindings here.

Every persona's EKS access policy is `AmazonEKSViewPolicy` scoped to the team namespace: it reads
pods, `pods/log`, events, batch jobs and quotas, and writes nothing (AWS's "Review access policy
permissions", https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html).
`AmazonEKSEditPolicy` would grant `create` on pods and Deployments, so it is never used. What the
policy cannot grant (the job custom resources, Kueue's objects, every write) is the persona's Role.
A row says who gets it and from where; the Role of a persona is its `ROLE` rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from hypergov.model.common import PERSONAS, Persona

ACCESS_POLICY: Final = "AmazonEKSViewPolicy"
ROLE: Final = "Role"
GrantedBy = Literal["AmazonEKSViewPolicy", "Role"]

READ = ("get", "list", "watch")
MANAGE = ("create", "delete", "patch", "update")  # patch/update: suspend, resume or rescale a job


@dataclass(frozen=True)
class MatrixRow:
    """One grant: verbs on resources of one API group ("" the core group), for some personas."""

    api_group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    personas: frozenset[Persona]
    granted_by: GrantedBy


EVERYONE: Final = frozenset(PERSONAS)
SUBMITTERS: Final[frozenset[Persona]] = frozenset({"Engineer", "ProjectLead"})
LEADS: Final[frozenset[Persona]] = frozenset({"ProjectLead"})

# The job kinds HyperPod runs on an EKS-orchestrated cluster, as (API group, resource).
JOB_KINDS: Final = (("batch", ("jobs",)), ("kubeflow.org", ("pytorchjobs",)),
                    ("sagemaker.amazonaws.com", ("hyperpodpytorchjobs",)), ("ray.io", ("rayclusters", "rayjobs")))

PERSONA_MATRIX: Final[tuple[MatrixRow, ...]] = (
    # batch jobs are read through the access policy; the custom job kinds only through the Role.
    MatrixRow("batch", ("jobs",), READ, EVERYONE, ACCESS_POLICY),
    *(MatrixRow(group, resources, READ, EVERYONE, ROLE) for group, resources in JOB_KINDS if group != "batch"),
    MatrixRow("kueue.x-k8s.io", ("localqueues", "workloads"), READ, EVERYONE, ROLE),
    MatrixRow("", ("events", "pods", "pods/log"), READ, EVERYONE, ACCESS_POLICY),
    MatrixRow("", ("limitranges", "resourcequotas"), READ, EVERYONE, ACCESS_POLICY),
    *(MatrixRow(group, resources, MANAGE, SUBMITTERS, ROLE) for group, resources in JOB_KINDS),
    MatrixRow("", ("pods",), ("delete",), LEADS, ROLE),
    MatrixRow("", ("pods/eviction",), ("create",), LEADS, ROLE),  # the Eviction API honours disruption budgets
)


def access_policy(persona: Persona) -> str:
    """The EKS access policy every persona's access entry is associated with, namespace-scoped."""
    del persona  # one for all: the personas differ by their Roles
    return ACCESS_POLICY


def role_rules(persona: Persona) -> list[dict[str, list[str]]]:
    """The persona's Role rules: its rows the access policy does not grant, one rule a row."""
    return [{"apiGroups": [row.api_group], "resources": list(row.resources), "verbs": list(row.verbs)}
            for row in PERSONA_MATRIX if row.granted_by == ROLE and persona in row.personas]
