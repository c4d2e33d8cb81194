"""Kubernetes objects of a stack (team RBAC; the admission policy, LimitRange and ResourceQuota
of each workload layer; Kueue objects in plain-EKS mode): planned always, applied by server-side
apply only when a kubeconfig for the cluster is configured. Without one, every object is planned
and reported as not applied.

The live cluster is reached through `KubeApi`, a small Protocol over the kubernetes client's
dynamic client, so the decision (what to create, update, prune) stays pure and testable. Besides
reads and writes it lists a kind page by page (the drift scan, the usage collector) and watches
it from a resourceVersion (the usage collector); the tests stand a fake behind it
(`tests/engines/kube_fakes.py`), because no kube-apiserver can run where they do.

Pruning finds the live objects labelled with the stack, searching exactly the kinds the stack
declares (plus those it declared before, `inventoried`): no hand-kept list of kinds can fall out
of step with the components. A listing that fails is an error, never "nothing to prune".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Collection, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast, get_args

from engines.outcomes import Failure, TemporaryError, classify
from engines.plan import Action, AttributeChange, ResourceChange, diff_attributes
from hypergov import naming

FIELD_MANAGER = "hypergov"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
STACK_LABEL = naming.STACK_LABEL  # its values are stack names: their length is checked in validation


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


@dataclass(frozen=True)
class KubePage:
    """One page of a list call: full live objects, the token of the next page (None: the last),
    and the list's resourceVersion (every page of one list has the first page's: a watch from it
    sees every change after the list; None where the kind is not served)."""

    items: tuple[KubeObject, ...]
    continue_token: str | None = None
    resource_version: str | None = None


WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
WATCH_EVENT_TYPES: frozenset[str] = frozenset(get_args(WatchEventType))


@dataclass(frozen=True)
class WatchEvent:
    """One event of a watch: the object as it is after the change (a DELETED object as it was
    last), and the resourceVersion the watcher has seen everything up to. A BOOKMARK changes no
    object: it only moves that version on (its body holds nothing but metadata.resourceVersion)."""

    type: WatchEventType
    body: Mapping[str, Any]
    resource_version: str


class ResourceVersionExpired(TemporaryError):
    """410 Gone, "too old resource version": the API server no longer holds the events after the
    version a watch asked for (etcd compacted them). Nothing can resume from it: the watcher
    lists again and watches from the new list's version."""

    reason = "resource-version-expired"
    retry_after_s = 0.0


class KubeApi(Protocol):
    def get(self, obj: KubeObject) -> Mapping[str, Any] | None: ...
    def apply(self, obj: KubeObject) -> None: ...
    def delete(self, api_version: str, kind: str, name: str, namespace: str | None) -> None: ...

    def list_managed(self, stack: str, kinds: Collection[KubeKind]) -> list[KubeObject]:
        """Live objects of these kinds labelled with `stack`; raises when a listing fails (a kind
        the cluster does not serve at all has no objects)."""
        ...

    def list_kind(self, api_version: str, kind: str, *, namespace: str | None = None,
                  label_selector: str | None = None, limit: int | None = None,
                  continue_token: str | None = None) -> KubePage:
        """One page (at most `limit` objects) of the live objects of a kind, in `namespace` or in
        all namespaces, full bodies with apiVersion and kind; raises when the listing fails (a
        kind the cluster does not serve at all has no objects)."""
        ...

    def watch_kind(self, api_version: str, kind: str, *, resource_version: str,
                   timeout_s: float) -> Generator[WatchEvent, None, None]:
        """The changes to the objects of a kind in all namespaces after `resource_version`, in
        order, with BOOKMARK events, until the API server ends the watch (after `timeout_s`) or
        the caller closes the generator (which ends the watch's connection). Raises
        `ResourceVersionExpired` when that version is too old to resume from; any other failure
        (unreachable API, 401/403, 5xx) propagates."""
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


