"""Validation of Prometheus Operator objects (ServiceMonitor, PrometheusRule) against the
operator's own CRD schemas (`tests/schemas/prometheus-operator/`, v0.93.0), since the official
Kubernetes schemas that `kubernetes-validate` ships have no custom resources and no API server runs
on the build machines.

The `openAPIV3Schema` is applied as the API server applies a structural schema: an object node
without `additionalProperties` or `x-kubernetes-preserve-unknown-fields` accepts no unknown field
(the server would prune it, so a typo would silently do nothing), `metadata` is the strict
ObjectMeta of the Kubernetes version given, and `x-kubernetes-list-type` set/map means unique
items / unique map keys. These two CRDs carry no `x-kubernetes-validations` (CEL) rule; one added
by a newer operator fails here until it is handled."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema.protocols import Validator
from kubernetes_validate.utils import schema_contents
from referencing import Registry, Resource

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas" / "prometheus-operator"
GROUP = "monitoring.coreos.com"
OBJECT_META = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _list_type(validator: Validator, list_type: str, instance: Any,
               schema: Mapping[str, Any]) -> Iterator[jsonschema.ValidationError]:
    if not isinstance(instance, list) or list_type == "atomic":
        return
    keys = schema.get("x-kubernetes-list-map-keys", []) if list_type == "map" else None
    seen: set[str] = set()
    for item in instance:
        key = json.dumps(item if keys is None else [item.get(k) for k in keys], sort_keys=True)
        if key in seen:
            yield jsonschema.ValidationError(f"duplicate {'item' if keys is None else f'entry for {keys}'} "
                                             f"in a list of type {list_type}: {key}")
        seen.add(key)


def _cel(validator: Validator, rules: Any, instance: Any,
         schema: Mapping[str, Any]) -> Iterator[jsonschema.ValidationError]:
    yield jsonschema.ValidationError(f"x-kubernetes-validations not evaluated here: {rules}")


CrdValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"x-kubernetes-list-type": _list_type, "x-kubernetes-validations": _cel})


def _structural(node: Any) -> Any:
    """A CRD schema node as the API server applies it: objects close unless they say otherwise."""
    if isinstance(node, list):
        return [_structural(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: (v if k in ("enum", "default", "required") else _structural(v)) for k, v in node.items()}
    if "properties" in node:
        out["properties"] = {name: _structural(sub) for name, sub in node["properties"].items()}
    if node.get("type") == "object" and "additionalProperties" not in node \
            and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


@cache
def crds() -> dict[str, dict[str, Any]]:
    """The vendored CRDs by kind."""
    found = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(SCHEMAS.glob("*.yaml"))]
    return {c["spec"]["names"]["kind"]: c for c in found if c["spec"]["group"] == GROUP}


@cache
def _validator(kind: str, version: str, kubernetes: str) -> Validator:
    crd = crds()[kind]
    schema = copy.deepcopy(next(v for v in crd["spec"]["versions"] if v["name"] == version)
                           ["schema"]["openAPIV3Schema"])
    root = _structural(schema)
    root["properties"]["apiVersion"] = {"const": f"{GROUP}/{version}"}
    root["properties"]["kind"] = {"const": kind}
    root["properties"]["metadata"] = {"$ref": OBJECT_META, "required": ["name"]}
    root["required"] = sorted({*root.get("required", []), "apiVersion", "kind", "metadata"})
    definitions = schema_contents(f"kubernetes-json-schema/v{kubernetes}.0-local-strict/_definitions.json", kubernetes)
    validator: Validator = CrdValidator(root, registry=Resource.from_contents(definitions) @ Registry())
    return validator


def is_monitoring(obj: Mapping[str, Any]) -> bool:
    return str(obj.get("apiVersion", "")).startswith(f"{GROUP}/")


def errors(obj: Mapping[str, Any], *, kubernetes: str) -> list[str]:
    """Every schema error of a monitoring.coreos.com object, `path: message`; [] when valid."""
    group_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    version = group_version.split("/", 1)[1]
    if kind not in crds():
        return [f"kind: no CRD for {kind} in {SCHEMAS}"]
    served = [v["name"] for v in crds()[kind]["spec"]["versions"] if v["served"]]
    if version not in served:
        return [f"apiVersion: {group_version} is not served for {kind} (served: {', '.join(served)})"]
    found = _validator(kind, version, kubernetes).iter_errors(dict(obj))
    return sorted(f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found)
