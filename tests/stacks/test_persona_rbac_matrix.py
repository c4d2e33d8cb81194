"""The personas' powers in their team namespace, proven on what the project stacks of the example
tree (`config/`) declare: README.md's persona matrix is exactly what each persona can do there, and
no Engineer can create a Pod or a Deployment.

"Can" is decided by a small RBAC evaluator over the declared objects, the way the API server
decides it: a persona's identity is its access entry's Kubernetes groups; it may do what any Role
bound to one of those groups in the namespace allows (RBAC "rules are purely additive (there are no
"deny" rules)", https://kubernetes.io/docs/reference/access-authn-authz/rbac/), plus what the access
policies associated with its entry allow where their scope reaches. The access policies' grants are
AWS's documented tables, copied below from
https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html, not hypergov's
table read back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from components import namespace_access
from hypergov import naming
from hypergov.model.common import PERSONAS, Persona
from hypergov.model.tree import GovernanceTree
from stacks.resource_graph import GraphResource, ResourceGraph

README = Path(__file__).resolve().parents[2] / "README.md"
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
POLICY_PREFIX = "arn:aws:eks::aws:cluster-access-policy/"
# Kubernetes' API verbs on resources (https://kubernetes.io/docs/reference/access-authn-authz/authorization/#determine-the-request-verb).
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")

Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # (API groups, resources, verbs)
_READ = ("get", "list", "watch")
_WRITE = ("create", "delete", "deletecollection", "patch", "update")

# AmazonEKSViewPolicy, every row of AWS's table ("Each row of each table in each access policy is a
# separate rule"); "" is the core API group, shown empty on the page.
VIEW_POLICY: tuple[Rule, ...] = (
    (("apps",), ("controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                 "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
                 "statefulsets/scale", "statefulsets/status"), _READ),
    (("autoscaling",), ("horizontalpodautoscalers", "horizontalpodautoscalers/status"), _READ),
    (("batch",), ("cronjobs", "cronjobs/status", "jobs", "jobs/status"), _READ),
    (("discovery.k8s.io",), ("endpointslices",), _READ),
    (("extensions",), ("daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
                       "ingresses", "ingresses/status", "networkpolicies", "replicasets", "replicasets/scale",
                       "replicasets/status", "replicationcontrollers/scale"), _READ),
    (("networking.k8s.io",), ("ingresses", "ingresses/status", "networkpolicies"), _READ),
    (("policy",), ("poddisruptionbudgets", "poddisruptionbudgets/status"), _READ),
    (("",), ("configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
             "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
             "services/status"), _READ),
    (("",), ("bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
             "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"), _READ),
    (("",), ("namespaces",), _READ),
)
# AmazonEKSEditPolicy: its write rows that matter here (the same page; its read rows are the View ones).
EDIT_POLICY: tuple[Rule, ...] = (*VIEW_POLICY,
    (("apps",), ("daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
                 "replicasets/scale", "statefulsets", "statefulsets/scale"), _WRITE),
    (("batch",), ("cronjobs", "jobs"), _WRITE),
    (("",), ("pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"), _WRITE),
)
DOCUMENTED_POLICIES = {"AmazonEKSViewPolicy": VIEW_POLICY, "AmazonEKSEditPolicy": EDIT_POLICY}


def allows(rules: Iterable[Rule], *, api_group: str, resource: str, verb: str) -> bool:
    """Whether any rule allows the request (RBAC: `*` matches every group, resource or verb)."""
    return any((api_group in groups or "*" in groups) and (resource in resources or "*" in resources)
               and (verb in verbs or "*" in verbs) for groups, resources, verbs in rules)


@dataclass(frozen=True)
class Grants:
    """What one persona's principal is granted in one namespace, by where it comes from."""

    role: tuple[Rule, ...]
    access_policy: tuple[Rule, ...]

    def allows(self, api_group: str, resource: str, verb: str) -> bool:
        return allows((*self.role, *self.access_policy), api_group=api_group, resource=resource, verb=verb)


