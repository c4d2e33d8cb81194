"""Live drift of EKS access entries and their associated access policies, decided without I/O.

An access entry is how a team's IAM role becomes a Kubernetes identity on a governed cluster (it
maps a persona's role into its group, `hyperpod-ns-<team>-<persona>-group`); an access policy
association grants an EKS access policy cluster-wide or in listed namespaces. The desired
objects are the `aws:eks/accessEntry:AccessEntry` and `.../accessPolicyAssociation` resources of
every stack; the live ones are what DescribeAccessEntry and ListAssociatedAccessPolicies returned
(`LiveEntry`). Compared: what the desired object sets (groups and policy scopes as sets, tags as a
map), never what EKS fills in (the username, createdAt).

Unmanaged is only what hypergov governs: an entry nobody declares that maps a principal into a
team's group (a persona group, or HyperPod's own `hyperpod-ns-<team>-namespace-level-group`, which
HyperPod's Helm chart binds to a Role in the team namespace), has policies scoped to `hyperpod-ns-*`
namespaces or whose principal is a hypergov role (IAM path `/hypergov/` or `/hypergov-platform/`);
and a policy associated with a declared entry that nobody declares. The cluster creator's entry
and the node roles' entries (EKS makes EC2_LINUX entries itself) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.desired import DesiredObject, address_of, of_type
from engines.live.items import AttributeDrift, DriftItem, DriftKind, attribute
from hypergov import naming

ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
_TEAM_NAMESPACE = re.compile(r"hyperpod-ns-(?P<team>[a-z0-9-]+)")
_HYPERGOV_PATHS = (naming.ROLE_PATH, naming.PLATFORM_ADMIN_ROLE_PATH)
_ENTRY_KEYS = ("kubernetesGroups", "type", "tags")  # what a declared entry sets and EKS keeps as given


@dataclass(frozen=True)
class LivePolicy:
    policy_arn: str
    scope_type: str
    namespaces: tuple[str, ...]
    modified_at: str | None = None

    def scope(self) -> dict[str, Any]:
        return _scope(self.scope_type, self.namespaces)


@dataclass(frozen=True)
class LiveEntry:
    """One access entry as DescribeAccessEntry and ListAssociatedAccessPolicies returned it."""

    principal_arn: str
    type: str
    kubernetes_groups: tuple[str, ...]
    username: str
    tags: Mapping[str, str]
    modified_at: str | None
    policies: tuple[LivePolicy, ...] = ()


@dataclass(frozen=True)
class GovernedEksCluster:
    """One EKS cluster hypergov declares access on (or that the tree names), with its declarations."""

    cluster_name: str  # the EKS cluster's name
    account: str
    region: str
    cluster: str | None  # the tree's cluster (HyperPod name) this EKS cluster orchestrates, if the tree has it
    entries: Mapping[str, DesiredObject]  # principal ARN -> its declared access entry
    associations: Mapping[tuple[str, str], DesiredObject]  # (principal ARN, policy ARN) -> its declaration
    stacks: frozenset[str] = field(default_factory=frozenset)  # every stack of the tree (for attribution)


def governed_eks_clusters(desired: Sequence[DesiredObject], *, tree_clusters: Iterable[tuple[str, str, str, str]],
                          caller_account: str | None, stacks: Collection[str]) -> list[GovernedEksCluster]:
    """Every EKS cluster with declared access entries or associations, and every cluster of the tree
    (`tree_clusters`: (tree cluster, EKS cluster name, account, region)), each once."""
    places: dict[tuple[str, str, str], str | None] = {(a, r, eks): name for name, eks, a, r in tree_clusters}
    entries: dict[tuple[str, str, str], dict[str, DesiredObject]] = {}
    associations: dict[tuple[str, str, str], dict[tuple[str, str], DesiredObject]] = {}
    for obj in of_type(desired, ENTRY, ASSOCIATION):
        place = (obj.account or caller_account or "", obj.region, str(obj.input("clusterName")))
        places.setdefault(place, None)
        principal = str(obj.input("principalArn"))
        if obj.type == ENTRY:
            entries.setdefault(place, {})[principal] = obj
        else:
            associations.setdefault(place, {})[(principal, str(obj.input("policyArn")))] = obj
    return [GovernedEksCluster(cluster_name=eks, account=account, region=region, cluster=name,
                               entries=entries.get((account, region, eks), {}),
                               associations=associations.get((account, region, eks), {}), stacks=frozenset(stacks))
            for (account, region, eks), name in sorted(places.items())]


def _scope(kind: Any, namespaces: Iterable[str] | None) -> dict[str, Any]:
    """An access scope as compared: EKS returns `namespaces: []` for a cluster scope."""
    return {"type": kind, "namespaces": sorted(namespaces or [])}


def compare(cluster: GovernedEksCluster, live: Sequence[LiveEntry]) -> list[DriftItem]:
    """Every changed, missing and unmanaged access entry and association of one cluster."""
    present = {e.principal_arn: e for e in live}
    items: list[DriftItem] = []
    for principal, obj in sorted(cluster.entries.items()):
        found = present.get(principal)
        if found is None:
            items.append(_declared(cluster, obj, "missing", f"hypergov apply --stack {obj.stack} recreates it"))
        elif changed := entry_drift(obj, found):
            items.append(_declared(cluster, obj, "changed", f"hypergov apply --stack {obj.stack} restores it",
                                   attributes=changed, changed_at=found.modified_at))
    for (principal, policy_arn), obj in sorted(cluster.associations.items()):
        entry = present.get(principal)
        policy = next((p for p in entry.policies if p.policy_arn == policy_arn), None) if entry else None
        if policy is None:
            why = "" if entry else " (with its access entry)"
            items.append(_declared(cluster, obj, "missing", f"hypergov apply --stack {obj.stack} recreates it{why}"))
            continue
        want = declared_scope(obj)
        if want != policy.scope():
            items.append(_declared(cluster, obj, "changed", f"hypergov apply --stack {obj.stack} restores it",
                                   attributes=(attribute("accessScope", want, policy.scope()),),
                                   changed_at=policy.modified_at))
    for principal, found in sorted(present.items()):
        declared = cluster.entries.get(principal)
        if declared is None:
            if governs(found):
                items.append(_unmanaged_entry(cluster, found))
            continue
        for policy in found.policies:
            if (principal, policy.policy_arn) not in cluster.associations:
                items.append(_unmanaged_association(cluster, declared, found, policy))
    return items


def declared_scope(obj: DesiredObject) -> dict[str, Any]:
    scope = obj.input("accessScope") or {}
    return _scope(scope.get("type"), scope.get("namespaces"))


def entry_drift(obj: DesiredObject, live: LiveEntry) -> tuple[AttributeDrift, ...]:
    """The entry's attributes the declaration sets that differ live (groups as a set, tags as a map)."""
    have: dict[str, Any] = {"kubernetesGroups": sorted(live.kubernetes_groups), "type": live.type,
                            "tags": dict(live.tags)}
    drift = []
    for key in _ENTRY_KEYS:
        value = obj.input(key)
        if value is None:
            continue  # not set: EKS's default (a STANDARD entry, no groups, no tags) is not compared
        want = sorted(value) if key == "kubernetesGroups" else dict(value) if key == "tags" else value
        if want != have[key]:
            drift.append(attribute(key, want, have[key]))
    return tuple(drift)


