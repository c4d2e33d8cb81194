"""The live scan of the Kubernetes objects hypergov manages (`engines.live.kubernetes`).

No kube-apiserver can run on this machine, so each cluster is the fake `KubeApi` of
`tests.engines.kube_fakes` (the seam is one Protocol: list a kind a page at a time, get one
object, delete one). What crosses it is checked instead: the live objects are the example tree's
own declared manifests (`object_from_pulumi`, as the engine applies them) as the API server returns
them, with the fields the server adds (uid, resourceVersion, managedFields, status, the defaults
of the Kubernetes API reference and of Kueue's CRDs in `tests/schemas/kueue`, quantities rendered
as strings), plus objects made by hand; every one of them is validated against the real schemas
(`tests.components.test_kubernetes_schemas.errors_of`: kubernetes-validate for core kinds, the
Kueue CRDs for Kueue's). Expected values are written from the config files (accounts, regions,
teams) and the Kubernetes API's shapes.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engines.kube import DynamicKubeApi, KubeApi, KubeObject
from engines.live import kubernetes
from engines.live.items import AttributeDrift, DriftItem, LiveScan
from engines.live.kubernetes_compare import MANAGED_KINDS, TEAM_NAMESPACE_KINDS, declared_part, kube_type
from engines.live.runner import CallCounter, ScanContext, pruning_client
from engines.live.scan import PRUNERS, scan_context, scan_with
from engines.settings import load_settings
from tests.components.test_kubernetes_schemas import errors_of
from tests.components.test_kubernetes_schemas import objects as declared_manifests
from tests.engines.kube_fakes import FakeCluster
from tests.example_tree import example_tree

RBAC = "rbac.authorization.k8s.io/v1"
APPLIED = "2025-03-04T10:30:00Z"
EDITED = "2025-03-05T08:15:00Z"
PLACES = {"gpu-west": ("111122223333", "us-west-2"), "trn-east": ("444455556666", "us-east-1")}  # clusters/*.yaml


def _meta(obj: Mapping[str, Any], manager: str, time: str, *, operation: str = "Apply") -> dict[str, Any]:
    """The metadata the API server returns: identity, versions and who wrote which fields."""
    meta = copy.deepcopy(dict(obj["metadata"]))
    meta.update(uid=f"uid-{meta['name']}", resourceVersion="4711", creationTimestamp=time, generation=1,
                managedFields=[{"manager": manager, "operation": operation, "apiVersion": obj["apiVersion"],
                                "time": time, "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}])
    return meta


def served(obj: KubeObject) -> KubeObject:
    """A declared manifest as the API server returns it after hypergov's server-side apply."""
    body = copy.deepcopy(dict(obj.body))
    body["metadata"] = _meta(body, "hypergov", APPLIED)
    spec = body.get("spec") or {}
    if obj.kind == "Namespace":  # the automatic name label (since 1.21), the kubernetes finalizer
        body["metadata"]["labels"]["kubernetes.io/metadata.name"] = obj.name
        body.update(spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"})
    elif obj.kind == "ResourceQuota":
        body["status"] = {"hard": dict(spec["hard"]), "used": {k: "0" for k in spec["hard"]}}
    elif obj.kind == "ValidatingAdmissionPolicy":  # API reference defaults
        constraints = spec["matchConstraints"]
        constraints.update(matchPolicy="Equivalent", namespaceSelector={}, objectSelector={})
        for rule in constraints["resourceRules"]:
            rule["scope"] = "*"
    elif obj.kind == "ValidatingAdmissionPolicyBinding":
        spec["matchResources"].update(matchPolicy="Equivalent", objectSelector={})
    elif obj.kind == "ClusterQueue":  # Kueue CRD defaults; quantities come back as strings
        spec["stopPolicy"] = "None"
        for group in spec["resourceGroups"]:
            for flavor in group["flavors"]:
                for resource in flavor["resources"]:
                    for key in ("nominalQuota", "borrowingLimit"):
                        if key in resource:
                            resource[key] = str(resource[key])
    elif obj.kind == "LocalQueue":
        spec["stopPolicy"] = "None"
    return dataclasses.replace(obj, body=body)


def made_by_hand(api_version: str, kind: str, name: str, namespace: str | None, manager: str = "kubectl-create",
                 labels: Mapping[str, str] | None = None, **fields: Any) -> KubeObject:
    metadata: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {}),
                                **({"labels": dict(labels)} if labels else {})}
    body = {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}
    body["metadata"] = _meta(body, manager, EDITED, operation="Update")
    assert errors_of(body) == [], errors_of(body)
    return KubeObject(api_version, kind, name, namespace, body)