def grants(graph: ResourceGraph, *, place: Place) -> Grants:
    """Evaluate the declared objects of one stack for one persona's principal in its team namespace."""
    principal, cluster_name, namespace = place.principal, place.eks_cluster_name, naming.namespace(place.team)
    entries = [e for e in graph.of_type(ENTRY)
               if e.inputs["principalArn"] == principal and e.inputs["clusterName"] == cluster_name]
    groups = {g for e in entries for g in e.inputs.get("kubernetesGroups") or ()}
    bound = {b.inputs["roleRef"]["name"] for b in graph.of_type(BINDING) if _on(b, place.cluster)
             and b.inputs["metadata"]["namespace"] == namespace and b.inputs["roleRef"]["kind"] == "Role"
             and any(s["kind"] == "Group" and s["name"] in groups for s in b.inputs["subjects"])}
    role = tuple((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r["verbs"]))
                 for x in graph.of_type(ROLE) if _on(x, place.cluster)
                 and x.inputs["metadata"]["namespace"] == namespace and x.inputs["metadata"]["name"] in bound
                 for r in x.inputs["rules"])
    policy: list[Rule] = []
    for a in graph.of_type(ASSOCIATION):
        scope = a.inputs["accessScope"]
        if (a.inputs["principalArn"], a.inputs["clusterName"]) == (principal, cluster_name) and entries and (
                scope["type"] == "cluster" or namespace in scope["namespaces"]):
            policy += DOCUMENTED_POLICIES[a.inputs["policyArn"].removeprefix(POLICY_PREFIX)]
    return Grants(role=role, access_policy=tuple(policy))


def _on(obj: GraphResource, cluster: str) -> bool:
    """Whether a Kubernetes object is declared on the tree's cluster (its resource name's `@<cluster>`)."""
    return obj.name.rsplit("@", 1)[-1] == cluster


Row = namespace_access.MatrixRow  # a README row parsed into the code's own row type