def governs(entry: LiveEntry) -> bool:
    """Whether an undeclared entry is inside what hypergov governs (see the module docstring)."""
    return bool(_teams_of(entry)) or _principal_path(entry.principal_arn).startswith(_HYPERGOV_PATHS)


def _teams_of(entry: LiveEntry) -> list[str]:
    """The teams whose namespace group or namespaces the entry reaches, in order of appearance."""
    teams = [t for g in entry.kubernetes_groups if (t := naming.team_of_group(g))]
    teams += [m["team"] for p in entry.policies for ns in p.namespaces if (m := _TEAM_NAMESPACE.fullmatch(ns))]
    return list(dict.fromkeys(teams))


def _principal_path(principal_arn: str) -> str:
    """'arn:aws:iam::1:role/hypergov/acme-nlp-lead' -> '/hypergov/acme-nlp-lead' (the IAM path and name)."""
    return "/" + principal_arn.split(":", 5)[-1].split("/", 1)[-1] if "/" in principal_arn else ""


def _principal_name(principal_arn: str) -> str:
    return principal_arn.rsplit("/", 1)[-1]


def _owner(cluster: GovernedEksCluster, entry: LiveEntry) -> str:
    """The project stack owning the namespace or group the entry reaches, else the org's."""
    for team in _teams_of(entry):
        if naming.project_stack(team) in cluster.stacks:
            return naming.project_stack(team)
    return naming.org_stack()


