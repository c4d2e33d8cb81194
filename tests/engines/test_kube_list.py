"""Listing a stack's live objects for pruning: an error is an error (an unreachable API or a 403
must never read as "nothing to prune"); only a kind the cluster does not serve at all (discovery's
ResourceNotFoundError, e.g. Kueue not installed) has no objects. No kube-apiserver can run here,
so the dynamic client is a fake raising the exceptions the real one raises."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.dynamic.exceptions import ForbiddenError, NotFoundError, ResourceNotFoundError, ServiceUnavailableError
from urllib3.exceptions import MaxRetryError

from engines.kube import STACK_LABEL, DynamicKubeApi, object_from_pulumi, plan_objects
from engines.outcomes import classify
from engines.plan import Action

ROLE = ("rbac.authorization.k8s.io/v1", "Role")
QUEUE = ("kueue.x-k8s.io/v1beta1", "LocalQueue")


def _api_error(cls: type[Exception], status: int) -> Exception:
    return cls(SimpleNamespace(status=status, reason="x", body=None, headers=None))


class FakeDynamicClient:
    """`resources.get(api_version=, kind=)` -> a resource whose labelled listing returns `items`
    or raises `list_error`; kinds in `unserved` fail discovery."""

    def __init__(self, *, items: list[Any] | None = None, list_error: Exception | None = None,
                 unserved: tuple[tuple[str, str], ...] = ()) -> None:
        self.items, self.list_error, self.unserved = items or [], list_error, unserved
        self.selectors: list[str] = []
        self.resources = self

    def get(self, *, api_version: str, kind: str) -> Any:
        if (api_version, kind) in self.unserved:
            raise ResourceNotFoundError(f"No matches found for {kind}")
        return SimpleNamespace(get=self._get)

    def _get(self, *, label_selector: str = "", name: str = "", namespace: str | None = None) -> Any:
        if not label_selector:  # one object by name: none exists
            raise _api_error(NotFoundError, 404)
        self.selectors.append(label_selector)
        if self.list_error is not None:
            raise self.list_error
        return SimpleNamespace(items=self.items)


def _item(name: str, namespace: str) -> Any:
    return SimpleNamespace(metadata=SimpleNamespace(name=name, namespace=namespace))


def _role(name: str) -> Any:
    return object_from_pulumi(f"kubernetes:{ROLE[0]}:{ROLE[1]}", {"metadata": {"name": name, "namespace": "n"}},
                              stack="project-vision")


def _queue(name: str) -> Any:
    return object_from_pulumi(f"kubernetes:{QUEUE[0]}:{QUEUE[1]}", {"metadata": {"name": name, "namespace": "n"}},
                              stack="project-research")


def test_orphans_are_the_labelled_objects_of_the_declared_kinds() -> None:
    client = FakeDynamicClient(items=[_item("old", "n")])
    changes = [d.change for d in plan_objects([_role("new")], cluster="c", stack="project-vision",
                                              api=DynamicKubeApi(client=client))]
    assert {(c.name, c.action) for c in changes} == {("new", Action.CREATE), ("old", Action.DELETE)}
    assert client.selectors == [f"{STACK_LABEL}=project-vision"]


@pytest.mark.parametrize(("error", "kind", "reason"), [
    (_api_error(ForbiddenError, 403), "permanent", "access-denied"),
    (_api_error(ServiceUnavailableError, 503), "temporary", "server-error"),
    (MaxRetryError(None, "/apis", "connection refused"), "temporary", "connection"),  # type: ignore[arg-type]
])
def test_a_failed_listing_fails_the_plan_and_is_classified(error: Exception, kind: str, reason: str) -> None:
    api = DynamicKubeApi(client=FakeDynamicClient(list_error=error))
    with pytest.raises(type(error)) as raised:
        plan_objects([_role("r")], cluster="c", stack="project-vision", api=api)
    failure = classify(raised.value)  # what the stack boundary (`guarded`) records
    assert (failure.kind, failure.reason) == (kind, reason)


def test_a_kind_the_cluster_does_not_serve_has_no_objects() -> None:
    """Kueue not installed: its LocalQueue is planned as a create (its apply will fail and say so),
    and nothing of that kind is pruned; the Roles are still listed."""
    client = FakeDynamicClient(items=[_item("old", "n")], unserved=(QUEUE,))
    changes = [d.change for d in plan_objects([_queue("q"), _role("r")], cluster="c", stack="project-research",
                                              api=DynamicKubeApi(client=client))]
    assert {(c.type, c.name, c.action) for c in changes} == {
        ("LocalQueue", "q", Action.CREATE), ("Role", "r", Action.CREATE), ("Role", "old", Action.DELETE)}
