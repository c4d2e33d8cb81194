"""What the API server checks of a custom resource beyond plain JSON Schema, for the tests that
validate objects against vendored CRDs (Kueue's, the Prometheus Operator's, Kubeflow's, KubeRay's):
the structural schema (objects close unless they say otherwise) and `x-kubernetes-list-type`
(no duplicate items, or entries by their map keys). One copy for every CRD check."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

OBJECT_META = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def list_type(validator: Validator, kind: str, instance: Any,
              schema: Mapping[str, Any]) -> Iterator[jsonschema.ValidationError]:
    """The `x-kubernetes-list-type` keyword: `set` (no duplicate item) and `map` (no two entries
    with the same `x-kubernetes-list-map-keys`); `atomic` asks nothing."""
    if not isinstance(instance, list) or kind == "atomic":
        return
    keys = schema.get("x-kubernetes-list-map-keys", []) if kind == "map" else None
    seen: set[str] = set()
    for item in instance:
        key = json.dumps(item if keys is None else [item.get(k) for k in keys], sort_keys=True)
        if key in seen:
            yield jsonschema.ValidationError(f"duplicate {'item' if keys is None else f'entry for {keys}'} "
                                             f"in a list of type {kind}: {key}")
        seen.add(key)


def structural(node: Any) -> Any:
    """A CRD schema node as the API server applies it: objects close unless they say otherwise."""
    if isinstance(node, list):
        return [structural(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: (v if k in ("enum", "default", "required", "x-kubernetes-validations") else structural(v))
           for k, v in node.items()}
    if "properties" in node:
        out["properties"] = {name: structural(sub) for name, sub in node["properties"].items()}
    if node.get("type") == "object" and "additionalProperties" not in node \
            and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if node.get("x-kubernetes-int-or-string"):
        assert "anyOf" in node, "int-or-string without anyOf: add it here"
    return out
