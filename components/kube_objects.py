"""Declaring a component's Kubernetes objects through one provider, or none at all.

`pulumi up` with an empty `hypergov:kubeconfig` must never send objects to whatever kubectl
context the administrator's machine happens to have, so the program then gives the components
no Kubernetes provider. A component still walks the same code path and reports how many objects
it would have declared (the program warns with that count), so the number in the warning is
the number the graph capture declares, by construction rather than by a second count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pulumi
import pulumi_kubernetes as k8s

R = TypeVar("R", bound=pulumi.Resource)


class KubernetesObjects:
    """The Kubernetes objects of one component on one cluster."""

    def __init__(self, *, parent: pulumi.Resource, provider: k8s.Provider | None) -> None:
        self.parent = parent
        self.provider = provider
        self.skipped = 0  # objects not declared because there is no provider

    def declare(self, factory: Callable[..., R], name: str, *, depends_on: Sequence[pulumi.Resource | None] = (),
                **inputs: Any) -> R | None:
        """`factory(name, opts=..., **inputs)` with this parent and provider, or None (counted)
        without a provider. A dependency that was not declared (None) is dropped: it was skipped
        for the same reason."""
        if self.provider is None:
            self.skipped += 1
            return None
        needs = [d for d in depends_on if d is not None]
        opts = pulumi.ResourceOptions(parent=self.parent, provider=self.provider, depends_on=needs or None)
        return factory(name, opts=opts, **inputs)
