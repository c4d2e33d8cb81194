"""Kubernetes objects of a stack (team RBAC; the admission policy, LimitRange and ResourceQuota
of each workload layer; Kueue objects in plain-EKS mode): planned always, applied by server-side
apply only when a kubeconfig for the cluster is configured. Without one, every object is planned
and reported as not applied.

The live cluster is reached through `KubeApi`, a small Protocol over the kubernetes client's
dynamic client, so the decision (what to create, update, prune) stays pure and testable.

Pruning finds the live objects labelled with the stack, searching exactly the kinds the stack
declares (plus those it declared before, `inventoried`): no hand-kept list of kinds can fall out
of step with the components. A listing that fails is an error, never "nothing to prune".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from reconciler.outcomes import Failure, classify
from reconciler.plan import Action, ResourceChange, diff_attributes

FIELD_MANAGER = "hypergov"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
STACK_LABEL = "hypergov.dev/stack"


@dataclass(frozen=True)
class KubeObject:
    api_version: str
    kind: str
    name: str
    namespace: str | None
    body: Mapping[str, Any]

    @property
    def address(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"kubernetes:{self.api_version}/{self.kind}:{ns}{self.name}"


def object_from_pulumi(type_token: str, inputs: Mapping[str, Any], *, stack: str) -> KubeObject:
    """`kubernetes:rbac.authorization.k8s.io/v1:Role` + its inputs -> a manifest labelled for pruning."""
    _, api_version, kind = type_token.split(":", 2)
    if api_version.startswith("core/"):
        api_version = api_version.removeprefix("core/")
    body = {k: v for k, v in inputs.items() if k not in ("apiVersion", "kind")}
    metadata = dict(body.get("metadata") or {})
    labels = dict(metadata.get("labels") or {})
    labels.update({MANAGED_BY_LABEL: "hypergov", STACK_LABEL: stack})
    metadata["labels"] = labels
    body = {"apiVersion": api_version, "kind": kind, **body, "metadata": metadata}
    return KubeObject(api_version=api_version, kind=kind, name=str(metadata.get("name", "")),
                      namespace=metadata.get("namespace"), body=body)


KubeKind = tuple[str, str]  # (apiVersion, kind)


class KubeApi(Protocol):
    def get(self, obj: KubeObject) -> Mapping[str, Any] | None: ...
    def apply(self, obj: KubeObject) -> None: ...
    def delete(self, api_version: str, kind: str, name: str, namespace: str | None) -> None: ...

    def list_managed(self, stack: str, kinds: Collection[KubeKind]) -> list[KubeObject]:
        """Live objects of these kinds labelled with `stack`; raises when a listing fails (a kind
        the cluster does not serve at all has no objects)."""
        ...


def searched_kinds(*objects: Iterable[KubeObject]) -> tuple[KubeKind, ...]:
    """The kinds pruning lists: those of the objects given (declared now, or inventoried)."""
    return tuple(sorted({(o.api_version, o.kind) for group in objects for o in group}))


def _comparable(live: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """Only the fields hypergov declares; the server adds the rest."""
    out: dict[str, Any] = {}
    for key, want in desired.items():
        have = live.get(key)
        out[key] = _comparable(have, want) if isinstance(want, Mapping) and isinstance(have, Mapping) else have
    return out


def plan_objects(objects: Iterable[KubeObject], *, cluster: str, stack: str, api: KubeApi | None,
                 inventoried: Iterable[KubeObject] = ()) -> tuple[ResourceChange, ...]:
    """Create, update or leave each declared object; delete the live objects labelled with the
    stack that it no longer declares, searching the kinds of `objects` and `inventoried`."""
    desired = sorted(objects, key=lambda o: o.address)
    before = list(inventoried)
    if api is None:
        note = f"not applied: no kubeconfig for {cluster}"
        return tuple(ResourceChange(address=o.address, type=o.kind, name=o.name, action=Action.CREATE,
                                    executor="kubernetes", note=note) for o in desired)
    changes: list[ResourceChange] = []
    for obj in desired:
        live = api.get(obj)
        if live is None:
            changes.append(ResourceChange(address=obj.address, type=obj.kind, name=obj.name, action=Action.CREATE,
                                          executor="kubernetes"))
            continue
        attrs = diff_attributes(_comparable(live, obj.body), dict(obj.body))
        changes.append(ResourceChange(address=obj.address, type=obj.kind, name=obj.name,
                                      action=Action.UPDATE if attrs else Action.NOOP, executor="kubernetes",
                                      attributes=attrs))
    wanted = {o.address for o in desired}
    for orphan in api.list_managed(stack, searched_kinds(desired, before)):
        if orphan.address not in wanted:
            changes.append(ResourceChange(address=orphan.address, type=orphan.kind, name=orphan.name,
                                          action=Action.DELETE, executor="kubernetes"))
    return tuple(changes)


def apply_objects(objects: Sequence[KubeObject], *, cluster: str, stack: str,
                  api: KubeApi) -> tuple[list[ResourceChange], list[tuple[ResourceChange, Failure]]]:
    """Server-side apply what differs, prune what the stack no longer declares; every failure is
    reported per object so that the others still converge."""
    applied: list[ResourceChange] = []
    failed: list[tuple[ResourceChange, Failure]] = []
    by_address = {o.address: o for o in objects}
    managed = {o.address: o for o in api.list_managed(stack, searched_kinds(objects))}
    for change in plan_objects(objects, cluster=cluster, stack=stack, api=api):
        if change.action is Action.NOOP:
            continue
        try:
            if change.action is Action.DELETE:
                gone = managed[change.address]
                api.delete(gone.api_version, gone.kind, gone.name, gone.namespace)
            else:
                api.apply(by_address[change.address])
            applied.append(change)
        except Exception as exc:  # reported per object
            failed.append((change, classify(exc)))
    return applied, failed


@dataclass
class DynamicKubeApi:
    """`KubeApi` over the official client's DynamicClient (server-side apply, field manager hypergov)."""

    client: Any  # kubernetes.dynamic.DynamicClient

    @classmethod
    def from_kubeconfig(cls, path: Path) -> DynamicKubeApi:
        from kubernetes import config, dynamic  # imported late: only needed with a kubeconfig

        api_client = config.new_client_from_config(config_file=str(path))  # type: ignore[no-untyped-call]
        return cls(client=dynamic.DynamicClient(api_client))  # type: ignore[no-untyped-call]

    def _resource(self, api_version: str, kind: str) -> Any:
        return self.client.resources.get(api_version=api_version, kind=kind)

    def get(self, obj: KubeObject) -> Mapping[str, Any] | None:
        from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

        try:
            found = self._resource(obj.api_version, obj.kind).get(name=obj.name, namespace=obj.namespace)
        except (NotFoundError, ResourceNotFoundError):  # no such object, or the kind is not served at all
            return None
        result: Mapping[str, Any] = found.to_dict()
        return result

    def apply(self, obj: KubeObject) -> None:
        self._resource(obj.api_version, obj.kind).server_side_apply(
            body=dict(obj.body), name=obj.name, namespace=obj.namespace, field_manager=FIELD_MANAGER,
            force_conflicts=True)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        self._resource(api_version, kind).delete(name=name, namespace=namespace)

    def list_managed(self, stack: str, kinds: Collection[KubeKind]) -> list[KubeObject]:
        from kubernetes.dynamic.exceptions import ResourceNotFoundError

        found: list[KubeObject] = []
        for api_version, kind in kinds:
            try:
                resource = self._resource(api_version, kind)
            except ResourceNotFoundError:  # discovery: the cluster does not serve this kind (e.g. no Kueue)
                continue
            # Any other error (unreachable API, 401/403, 5xx) propagates: swallowing it would
            # read as "nothing to prune" and leave objects behind.
            for item in resource.get(label_selector=f"{STACK_LABEL}={stack}").items:
                meta = item.metadata
                found.append(KubeObject(api_version=api_version, kind=kind, name=meta.name,
                                        namespace=getattr(meta, "namespace", None), body={}))
        return found
