"""Live drift of the Kubernetes objects hypergov manages on a cluster, decided without I/O.

Desired: every stack's `kubernetes:*` resources on the cluster, as the engine applies them
(`engines.kube.object_from_pulumi`: labelled `app.kubernetes.io/managed-by=hypergov` and with the
stack). Live: what one list call per kind returned (`Listing`):
- the kinds anyone may create in a team namespace (`hyperpod-ns-*`) to change what a team can do
  there (Role, RoleBinding, ResourceQuota, LimitRange, and whatever else the stacks declare in
  those namespaces on this cluster), listed whole: an object of these kinds in a team namespace
  that no stack declares is unmanaged, labelled or not (a RoleBinding made by hand that binds
  someone into a team's namespace is the case that matters);
- every other kind hypergov declares (cluster-scoped ones, Kueue's), listed by hypergov's label:
  an object labelled by hypergov that no stack declares now is unmanaged; the others are not
  hypergov's;
- on a cluster with HyperPod task governance, whose add-on owns Kueue and the team namespaces, Kueue's
  kinds and Namespaces are listed whole too: the add-on's own objects (`hypergov.hyperpod_addon`:
  made from the tree's quotas and scheduler config, named and labelled as AWS documents) are never
  unmanaged, any other Kueue object or `hyperpod-ns-*` Namespace is, since it would grant or shape
  capacity outside the compute quotas.

Compared as the engine plans (`engines.kube._comparable`): only the fields hypergov declares,
since the API server adds the rest (metadata, status, defaults), here also inside lists of the same
length, and quantities by value (the server renders `128` as `"128"`, `0.5` as `"500m"`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from engines.desired import DesiredKubeObject
from engines.kube import FIELD_MANAGER, MANAGED_BY_LABEL, STACK_LABEL, KubeKind, KubeObject
from engines.live.items import AttributeDrift, DriftItem, DriftKind, attribute
from engines.plan import diff_attributes
from hypergov import hyperpod_addon, naming
from hypergov.model.tree import GovernanceTree
from stacks.spec import StackSpec

TEAM_NAMESPACE_PREFIX = naming.namespace("")  # hyperpod-ns-
RBAC = "rbac.authorization.k8s.io/v1"
KUEUE = "kueue.x-k8s.io/v1beta1"
ADMISSION = "admissionregistration.k8s.io/v1"
# Listed whole in team namespaces: what grants access to a team namespace or bounds it.
TEAM_NAMESPACE_KINDS: tuple[KubeKind, ...] = ((RBAC, "Role"), (RBAC, "RoleBinding"), ("v1", "ResourceQuota"),
                                              ("v1", "LimitRange"))
# Every kind the components declare (a test keeps it complete): listed by label on every cluster
# with a kubeconfig, so that hypergov's objects of a kind no stack declares any more are found too.
MANAGED_KINDS: tuple[KubeKind, ...] = (
    *TEAM_NAMESPACE_KINDS, ("v1", "Namespace"), (ADMISSION, "ValidatingAdmissionPolicy"),
    (ADMISSION, "ValidatingAdmissionPolicyBinding"), (KUEUE, "ResourceFlavor"), (KUEUE, "WorkloadPriorityClass"),
    (KUEUE, "ClusterQueue"), (KUEUE, "LocalQueue"))
# Listed whole on a task-governance cluster: the kinds its add-on owns there (Kueue's, and the team
# Namespaces, of which only `hyperpod-ns-*` ones are hypergov's concern: `KubeCluster.governs`).
ADD_ON_GUARDED_KINDS: tuple[KubeKind, ...] = (("v1", "Namespace"), (KUEUE, "ResourceFlavor"),
                                              (KUEUE, "WorkloadPriorityClass"), (KUEUE, "ClusterQueue"),
                                              (KUEUE, "LocalQueue"))
MANAGED_SELECTOR = f"{MANAGED_BY_LABEL}=hypergov"
_IDENTITY = ("apiVersion", "kind")
_NOT_DECLARED = (*_IDENTITY, "metadata", "status")


def kube_type(api_version: str, kind: str) -> str:
    """The Pulumi type token of a kind (DriftItem.type): kubernetes:core/v1:ResourceQuota."""
    return f"kubernetes:{api_version if '/' in api_version else f'core/{api_version}'}:{kind}"


@dataclass(frozen=True)
class Listing:
    """One list call (paged) of one kind in all namespaces; `label_selector` None: every object."""

    api_version: str
    kind: str
    label_selector: str | None


@dataclass(frozen=True)
class KubeCluster:
    """What hypergov declares on one cluster's API server, and where the cluster is."""

    name: str
    stack: str  # its cluster stack: objects no project owns are attributed to it
    account: str
    region: str
    desired: tuple[DesiredKubeObject, ...]
    stacks: frozenset[str]  # every stack of the tree
    task_governance: bool = False
    # with task governance: what its add-on makes here (`hyperpod_addon.add_on_refs`), never unmanaged
    add_on: Mapping[tuple[str, str, str | None, str], hyperpod_addon.AddOnRef] = field(default_factory=dict)

    @property
    def team_namespace_kinds(self) -> frozenset[KubeKind]:
        declared = {(d.obj.api_version, d.obj.kind) for d in self.desired if _in_team_namespace(d.obj)}
        return frozenset(TEAM_NAMESPACE_KINDS) | declared

    @property
    def listed_whole(self) -> frozenset[KubeKind]:
        return self.team_namespace_kinds | (frozenset(ADD_ON_GUARDED_KINDS) if self.task_governance else frozenset())

    def listings(self) -> tuple[Listing, ...]:
        whole = self.listed_whole
        kinds = sorted({*MANAGED_KINDS, *((d.obj.api_version, d.obj.kind) for d in self.desired)})
        return tuple(Listing(v, k, None if (v, k) in whole else MANAGED_SELECTOR) for v, k in kinds)

    def unlisted(self, listed: Iterable[str]) -> list[DesiredKubeObject]:
        """Declared objects no listing returned whose kind was listed by label: read one by one,
        since one whose label was removed by hand is there and changed, not missing."""
        seen = set(listed)
        whole = self.listed_whole
        return [d for d in self.desired if d.obj.address not in seen and (d.obj.api_version, d.obj.kind) not in whole]

    def made_by_add_on(self, obj: KubeObject) -> bool:
        return self.task_governance and hyperpod_addon.made_by_add_on(
            self.add_on, api_version=obj.api_version, kind=obj.kind, namespace=obj.namespace, name=obj.name,
            labels=_labels(obj))

    def guarded_for_add_on(self, obj: KubeObject) -> bool:
        """An object of a kind the task-governance add-on owns here, where only the add-on makes them."""
        if not self.task_governance or (obj.api_version, obj.kind) not in ADD_ON_GUARDED_KINDS:
            return False
        return obj.kind != "Namespace" or obj.name.startswith(TEAM_NAMESPACE_PREFIX)

    def governs(self, obj: KubeObject) -> bool:
        """Whether a live object is hypergov's to report when no stack declares it (the add-on's never are)."""
        if self.made_by_add_on(obj):
            return False
        return _labels(obj).get(MANAGED_BY_LABEL) == "hypergov" or self.guarded_for_add_on(obj) or (
            (obj.api_version, obj.kind) in self.team_namespace_kinds and _in_team_namespace(obj))

    def owner(self, obj: KubeObject) -> str:
        """The stack an undeclared object is attributed to: the project owning its team namespace,
        else the stack its label names, else the cluster's."""
        if obj.namespace and _in_team_namespace(obj):
            project = naming.project_stack(obj.namespace.removeprefix(TEAM_NAMESPACE_PREFIX))
            if project in self.stacks:
                return project
        labelled = _labels(obj).get(STACK_LABEL)
        return labelled if labelled in self.stacks else self.stack