def readme_matrix() -> list[Row]:
    """README.md's persona matrix table, parsed."""
    text = README.read_text()
    header = "| API group | resources | verbs | Viewer | Engineer | ProjectLead | granted by |"
    lines = text[text.index(header):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        group, resources, verbs, viewer, engineer, lead, granted_by = (c.strip() for c in line.strip("|").split("|"))
        ticked: dict[Persona, str] = {"Viewer": viewer, "Engineer": engineer, "ProjectLead": lead}
        rows.append(Row(api_group="" if group == "core" else group.strip("`"),
                        resources=tuple(r.strip(" `") for r in resources.split(",")),
                        verbs=tuple(v.strip() for v in verbs.split(",")),
                        personas=frozenset(p for p, mark in ticked.items() if mark == "✓"),
                        granted_by=cast(namespace_access.GrantedBy, granted_by)))
    return rows


def _cells(rows: Sequence[Row], persona: Persona, *, granted_by: str | None = None) -> set[tuple[str, str, str]]:
    return {(r.api_group, res, v) for r in rows if persona in r.personas and granted_by in (None, r.granted_by)
            for res in r.resources for v in r.verbs}


@dataclass(frozen=True)
class Place:
    """One persona of one team on one cluster of the tree."""

    team: str
    persona: Persona
    principal: str  # the persona's IAM role there, or its permission set's role
    cluster: str  # the tree's name (Kubernetes objects are declared as `...@<cluster>`)
    eks_cluster_name: str

    def grants(self, graphs: dict[str, ResourceGraph]) -> Grants:
        return grants(graphs[naming.project_stack(self.team)], place=self)


def _places(tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> list[Place]:
    """Every persona with members of every team on every cluster the team has quota on, once per
    way in: its IAM role (IAM members) and its permission set's role (Identity Center members,
    whose ARN the graph reads back from IAM: the placeholder of that read)."""
    org = tree.org.model  # type: ignore[union-attr]
    found = []
    for team, project in sorted(tree.projects.items()):
        for cluster in sorted(project.model.quotas):
            model = tree.clusters[cluster].model
            account = org.account(model.account)
            assert account is not None
            for persona in PERSONAS:
                members = project.model.members.of(persona)
                principals = []
                if any(m.startswith("arn:") for m in members):
                    principals.append(f"arn:aws:iam::{account.id}:role{naming.ROLE_PATH}"
                                      f"{naming.role_name(org.name, team, persona)}")
                if any(m.startswith("identitycenter:") for m in members):
                    entry = graphs[naming.project_stack(team)].named(
                        f"access-sso-{naming.PERSONA_SLUG[persona]}@{cluster}")
                    principals.append(str(entry.inputs["principalArn"]))
                found += [Place(team=team, persona=persona, cluster=cluster, eks_cluster_name=model.eks.cluster_name,
                                principal=principal) for principal in principals]
    return found


def test_the_readme_matrix_is_the_one_the_roles_are_made_from() -> None:
    assert readme_matrix() == list(namespace_access.PERSONA_MATRIX)


def test_every_persona_can_do_exactly_the_readme_matrix_in_its_namespace(
        tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    matrix = readme_matrix()
    resources = {(r.api_group, res) for r in matrix for res in r.resources}
    places = _places(tree, graphs)
    assert {p.persona for p in places} == set(PERSONAS)  # the example exercises every persona
    for place in places:
        got = place.grants(graphs)
        can = {(g, r, v) for g, r in resources for v in VERBS if got.allows(g, r, v)}
        assert can == _cells(matrix, place.persona), place
        by_role = {(g, r, v) for g, r in resources for v in VERBS if allows(got.role, api_group=g, resource=r, verb=v)}
        assert by_role == _cells(matrix, place.persona, granted_by="Role"), place
        from_policy = _cells(matrix, place.persona, granted_by="AmazonEKSViewPolicy")
        assert from_policy and all(allows(got.access_policy, api_group=g, resource=r, verb=v)
                                   for g, r, v in from_policy), place



def test_a_higher_persona_can_do_everything_a_lower_one_can() -> None:
    """IDN008 tells a principal bound to two personas that "the higher one includes the lower":
    Viewer < Engineer < ProjectLead must hold row by row."""
    for row in readme_matrix():
        assert "Viewer" not in row.personas or "Engineer" in row.personas, row
        assert "Engineer" not in row.personas or "ProjectLead" in row.personas, row

# What would run pods around Kueue, or change what the tree governs (quota, queue, access).
FORBIDDEN_WRITES = [
    pytest.param("", "pods", id="pods"),
    pytest.param("apps", "deployments", id="deployments"),
    pytest.param("apps", "statefulsets", id="statefulsets"),
    pytest.param("apps", "replicasets", id="replicasets"),
    pytest.param("", "resourcequotas", id="resourcequotas"),
    pytest.param("kueue.x-k8s.io", "localqueues", id="localqueues"),
    pytest.param("rbac.authorization.k8s.io", "rolebindings", id="rolebindings"),
]


@pytest.mark.parametrize(("api_group", "resource"), FORBIDDEN_WRITES)
def test_no_persona_can_create_pods_or_workloads_or_change_governed_objects(
        tree: GovernanceTree, graphs: dict[str, ResourceGraph], api_group: str, resource: str) -> None:
    for place in _places(tree, graphs):
        got = place.grants(graphs)
        assert not got.allows(api_group, resource, "create"), place
        assert not got.allows(api_group, resource, "update"), place


def test_an_engineer_cannot_create_a_pod_or_a_deployment_but_can_submit_a_job(
        tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    engineers = [p for p in _places(tree, graphs) if p.persona == "Engineer"]
    assert engineers
    for place in engineers:
        got = place.grants(graphs)
        assert not got.allows("", "pods", "create")
        assert not got.allows("apps", "deployments", "create")
        assert got.allows("sagemaker.amazonaws.com", "hyperpodpytorchjobs", "create")
        assert got.allows("kubeflow.org", "pytorchjobs", "create")


def test_the_evaluator_sees_a_pod_create_where_aws_documents_one() -> None:
    """The negative control: with the EditPolicy the project layer used before, an engineer could
    create pods and Deployments; the evaluator must say so, or its "cannot" above proves nothing."""
    assert allows(EDIT_POLICY, api_group="", resource="pods", verb="create")
    assert allows(EDIT_POLICY, api_group="apps", resource="deployments", verb="create")
    assert not allows(VIEW_POLICY, api_group="", resource="pods", verb="create")


def test_each_persona_is_mapped_into_its_own_group_with_the_view_policy_in_its_namespace_only(
        tree: GovernanceTree, graphs: dict[str, ResourceGraph]) -> None:
    for place in _places(tree, graphs):
        graph, where = graphs[naming.project_stack(place.team)], (place.principal, place.eks_cluster_name)
        (entry,) = [e for e in graph.of_type(ENTRY) if (e.inputs["principalArn"], e.inputs["clusterName"]) == where]
        assert entry.inputs["kubernetesGroups"] == [naming.persona_group(place.team, place.persona)]
        (association,) = [a for a in graph.of_type(ASSOCIATION)
                          if (a.inputs["principalArn"], a.inputs["clusterName"]) == where]
        assert association.inputs["policyArn"] == POLICY_PREFIX + "AmazonEKSViewPolicy"
        assert association.inputs["accessScope"] == {"type": "namespace", "namespaces": [naming.namespace(place.team)]}
    groups = {naming.persona_group("vision", p) for p in PERSONAS}
    assert len(groups) == len(PERSONAS)  # one group a persona: a binding to one never reaches another


@pytest.mark.parametrize(("group", "team"), [
    pytest.param("hyperpod-ns-vision-engineer-group", "vision", id="persona-group"),
    pytest.param("hyperpod-ns-nlp-x-lead-viewer-group", "nlp-x-lead", id="team-name-ending-in-a-slug"),
    pytest.param("hyperpod-ns-speech-namespace-level-group", "speech", id="hyperpods-own-team-group"),
    pytest.param("hyperpod-scientist-user-namespace-level", None, id="hyperpods-example-group"),
    pytest.param("ops", None, id="any-other-group"),
])
def test_the_team_of_a_group(group: str, team: str | None) -> None:
    assert naming.team_of_group(group) == team