def _where(cluster: GovernedEksCluster) -> str:
    return cluster.cluster or cluster.cluster_name


def _unmanaged_entry(cluster: GovernedEksCluster, entry: LiveEntry) -> DriftItem:
    stack = _owner(cluster, entry)
    declare_in = f"projects/{stack.removeprefix('project-')}.yaml" if stack != naming.org_stack() else "org.yaml"
    attributes = (attribute("principalArn", None, entry.principal_arn),
                  attribute("kubernetesGroups", None, sorted(entry.kubernetes_groups)),
                  attribute("type", None, entry.type),
                  *(attribute(f"associatedAccessPolicies.{p.policy_arn.rsplit('/', 1)[-1]}", None, p.scope())
                    for p in entry.policies))
    return _item(cluster, kind="unmanaged", stack=stack, type_token=ENTRY,
                 address=address_of(ENTRY, f"{_principal_name(entry.principal_arn)}@{_where(cluster)}"),
                 fix=f"delete it (hypergov drift --prune-unmanaged) or declare it in {declare_in}",
                 attributes=attributes, changed_at=entry.modified_at,
                 ref={"clusterName": cluster.cluster_name, "principalArn": entry.principal_arn})


def _unmanaged_association(cluster: GovernedEksCluster, declared: DesiredObject, entry: LiveEntry,
                           policy: LivePolicy) -> DriftItem:
    name = f"{_principal_name(entry.principal_arn)}-{policy.policy_arn.rsplit('/', 1)[-1]}@{_where(cluster)}"
    return _item(cluster, kind="unmanaged", stack=declared.stack, type_token=ASSOCIATION,
                 address=address_of(ASSOCIATION, name),
                 fix=f"hypergov drift --prune-unmanaged disassociates it (the stack {declared.stack} declares the "
                     f"entry, not this policy)",
                 attributes=(attribute("policyArn", None, policy.policy_arn),
                             attribute("accessScope", None, policy.scope())),
                 changed_at=policy.modified_at,
                 ref={"clusterName": cluster.cluster_name, "principalArn": entry.principal_arn,
                      "policyArn": policy.policy_arn})


def _declared(cluster: GovernedEksCluster, obj: DesiredObject, kind: DriftKind, fix: str, *,
              attributes: tuple[AttributeDrift, ...] = (), changed_at: str | None = None) -> DriftItem:
    return _item(cluster, kind=kind, stack=obj.stack, type_token=obj.type, address=obj.address, fix=fix,
                 attributes=attributes, changed_at=changed_at, ref={})


def _item(cluster: GovernedEksCluster, *, kind: DriftKind, stack: str, type_token: str, address: str, fix: str,
          attributes: tuple[AttributeDrift, ...], changed_at: str | None, ref: Mapping[str, str]) -> DriftItem:
    return DriftItem(kind=kind, stack=stack, address=address, type=type_token, account=cluster.account,
                     region=cluster.region, fix=fix, attributes=attributes, changed_at=changed_at,
                     cluster=cluster.cluster, ref=ref)