def kube_clusters(tree: GovernanceTree, specs: Sequence[StackSpec],
                  kube: Sequence[DesiredKubeObject]) -> list[KubeCluster]:
    """Every cluster of the tree with the Kubernetes objects the stacks declare on it."""
    org = tree.org.model if tree.org else None
    stacks = frozenset(s.name for s in specs)
    found = []
    for name, sourced in sorted(tree.clusters.items()):
        cluster = sourced.model
        account = org.account(cluster.account) if org else None
        found.append(KubeCluster(name=name, stack=naming.cluster_stack(name),
                                 account=str(account.id) if account else cluster.account,
                                 region=str(cluster.region or (org.home_region if org else "")),
                                 desired=tuple(d for d in kube if d.cluster == name), stacks=stacks,
                                 task_governance=cluster.task_governance, add_on=_add_on_objects(tree, name)))
    return found


def _add_on_objects(tree: GovernanceTree, name: str) -> dict[tuple[str, str, str | None, str],
                                                                hyperpod_addon.AddOnRef]:
    """What the task-governance add-on makes on cluster `name` from the tree (nothing on plain EKS)."""
    cluster = tree.clusters[name].model
    if not cluster.task_governance:
        return {}
    return hyperpod_addon.add_on_refs(
        teams=sorted(team for team, p in tree.projects.items() if name in p.model.quotas),
        priority_classes=[pc.name for pc in cluster.scheduler.priority_classes],
        instance_types=sorted(cluster.capacity))


def compare(cluster: KubeCluster, live: Iterable[KubeObject]) -> list[DriftItem]:
    """Every changed, missing and unmanaged object of one cluster (objects being deleted are gone)."""
    desired = {d.obj.address: d for d in cluster.desired}
    present = {o.address: o for o in live if not (o.body.get("metadata") or {}).get("deletionTimestamp")
               and (o.address in desired or cluster.governs(o))}
    items: list[DriftItem] = []
    for address, declared in sorted(desired.items()):
        found = present.get(address)
        if found is None:
            items.append(_item(cluster, declared.obj, declared.stack, "missing",
                               f"hypergov apply --stack {declared.stack} creates it"))
        elif changed := changed_attributes(declared.obj.body, found.body):
            items.append(_item(cluster, found, declared.stack, "changed",
                               f"hypergov apply --stack {declared.stack} restores it", attributes=changed))
    for address, found in sorted(present.items()):
        if address not in desired:
            stack = cluster.owner(found)
            attributes = tuple(attribute(k, None, v) for k, v in sorted(found.body.items()) if k not in _NOT_DECLARED)
            items.append(_item(cluster, found, stack, "unmanaged", _unmanaged_fix(cluster, found, stack),
                               attributes=attributes))
    return items


