"""The kinds a stack's prune searches are the kinds it declares: captured from every stack of the
example tree (task-governance cluster gpu-west and plain-EKS cluster trn-east with project
research), planned against a fake of the kubernetes dynamic client that records which kinds are
listed. A hand-kept list fell out of step with the components once (it missed the admission
policy and WorkloadPriorityClass and named a PriorityClass nobody declares)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from engines.kube import DynamicKubeApi, object_from_pulumi, plan_objects
from stacks.resource_graph import ResourceGraph

EVERY_DECLARED_KIND = {
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
    ("kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass"), ("kueue.x-k8s.io/v1beta1", "ResourceFlavor"),
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue"), ("kueue.x-k8s.io/v1beta1", "LocalQueue"),
    ("v1", "LimitRange"), ("v1", "ResourceQuota"), ("v1", "Namespace"),
    ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding"),
}


class _Resource:
    def __init__(self, kind: tuple[str, str], listed: list[tuple[str, str]]) -> None:
        self.kind, self.listed = kind, listed

    def get(self, **kwargs: Any) -> Any:
        if "label_selector" in kwargs:
            self.listed.append(self.kind)
            return SimpleNamespace(items=[])
        from kubernetes.dynamic.exceptions import NotFoundError

        raise NotFoundError(SimpleNamespace(status=404, reason="Not Found", body=None, headers=None))


class RecordingDynamicClient:
    """Serves every kind; nothing exists; records the kinds listed by label."""

    def __init__(self) -> None:
        self.listed: list[tuple[str, str]] = []
        self.resources = self

    def get(self, *, api_version: str, kind: str) -> _Resource:
        return _Resource((api_version, kind), self.listed)


def test_every_declared_kind_is_searched_and_no_other(graphs: dict[str, ResourceGraph]) -> None:
    declared_anywhere: set[tuple[str, str]] = set()
    for stack, graph in graphs.items():
        objects = [object_from_pulumi(r.type, r.inputs, stack=stack) for r in graph.resources
                   if r.type.startswith("kubernetes:") and r.custom]
        declared = {(o.api_version, o.kind) for o in objects}
        client = RecordingDynamicClient()
        plan_objects(objects, cluster="c", stack=stack, api=DynamicKubeApi(client=client))
        listed = set(client.listed)
        assert listed == declared, (stack, "not searched:", declared - listed, "never declared:", listed - declared)
        declared_anywhere |= declared
    assert declared_anywhere == EVERY_DECLARED_KIND  # both modes are covered by the example tree