ALICE_ADMIN = {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]}


KUEUE = "kueue.x-k8s.io/v1beta1"
ADD_ON_MANAGER = "sagemaker"  # a field manager no document names; nothing here depends on it
# What the task-governance add-on makes from the tree on gpu-west (clusters/gpu-west.yaml: task_governance
# true), typed from the config files and named and labelled as these documents show:
# - per team with a gpu-west quota (projects/{nlp,recsys,speech,vision}.yaml) a Namespace 'hyperpod-ns-<team>'
#   (aws/sagemaker-hyperpod-cli, examples/end_to_end_walkthrough/00-getting-started/00-setup.md: "the
#   corresponding Kubernetes namespaces ... `hyperpod-ns-team-a` and `hyperpod-ns-team-b` are created"),
#   labelled sagemaker.amazonaws.com/sagemaker-managed-queue=true and quota-allocation-id=<team>
#   (src/sagemaker/hyperpod/cli/clients/kubernetes_client.py, commands/cluster.py) and activate-quota=Enabled
#   (https://awslabs.github.io/ai-on-sagemaker-hyperpod/docs/eks-orchestration/add-ons/Spaces-Node-Overprovisioning/
#   namespace-and-priorityclass: the admission policy "applies to any namespace carrying both");
# - 'hyperpod-ns-<team>-clusterqueue' and 'hyperpod-ns-<team>-localqueue' (command_constants.py:
#   "SAGEMAKER_MANAGED_LOCAL_QUEUE_SUFFIX = \"-localqueue\"", "SAGEMAKER_MANAGED_CLUSTER_QUEUE_SUFFIX = ...");
# - per scheduler priority class '<name>-priority' (aws-samples/awsome-distributed-training, task-governance/
#   1-imagenet-gpu-team-a.yaml: "kueue.x-k8s.io/priority-class: training-priority" for class 'training');
# - per instance type a ResourceFlavor named as the type (00-task-governance.md: flavorsUsage "ml.g5.12xlarge");
# - the ValidatingAdmissionPolicy 'hyperpod-task-governance-admission-policy' (the awslabs page above).
GPU_WEST_TEAMS = ("nlp", "recsys", "speech", "vision")
GPU_WEST_PRIORITY_CLASSES = (("inference", 100), ("training", 60), ("experimentation", 20))
GPU_WEST_TYPES = ("ml.p5.48xlarge", "ml.g5.12xlarge")