@dataclass(frozen=True)
class KubeDecision:
    """One planned change of one object, kept with the plan: apply carries out exactly this (the
    decision is not made again at apply time) and the plan's artifact hash covers it."""

    cluster: str
    obj: KubeObject  # create/update/no-op: the desired manifest; delete: the live object's identity
    change: ResourceChange

    def digest(self) -> list[Any]:
        """What the artifact hash covers: the decision and the exact body that would be sent."""
        body = hashlib.sha256(json.dumps(self.obj.body, sort_keys=True, default=str).encode()).hexdigest()
        return [self.cluster, self.change.address, self.change.action.value, self.change.note, body]


def _decision(cluster: str, obj: KubeObject, action: Action, *, note: str | None = None,
              attributes: tuple[AttributeChange, ...] = ()) -> KubeDecision:
    change = ResourceChange(address=obj.address, type=obj.kind, name=obj.name, action=action,
                            executor="kubernetes", attributes=attributes, note=note)
    return KubeDecision(cluster=cluster, obj=obj, change=change)


def plan_objects(objects: Iterable[KubeObject], *, cluster: str, stack: str, api: KubeApi | None,
                 inventoried: Iterable[KubeObject] = ()) -> tuple[KubeDecision, ...]:
    """Create, update or leave each declared object; delete the live objects labelled with the
    stack that it no longer declares, searching the kinds of `objects` and `inventoried` (the
    label is the proof of ownership). Without an API (no kubeconfig) the declared objects are
    planned as creates and the inventoried ones no longer declared as deletes, all not applied."""
    desired = sorted(objects, key=lambda o: o.address)
    before = list(inventoried)
    wanted = {o.address for o in desired}
    if api is None:
        note = f"not applied: no kubeconfig for {cluster}"
        gone = sorted({o.address: o for o in before if o.address not in wanted}.values(), key=_delete_order)
        return (*(_decision(cluster, o, Action.CREATE, note=note) for o in desired),
                *(_decision(cluster, o, Action.DELETE, note=note) for o in gone))
    decisions: list[KubeDecision] = []
    for obj in desired:
        live = api.get(obj)
        if live is None:
            decisions.append(_decision(cluster, obj, Action.CREATE))
            continue
        attrs = diff_attributes(_comparable(live, obj.body), dict(obj.body))
        decisions.append(_decision(cluster, obj, Action.UPDATE if attrs else Action.NOOP, attributes=attrs))
    orphans = [o for o in api.list_managed(stack, searched_kinds(desired, before)) if o.address not in wanted]
    decisions += [_decision(cluster, o, Action.DELETE) for o in sorted(orphans, key=_delete_order)]
    return tuple(decisions)


def _delete_order(obj: KubeObject) -> tuple[bool, str]:
    """Namespaced objects before cluster-scoped ones (a Namespace last, a LocalQueue before the
    ClusterQueue it points at); the API server finishes deletions behind finalizers itself."""
    return obj.namespace is None, obj.address


def apply_decisions(decisions: Sequence[KubeDecision],
                    api: KubeApi) -> tuple[list[ResourceChange], list[tuple[ResourceChange, Failure]]]:
    """Carry out the planned decisions of one cluster, in plan order: server-side apply of the
    desired body for a create or update, delete of the planned orphan. Every failure is classified
    and reported per object, so that the others still converge."""
    applied: list[ResourceChange] = []
    failed: list[tuple[ResourceChange, Failure]] = []
    for decision in decisions:
        change, obj = decision.change, decision.obj
        if change.action is Action.NOOP or change.note is not None:
            continue
        try:
            if change.action is Action.DELETE:
                api.delete(obj.api_version, obj.kind, obj.name, obj.namespace)
            else:
                api.apply(obj)
            applied.append(change)
        except Exception as exc:  # reported per object
            failed.append((change, classify(exc)))
    return applied, failed


