"""The desired AWS objects of a stack, as the engines apply them: the `aws:*` resources of its
captured Pulumi graph (`stacks.graph`), each with the account and region its provider acts in
and the address terraform gives it, so a drift item and a plan name the same object alike.

Pure: a graph in, desired objects out. Inputs keep Pulumi's spelling (camelCase); a service's
scan module (`engines.live.iam`, `...eks`) reads the inputs it compares.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engines.kube import KubeObject, declared_objects
from engines.type_mappings import MAPPINGS, tf_name
from stacks.resource_graph import ResourceGraph

AWS_PROVIDER = "pulumi:providers:aws"


@dataclass(frozen=True)
class DesiredObject:
    stack: str
    type: str  # the Pulumi type token: aws:iam/role:Role
    name: str  # the Pulumi logical name: role-lead@ml-prod
    address: str  # as terraform plans it: aws_iam_role.role-lead_ml-prod
    account: str | None  # None: the caller's own account (the management account's provider names none)
    region: str
    inputs: Mapping[str, Any]
    property_dependencies: Mapping[str, tuple[str, ...]]  # input -> URNs it is computed from

    def input(self, key: str) -> Any:
        return self.inputs.get(key)

    def document(self, key: str) -> Any:
        """A JSON-document input (a policy) parsed; None when absent."""
        value = self.inputs.get(key)
        return json.loads(value) if isinstance(value, str) and value else value


def address_of(type_token: str, logical_name: str) -> str:
    mapping = MAPPINGS.get(type_token)
    tf_type = mapping.tf_type if mapping else type_token
    return f"{tf_type}.{tf_name(logical_name)}"


def _provider_place(provider: Mapping[str, Any]) -> tuple[str | None, str]:
    allowed = provider.get("allowedAccountIds")
    if isinstance(allowed, str):
        allowed = json.loads(allowed) if allowed.startswith("[") else [allowed]
    account = str(allowed[0]) if allowed else None
    return account, str(provider.get("region", ""))


def desired_objects(graph: ResourceGraph) -> list[DesiredObject]:
    """Every `aws:*` resource of the graph with the place its provider acts in."""
    providers = {r.urn: _provider_place(r.inputs) for r in graph.resources if r.type == AWS_PROVIDER}
    found = []
    for r in graph.resources:
        if not (r.custom and r.type.startswith("aws:")):
            continue
        account, region = providers.get(r.provider or "", (None, ""))
        found.append(DesiredObject(stack=graph.stack, type=r.type, name=r.name, address=address_of(r.type, r.name),
                                   account=account, region=region, inputs=r.inputs,
                                   property_dependencies=dict(r.property_dependencies)))
    return found


@dataclass(frozen=True)
class DesiredLookup:
    """A read a stack's program makes (`stacks.resource_graph.LOOKUPS`), with the place its provider reads
    in: what the objects whose inputs hold its placeholder are resolved with."""

    stack: str
    type: str  # the Pulumi invoke token: aws:iam/getRoles:getRoles
    name: str  # its placeholder name (`${lookup:<name>:<path>}`)
    account: str | None
    region: str
    inputs: Mapping[str, Any]


def desired_lookups(graph: ResourceGraph) -> list[DesiredLookup]:
    providers = {r.urn: _provider_place(r.inputs) for r in graph.resources if r.type == AWS_PROVIDER}
    found = []
    for r in graph.resources:
        if r.lookup:
            account, region = providers.get(r.provider or "", (None, ""))
            found.append(DesiredLookup(stack=graph.stack, type=r.type, name=r.name, account=account, region=region,
                                       inputs=r.inputs))
    return found


@dataclass(frozen=True)
class DesiredKubeObject:
    """A Kubernetes object of a stack: the labelled manifest the engine applies, on the cluster
    whose `k8s-<cluster>` provider it goes through."""

    stack: str
    cluster: str
    obj: KubeObject


def desired_kube_objects(graph: ResourceGraph) -> list[DesiredKubeObject]:
    """Every `kubernetes:*` resource of the graph, as the engine applies it."""
    return [DesiredKubeObject(stack=graph.stack, cluster=cluster, obj=obj)
            for cluster, objs in sorted(declared_objects(graph.resources, stack=graph.stack).items()) for obj in objs]


def of_type(objects: Iterable[DesiredObject], *types: str) -> list[DesiredObject]:
    wanted = frozenset(types)
    return [o for o in objects if o.type in wanted]