def made_by_the_add_on() -> list[KubeObject]:
    found = []
    for team in GPU_WEST_TEAMS:
        ns = f"hyperpod-ns-{team}"
        found += [
            made_by_hand("v1", "Namespace", ns, None, manager=ADD_ON_MANAGER, labels={
                "sagemaker.amazonaws.com/sagemaker-managed-queue": "true",
                "sagemaker.amazonaws.com/quota-allocation-id": team,
                "sagemaker.amazonaws.com/activate-quota": "Enabled"}),
            made_by_hand(KUEUE, "ClusterQueue", f"{ns}-clusterqueue", None, manager=ADD_ON_MANAGER, spec={
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                    {"name": "ml.p5.48xlarge", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}),
            made_by_hand(KUEUE, "LocalQueue", f"{ns}-localqueue", ns, manager=ADD_ON_MANAGER,
                         spec={"clusterQueue": f"{ns}-clusterqueue"})]
    found += [made_by_hand(KUEUE, "WorkloadPriorityClass", f"{name}-priority", None, manager=ADD_ON_MANAGER,
                           value=weight) for name, weight in GPU_WEST_PRIORITY_CLASSES]
    found += [made_by_hand(KUEUE, "ResourceFlavor", itype, None, manager=ADD_ON_MANAGER,
                           spec={"nodeLabels": {"node.kubernetes.io/instance-type": itype}})
              for itype in GPU_WEST_TYPES]
    found.append(made_by_hand(
        "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "hyperpod-task-governance-admission-policy",
        None, manager=ADD_ON_MANAGER, spec={"validations": [{
            "expression": "has(object.metadata.labels) && 'kueue.x-k8s.io/queue-name' in object.metadata.labels"}]}))
    return found


def foreign(cluster: str) -> list[KubeObject]:
    """What others keep on the clusters, never reported: RBAC outside team namespaces, EKS's own
    admission policy, and on gpu-west what HyperPod task governance's add-on makes."""
    found = [made_by_hand(RBAC, "RoleBinding", "aws-node", "kube-system", manager="eks", **ALICE_ADMIN),
             made_by_hand("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "eks-policy", None,
                          manager="eks", spec={"validations": [{"expression": "true"}]})]
    return found + (made_by_the_add_on() if cluster == "gpu-west" else [])


@pytest.fixture(scope="module")
def context() -> ScanContext:
    return scan_context(example_tree(), cache_dir=None)


@pytest.fixture(scope="module")
def applied(context: ScanContext) -> dict[str, list[KubeObject]]:
    """Each cluster's live objects after an apply of the example tree, with others' beside hypergov's."""
    found: dict[str, list[KubeObject]] = {name: foreign(name) for name in PLACES}
    for declared in context.kube:
        live = served(declared.obj)
        assert errors_of(live.body) == [], (live.address, errors_of(live.body))
        found[declared.cluster].append(live)
    return found


@pytest.fixture
def clusters(applied: dict[str, list[KubeObject]]) -> dict[str, FakeCluster]:
    found = {name: FakeCluster() for name in PLACES}
    for name, objs in applied.items():
        found[name].live = {o.address: dataclasses.replace(o, body=copy.deepcopy(dict(o.body))) for o in objs}
    return found


def scan(context: ScanContext, clusters: Mapping[str, KubeApi]) -> LiveScan:
    apis: dict[str, Callable[[], KubeApi]] = {name: (lambda api=api: api) for name, api in clusters.items()}

    def no_aws(service: str, account: str | None, region: str) -> Any:
        raise AssertionError(f"no AWS client is needed ({service})")

    return scan_with(dataclasses.replace(context, kube_apis=apis), no_aws, services=(kubernetes.units,))


def test_all_declared_objects_live_report_nothing_with_one_call_per_kind(context: ScanContext,
                                                                        clusters: dict[str, FakeCluster]) -> None:
    result = scan(context, clusters)
    assert result.complete and result.items == () and result.not_read == ()
    assert result.calls_by_service == {"kubernetes": 2 * 11}  # 11 kinds a cluster, one page each
    whole = {(RBAC, "Role"), (RBAC, "RoleBinding"), ("v1", "ResourceQuota"), ("v1", "LimitRange")}
    for name, fake in clusters.items():
        by_kind = {(v, k) for v, k, ns, selector in fake.listings if selector is None}
        assert all(ns is None for _, _, ns, _ in fake.listings)  # all namespaces at once, never one each
        # the LocalQueues hypergov declares in trn-east's team namespaces are listed whole; on gpu-west
        # the task-governance add-on owns Kueue and the team namespaces: their kinds are listed whole
        add_on_kinds = {("v1", "Namespace"), *((KUEUE, k) for k in (
            "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "ResourceFlavor"))}
        assert by_kind == whole | ({(KUEUE, "LocalQueue")} if name == "trn-east" else add_on_kinds)
        labelled = {selector for *_, selector in fake.listings if selector is not None}
        assert labelled == {"app.kubernetes.io/managed-by=hypergov"}


def test_listings_are_paged_and_counted_per_page(context: ScanContext, clusters: dict[str, FakeCluster]) -> None:
    one = made_by_hand(RBAC, "RoleBinding", "system-0", "kube-system", manager="kube-controller-manager",
                       **ALICE_ADMIN)
    for i in range(1200):  # kube-system's RoleBindings are listed too (all namespaces), 500 a page
        obj = dataclasses.replace(one, name=f"system-{i}",
                                  body={**one.body, "metadata": {**one.body["metadata"], "name": f"system-{i}"}})
        clusters["gpu-west"].live[obj.address] = obj
    result = scan(context, clusters)
    assert result.complete and result.items == ()
    assert result.calls_by_service == {"kubernetes": 2 * 11 + 2}  # 1,200 + 1 RoleBindings: 3 pages, not 1


def test_a_rolebinding_made_by_hand_in_a_team_namespace_is_unmanaged_and_pruned(
        context: ScanContext, clusters: dict[str, FakeCluster]) -> None:
    binding = made_by_hand(RBAC, "RoleBinding", "alice-admin", "hyperpod-ns-nlp", **ALICE_ADMIN)
    clusters["gpu-west"].live[binding.address] = binding
    result = scan(context, clusters)
    assert result.items == (DriftItem(
        kind="unmanaged", stack="project-nlp",
        address="kubernetes:rbac.authorization.k8s.io/v1/RoleBinding:hyperpod-ns-nlp/alice-admin",
        type="kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", account="111122223333", region="us-west-2",
        fix="delete it (hypergov drift --prune-unmanaged); grant access through the members in projects/nlp.yaml",
        attributes=(AttributeDrift("roleRef", None, ALICE_ADMIN["roleRef"]),
                    AttributeDrift("subjects", None, ALICE_ADMIN["subjects"])),
        changed_by="field manager kubectl-create", changed_at=EDITED, cluster="gpu-west"),)
    item = result.items[0]
    pruner = PRUNERS[item.type]
    apis = {name: (lambda api=api: api) for name, api in clusters.items()}
    calls = CallCounter()
    pruner.delete(pruning_client(pruner, item, lambda *a: None, apis), item, calls)
    assert calls.by_service == {"kubernetes": 1}
    assert clusters["gpu-west"].calls == [f"delete {binding.address}"]
    assert scan(context, clusters).items == ()


def test_a_resourcequota_edited_by_hand_is_changed_with_the_path(context: ScanContext,
                                                                 clusters: dict[str, FakeCluster]) -> None:
    address = "kubernetes:v1/ResourceQuota:hyperpod-ns-nlp/hypergov-workload-limits"
    live = clusters["gpu-west"].live[address]
    body = copy.deepcopy(dict(live.body))
    body["spec"]["hard"]["requests.nvidia.com/gpu"] = "200"  # projects/nlp.yaml's workload classes say 96
    body["metadata"]["managedFields"].append({"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1",
                                              "time": EDITED, "fieldsType": "FieldsV1", "fieldsV1": {}})
    assert errors_of(body) == []
    clusters["gpu-west"].live[address] = dataclasses.replace(live, body=body)
    (item,) = scan(context, clusters).items
    assert (item.kind, item.stack, item.address, item.cluster) == ("changed", "project-nlp", address, "gpu-west")
    assert item.attributes == (AttributeDrift("spec.hard.requests.nvidia.com/gpu", "96", "200"),)
    assert (item.changed_by, item.changed_at) == ("field manager kubectl-edit", EDITED)
    assert item.fix == "hypergov apply --stack project-nlp restores it"


def test_a_declared_role_deleted_is_missing(context: ScanContext, clusters: dict[str, FakeCluster]) -> None:
    address = "kubernetes:rbac.authorization.k8s.io/v1/Role:hyperpod-ns-research/hyperpod-ns-research-lead-role"
    del clusters["trn-east"].live[address]
    (item,) = scan(context, clusters).items
    assert item == DriftItem(kind="missing", stack="project-research", address=address,
                             type="kubernetes:rbac.authorization.k8s.io/v1:Role", account="444455556666",
                             region="us-east-1", fix="hypergov apply --stack project-research creates it",
                             cluster="trn-east")


def test_a_label_removed_by_hand_is_changed_not_missing(context: ScanContext,
                                                         clusters: dict[str, FakeCluster]) -> None:
    """ValidatingAdmissionPolicies are listed by hypergov's label: one without it is read by name."""
    address = "kubernetes:admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy:hypergov-vision-workload-classes"
    live = clusters["gpu-west"].live[address]
    body = copy.deepcopy(dict(live.body))
    del body["metadata"]["labels"]["app.kubernetes.io/managed-by"]
    clusters["gpu-west"].live[address] = dataclasses.replace(live, body=body)
    result = scan(context, clusters)
    (item,) = result.items
    assert (item.kind, item.stack) == ("changed", "project-vision")
    assert item.attributes == (AttributeDrift("metadata.labels.app.kubernetes.io/managed-by", "hypergov", None),)
    assert result.calls_by_service == {"kubernetes": 2 * 11 + 1}  # one get, for that object only


def test_labelled_objects_no_stack_declares_any_more_are_unmanaged(context: ScanContext,
                                                                   clusters: dict[str, FakeCluster]) -> None:
    labels = {"app.kubernetes.io/managed-by": "hypergov", "hypergov.dev/stack": "project-speech"}
    left = made_by_hand("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy",
                        "hypergov-speech-old-classes", None, labels=labels,
                        spec={"validations": [{"expression": "true"}]})
    queue = made_by_hand("kueue.x-k8s.io/v1beta1", "LocalQueue", "hyperpod-ns-gone-localqueue", "hyperpod-ns-gone",
                         labels={**labels, "hypergov.dev/stack": "project-gone"},
                         spec={"clusterQueue": "hyperpod-ns-gone-clusterqueue"})
    clusters["gpu-west"].live[left.address] = left
    clusters["trn-east"].live[queue.address] = queue
    items = scan(context, clusters).items
    assert [(i.kind, i.stack, i.address, i.cluster) for i in items] == [
        ("unmanaged", "cluster-trn-east", queue.address, "trn-east"),  # its project is not in the tree
        ("unmanaged", "project-speech", left.address, "gpu-west")]
    assert items[0].fix == "delete it (hypergov drift --prune-unmanaged) or declare it in clusters/trn-east.yaml"


def test_the_add_ons_objects_are_not_unmanaged_but_hand_made_ones_of_their_kinds_are(
        context: ScanContext, clusters: dict[str, FakeCluster]) -> None:
    """On gpu-west (task governance) the add-on's objects are live beside hypergov's and nothing is
    reported; objects of the same kinds made by hand, which would grant or shape capacity outside
    the compute quotas, are unmanaged."""
    add_on = {o.address for o in made_by_the_add_on()}
    assert add_on <= set(clusters["gpu-west"].live) and len(add_on) == 4 * 3 + 3 + 2 + 1
    assert scan(context, clusters).items == ()
    side_queue = made_by_hand(KUEUE, "LocalQueue", "side-queue", "hyperpod-ns-nlp",
                              spec={"clusterQueue": "side-door"})
    side_door = made_by_hand(KUEUE, "ClusterQueue", "side-door", None, spec={})
    urgent = made_by_hand(KUEUE, "WorkloadPriorityClass", "urgent", None, value=1000)
    ghost = made_by_hand("v1", "Namespace", "hyperpod-ns-ghost", None)
    scratch = made_by_hand("v1", "Namespace", "scratch", None)  # not a team namespace: not hypergov's concern
    for obj in (side_queue, side_door, urgent, ghost, scratch):
        clusters["gpu-west"].live[obj.address] = obj
    items = scan(context, clusters).items
    assert sorted((i.kind, i.stack, i.address) for i in items) == sorted([
        ("unmanaged", "cluster-gpu-west", side_door.address),
        ("unmanaged", "project-nlp", side_queue.address),
        ("unmanaged", "cluster-gpu-west", urgent.address),
        ("unmanaged", "cluster-gpu-west", ghost.address)])
    assert next(i for i in items if i.address == side_door.address).fix == (
        "delete it (hypergov drift --prune-unmanaged): on a task-governance cluster the HyperPod add-on makes the "
        "team namespaces and Kueue's objects from the compute quotas (projects/<team>.yaml) and the scheduler "
        "config (clusters/gpu-west.yaml)")


def test_a_namespace_named_as_the_add_ons_without_its_labels_is_unmanaged(
        context: ScanContext, clusters: dict[str, FakeCluster]) -> None:
    """The add-on labels the namespaces it makes (sagemaker-managed-queue=true, quota-allocation-id);
    one with the name alone was not made by it."""
    impostor = made_by_hand("v1", "Namespace", "hyperpod-ns-speech", None)
    clusters["gpu-west"].live[impostor.address] = impostor
    (item,) = scan(context, clusters).items
    assert (item.kind, item.stack, item.address) == ("unmanaged", "cluster-gpu-west", impostor.address)


def test_the_add_ons_namespace_of_a_team_that_left_the_tree_is_not_unmanaged(
        context: ScanContext, clusters: dict[str, FakeCluster]) -> None:
    """Until the add-on deletes it with the team's compute quota, the namespace stays, with the
    add-on's mark (sagemaker-managed-queue=true, aws/sagemaker-hyperpod-cli's kubernetes_client.py):
    pruning it would delete the team's jobs."""
    left = made_by_hand("v1", "Namespace", "hyperpod-ns-gone", None, manager=ADD_ON_MANAGER, labels={
        "sagemaker.amazonaws.com/sagemaker-managed-queue": "true",
        "sagemaker.amazonaws.com/quota-allocation-id": "gone"})
    clusters["gpu-west"].live[left.address] = left
    assert scan(context, clusters).items == ()


def test_hypergov_declares_nothing_the_add_on_makes_on_a_task_governance_cluster(context: ScanContext) -> None:
    """What the add-on makes is its own: a declared object there would fight it (the two would
    overwrite each other's fields)."""
    add_on = {(o.kind, o.namespace, o.name) for o in made_by_the_add_on()}
    declared = {(d.obj.kind, d.obj.namespace, d.obj.name) for d in context.kube if d.cluster == "gpu-west"}
    assert declared and not (declared & add_on)


def test_a_cluster_whose_listing_fails_leaves_the_scan_incomplete(context: ScanContext,
                                                                  clusters: dict[str, FakeCluster]) -> None:
    clusters["trn-east"].list_error = ConnectionError("trn-east-eks API unreachable")
    del clusters["gpu-west"].live["kubernetes:v1/LimitRange:hyperpod-ns-vision/hypergov-workload-limits"]
    result = scan(context, clusters)
    assert not result.complete
    assert [(f.stack, f.what) for f in result.failures] == [("cluster-trn-east",
                                                             "Kubernetes objects of cluster trn-east")]
    assert [(i.kind, i.cluster) for i in result.items] == [("missing", "gpu-west")]  # the other one is reported


def test_a_cluster_without_a_kubeconfig_has_no_unit_and_is_named_not_read(context: ScanContext,
                                                                          clusters: dict[str, FakeCluster]) -> None:
    result = scan(context, {"gpu-west": clusters["gpu-west"]})
    assert result.complete and result.items == ()
    assert result.not_read == ("Kubernetes objects of cluster trn-east: no kubeconfig configured "
                               "(settings kubeconfigs)",)
    assert clusters["trn-east"].listings == []
    assert [u.what for u in kubernetes.units(context)] == []  # no kubeconfig at all: no unit


def test_quantities_compare_by_value() -> None:
    want = {"hard": {"cpu": "0.5", "memory": "1Gi", "gpu": 128}}
    assert declared_part({"hard": {"cpu": "500m", "memory": "1073741824", "gpu": "128", "pods": "9"}}, want) == want
    assert declared_part({"hard": {"cpu": "1", "memory": "1G", "gpu": "129"}}, want) == {
        "hard": {"cpu": "1", "memory": "1G", "gpu": "129"}}


def test_the_catalogue_has_every_kind_the_components_declare() -> None:
    """An object of a kind missing here would not be found once no stack declares that kind."""
    declared = {(o.api_version, o.kind) for source in ("example", "plain-eks") for o in declared_manifests(source)}
    assert declared == set(MANAGED_KINDS)
    assert set(TEAM_NAMESPACE_KINDS) <= set(MANAGED_KINDS)
    assert set(PRUNERS) >= {kube_type(v, k) for v, k in MANAGED_KINDS}


class _DynamicClient:
    """The official dynamic client's surface `list_kind` uses: `resources.get(...)` then `.get(...)`
    returning a ResourceInstance whose `to_dict()` is the API server's list (items without kind)."""

    def __init__(self) -> None:
        self.resources = self
        self.requests: list[dict[str, Any]] = []

    def get(self, *, api_version: str, kind: str) -> Any:
        from kubernetes.dynamic.exceptions import ResourceNotFoundError
        if kind == "ClusterQueue":
            raise ResourceNotFoundError("No matches found for kueue.x-k8s.io/v1beta1 ClusterQueue")
        return SimpleNamespace(get=self._list)

    def _list(self, **params: Any) -> Any:
        self.requests.append(params)
        listed = {"apiVersion": "v1", "kind": "RoleBindingList", "metadata": {"continue": "tok2"},
                  "items": [{"metadata": {"name": "b", "namespace": "hyperpod-ns-nlp"}, **ALICE_ADMIN}]}
        return SimpleNamespace(to_dict=lambda: listed)


def test_the_dynamic_client_lists_a_page_across_namespaces() -> None:
    client = _DynamicClient()
    api = DynamicKubeApi(client=client)
    page = api.list_kind(RBAC, "RoleBinding", label_selector="a=b", limit=500, continue_token="tok1")
    assert client.requests == [{"namespace": None, "label_selector": "a=b", "limit": 500, "_continue": "tok1"}]
    assert page.continue_token == "tok2"
    (obj,) = page.items
    assert (obj.address, obj.body["apiVersion"], obj.body["kind"]) == (
        "kubernetes:rbac.authorization.k8s.io/v1/RoleBinding:hyperpod-ns-nlp/b", RBAC, "RoleBinding")
    assert api.list_kind("kueue.x-k8s.io/v1beta1", "ClusterQueue").items == ()  # not served: nothing


KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: gpu-west, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: scanner, user: {token: not-a-real-token}}]
contexts: [{name: gpu-west, context: {cluster: gpu-west, user: scanner}}]
current-context: gpu-west
"""


def test_settings_kubeconfigs_give_the_clusters_apis_and_an_unreachable_one_is_a_failure(
        context: ScanContext, tmp_path: Path) -> None:
    """The real client path: `Settings.kubeconfigs` -> `kube_apis_of` -> `DynamicKubeApi.from_kubeconfig`,
    made in the unit (nothing listens on port 1: discovery fails, the scan is incomplete)."""
    path = tmp_path / "gpu-west.kubeconfig"
    path.write_text(KUBECONFIG)
    settings = load_settings(environ={"HYPERGOV_SETTINGS": "/nonexistent"},
                             overrides={"state_dir": str(tmp_path), "kubeconfigs": {"gpu-west": str(path)}})
    apis = kubernetes.kube_apis_of(settings.kubeconfigs)
    assert list(apis) == ["gpu-west"]
    result = scan_with(dataclasses.replace(context, kube_apis=apis), lambda *a: None, services=(kubernetes.units,))
    assert [(f.stack, f.what, f.failure.kind) for f in result.failures] == [
        ("cluster-gpu-west", "Kubernetes objects of cluster gpu-west", "temporary")]  # unreachable: retry later
    assert result.not_read == ("Kubernetes objects of cluster trn-east: no kubeconfig configured "
                               "(settings kubeconfigs)",)