def declared_objects(resources: Iterable[Any], *, stack: str) -> dict[str, list[KubeObject]]:
    """The Kubernetes objects of a captured graph, per cluster (named by the `k8s-<cluster>`
    provider each goes through)."""
    by_cluster: dict[str, list[KubeObject]] = {}
    for res in resources:
        if res.type.startswith("kubernetes:") and res.custom:
            cluster = (res.provider or "").rsplit("::k8s-", 1)[-1]
            by_cluster.setdefault(cluster, []).append(object_from_pulumi(res.type, res.inputs, stack=stack))
    return by_cluster


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
        from kubernetes.dynamic.exceptions import NotFoundError

        with contextlib.suppress(NotFoundError):  # already gone: what the delete was for
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

    def list_kind(self, api_version: str, kind: str, *, namespace: str | None = None,
                  label_selector: str | None = None, limit: int | None = None,
                  continue_token: str | None = None) -> KubePage:
        from kubernetes.dynamic.exceptions import ResourceNotFoundError

        try:
            resource = self._resource(api_version, kind)
        except ResourceNotFoundError:  # discovery: the cluster does not serve this kind
            return KubePage(items=())
        listed = resource.get(namespace=namespace, label_selector=label_selector, limit=limit,
                              _continue=continue_token).to_dict()
        # The items of a list carry no apiVersion and kind of their own (the list's kind says them).
        items = tuple(_listed_object(api_version, kind, item) for item in listed.get("items") or ())
        meta = listed.get("metadata") or {}
        return KubePage(items=items, continue_token=meta.get("continue") or None,
                        resource_version=meta.get("resourceVersion") or None)

    def watch_kind(self, api_version: str, kind: str, *, resource_version: str,
                   timeout_s: float) -> Generator[WatchEvent, None, None]:
        from kubernetes import watch
        from kubernetes.client.exceptions import ApiException

        resource = self._resource(api_version, kind)
        watcher = watch.Watch()  # type: ignore[no-untyped-call]
        # timeout_seconds: the server ends the watch (the client then does not retry on its own);
        # the read timeout past it: a connection that went silent is dead, never waited on forever.
        # serialize=False: the dynamic client hands the raw response to the watch, as its own
        # `watch` does; the events' objects stay plain dicts.
        seconds = max(1, int(timeout_s))
        stream = watcher.stream(  # type: ignore[no-untyped-call]
            resource.get, resource_version=resource_version, timeout_seconds=seconds, allow_watch_bookmarks=True,
            serialize=False, _request_timeout=(_CONNECT_TIMEOUT_S, seconds + _SILENCE_MARGIN_S))
        try:
            for raw in stream:
                event = _watch_event(api_version, kind, raw)
                if event is not None:
                    yield event
        except ApiException as exc:  # an ERROR event or a failed response; the dynamic client's errors subclass it
            if exc.status == _GONE:
                raise ResourceVersionExpired(f"{kind} watch from resourceVersion {resource_version}: "
                                             f"{exc.reason or 'too old resource version'}") from exc
            raise
        finally:
            watcher.stop()  # type: ignore[no-untyped-call]
            stream.close()


_GONE = 410
_CONNECT_TIMEOUT_S = 10
_SILENCE_MARGIN_S = 30


def _watch_event(api_version: str, kind: str, raw: Mapping[str, Any]) -> WatchEvent | None:
    """A watch line as a `WatchEvent`; None for a type this client does not know (newer servers
    may add some: skipped, never mistaken for a change)."""
    kind_of_event = raw.get("type")
    if kind_of_event not in WATCH_EVENT_TYPES:
        return None
    obj = raw.get("raw_object") or raw.get("object") or {}
    body = {"apiVersion": api_version, "kind": kind, **obj}
    version = str((body.get("metadata") or {}).get("resourceVersion") or "")
    return WatchEvent(type=cast(WatchEventType, kind_of_event), body=body, resource_version=version)


def _listed_object(api_version: str, kind: str, item: Mapping[str, Any]) -> KubeObject:
    body = {"apiVersion": api_version, "kind": kind, **item}
    meta = body.get("metadata") or {}
    return KubeObject(api_version=api_version, kind=kind, name=str(meta.get("name", "")),
                      namespace=meta.get("namespace"), body=body)