def changed_attributes(desired: Mapping[str, Any], live: Mapping[str, Any]) -> tuple[AttributeDrift, ...]:
    """The declared fields whose live value differs (dotted paths, lists whole), with both values."""
    want = {k: v for k, v in desired.items() if k not in _IDENTITY}
    have = declared_part(live, want)
    return tuple(attribute(c.path, c.after, c.before) for c in diff_attributes(have, want))


def declared_part(live: Any, want: Any) -> Any:
    """`live` cut down to the fields `want` declares; a quantity equal in value reads as declared."""
    if isinstance(want, Mapping) and isinstance(live, Mapping):
        return {k: declared_part(live.get(k), w) for k, w in want.items()}
    if isinstance(want, list) and isinstance(live, list) and len(want) == len(live):
        return [declared_part(have, w) for have, w in zip(live, want, strict=True)]
    scalar = want is not None and not isinstance(want, (bool, Mapping, list))
    return want if scalar and isinstance(live, str) and _same_quantity(want, live) else live


_SUFFIXES: dict[str, int | Decimal] = {  # binary, then decimal SI suffixes of a quantity
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": 10**3, "M": 10**6, "G": 10**9,
    "T": 10**12, "P": 10**15, "E": 10**18}


def quantity(value: Any) -> Decimal | None:
    """A Kubernetes resource quantity's value (`500m`, `1Gi`, `1e3`, `128`); None if it is not one."""
    text = str(value).strip()
    suffix = next((s for s in sorted(_SUFFIXES, key=len, reverse=True) if text.endswith(s)), "")
    try:
        parsed = Decimal(text[: len(text) - len(suffix)])
    except InvalidOperation:
        return None
    if not parsed.is_finite():
        return None
    return parsed * Decimal(_SUFFIXES[suffix]) if suffix else parsed


def _same_quantity(want: Any, live: str) -> bool:
    a, b = quantity(want), quantity(live)
    return a is not None and b is not None and a == b


def _labels(obj: KubeObject) -> Mapping[str, str]:
    return dict((obj.body.get("metadata") or {}).get("labels") or {})


def _in_team_namespace(obj: KubeObject) -> bool:
    return bool(obj.namespace and obj.namespace.startswith(TEAM_NAMESPACE_PREFIX))


def last_change(obj: KubeObject, *, by_others: bool) -> tuple[str | None, str | None]:
    """Who last wrote the object and when, as its managedFields say (a field manager, e.g.
    `kubectl-edit`; Kubernetes records no user there); `by_others`: not hypergov's own apply."""
    meta = obj.body.get("metadata") or {}
    entries = [e for e in meta.get("managedFields") or () if not (by_others and e.get("manager") == FIELD_MANAGER)]
    if not entries:  # an undeclared object written by no manager at all: when it was made, at least
        return None, (None if by_others else meta.get("creationTimestamp"))
    newest = max(entries, key=lambda e: str(e.get("time") or ""))
    manager = newest.get("manager")
    return (f"field manager {manager}" if manager else None), newest.get("time")


def _unmanaged_fix(cluster: KubeCluster, obj: KubeObject, stack: str) -> str:
    project = naming.project_stack("")
    declare = (f"projects/{stack.removeprefix(project)}.yaml" if stack.startswith(project)
               else f"clusters/{cluster.name}.yaml")
    if obj.kind in ("Role", "RoleBinding"):  # access to a team namespace comes from the project's members
        return f"delete it (hypergov drift --prune-unmanaged); grant access through the members in {declare}"
    if cluster.guarded_for_add_on(obj):  # hypergov declares none of these where the add-on makes them
        return ("delete it (hypergov drift --prune-unmanaged): on a task-governance cluster the HyperPod add-on "
                "makes the team namespaces and Kueue's objects from the compute quotas (projects/<team>.yaml) "
                f"and the scheduler config (clusters/{cluster.name}.yaml)")
    return f"delete it (hypergov drift --prune-unmanaged) or declare it in {declare}"


def _item(cluster: KubeCluster, obj: KubeObject, stack: str, drift: DriftKind, fix: str, *,
          attributes: tuple[AttributeDrift, ...] = ()) -> DriftItem:
    by, at = last_change(obj, by_others=drift == "changed") if drift != "missing" else (None, None)
    return DriftItem(kind=drift, stack=stack, address=obj.address, type=kube_type(obj.api_version, obj.kind),
                     account=cluster.account, region=cluster.region, fix=fix, attributes=attributes,
                     changed_by=by, changed_at=at, cluster=cluster.name,
                     ref={"apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name,
                          "namespace": obj.namespace or ""})
