"""Planning Kubernetes objects. No kube-apiserver can run here, so the live cluster is a fake
`KubeApi` (the Protocol seam over the kubernetes dynamic client); the no-kubeconfig path is real."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from engines.kube import KubeKind, KubeObject, apply_decisions, object_from_pulumi, plan_objects
from engines.plan import Action

ROLE_INPUTS = {"metadata": {"name": "hyperpod-ns-vision-namespace-role", "namespace": "hyperpod-ns-vision"},
               "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}


def _role() -> KubeObject:
    return object_from_pulumi("kubernetes:rbac.authorization.k8s.io/v1:Role", ROLE_INPUTS, stack="project-vision")


class FakeCluster:
    def __init__(self, live: dict[str, Mapping[str, Any]], managed: list[KubeObject]) -> None:
        self.live, self.managed = live, managed

    def get(self, obj: KubeObject) -> Mapping[str, Any] | None:
        return self.live.get(obj.address)

    def apply(self, obj: KubeObject) -> None:
        self.live[obj.address] = obj.body

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        raise AssertionError("planning must not delete")

    def list_managed(self, stack: str, kinds: Collection[KubeKind]) -> list[KubeObject]:
        return [o for o in self.managed if (o.api_version, o.kind) in kinds]


def test_manifest_gets_pruning_labels() -> None:
    role = _role()
    assert role.body["apiVersion"] == "rbac.authorization.k8s.io/v1" and role.body["kind"] == "Role"
    assert role.body["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "hypergov",
                                               "hypergov.dev/stack": "project-vision"}
    core = object_from_pulumi("kubernetes:core/v1:LimitRange", {"metadata": {"name": "x", "namespace": "n"}}, stack="s")
    assert core.api_version == "v1"


def test_without_kubeconfig_everything_is_planned_but_not_applied() -> None:
    orphan = KubeObject("v1", "LimitRange", "old", "hyperpod-ns-vision", {})
    create, delete = plan_objects([_role()], cluster="gpu-west", stack="project-vision", api=None,
                                  inventoried=[_role(), orphan])
    assert (create.change.action, delete.change.action) == (Action.CREATE, Action.DELETE)
    assert delete.obj == orphan
    assert {create.change.note, delete.change.note} == {"not applied: no kubeconfig for gpu-west"}


def test_live_cluster_create_update_noop_and_prune() -> None:
    role = _role()
    drifted = {**role.body, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}],
               "metadata": {**role.body["metadata"], "uid": "server-side"}}
    orphan = KubeObject("v1", "LimitRange", "old", "hyperpod-ns-vision", {})
    binding = object_from_pulumi("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
                                 {"metadata": {"name": "b", "namespace": "hyperpod-ns-vision"}}, stack="project-vision")
    api = FakeCluster({role.address: drifted}, [orphan, role])
    # the orphan's kind is no longer declared: it is searched because the stack's inventory has it
    changes = {d.change.address: d.change for d in plan_objects([role, binding], cluster="c", stack="project-vision",
                                                                api=api, inventoried=[orphan])}
    assert changes[role.address].action is Action.UPDATE
    assert [a.path for a in changes[role.address].attributes] == ["rules"]
    assert changes[binding.address].action is Action.CREATE
    assert changes[orphan.address].action is Action.DELETE
    api.live[role.address] = {**role.body, "metadata": {**role.body["metadata"], "uid": "x"}}
    quiet = FakeCluster(api.live, [])
    again = {d.change.address: d.change for d in plan_objects([role], cluster="c", stack="project-vision", api=quiet)}
    assert again[role.address].action is Action.NOOP


class RecordingCluster(FakeCluster):
    def __init__(self, live: dict[str, Mapping[str, Any]], managed: list[KubeObject], fail: str = "") -> None:
        super().__init__(live, managed)
        self.deleted: list[str] = []
        self.fail = fail

    def apply(self, obj: KubeObject) -> None:
        if obj.name == self.fail:
            raise RuntimeError("admission webhook denied the request")
        super().apply(obj)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        self.deleted.append(f"{kind}/{name}")


def test_apply_carries_out_the_decisions_and_reports_failures_per_object() -> None:
    role = _role()
    binding = object_from_pulumi("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
                                 {"metadata": {"name": "b", "namespace": "hyperpod-ns-vision"}}, stack="project-vision")
    broken = object_from_pulumi("kubernetes:core/v1:LimitRange", {"metadata": {"name": "bad", "namespace": "n"}},
                                stack="project-vision")
    orphan = KubeObject("v1", "LimitRange", "old", "hyperpod-ns-vision", {})
    api = RecordingCluster({}, [orphan], fail="bad")
    decisions = plan_objects([role, binding, broken], cluster="c", stack="project-vision", api=api)
    applied, failed = apply_decisions(decisions, api)
    assert {c.address for c in applied} == {role.address, binding.address, orphan.address}
    assert [(c.address, "denied" in err.message, err.kind) for c, err in failed] == [
        (broken.address, True, "permanent")]
    assert api.deleted == ["LimitRange/old"]
    assert api.live[role.address] == role.body
