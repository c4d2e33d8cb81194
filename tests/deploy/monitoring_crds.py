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
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema.protocols import Validator
from kubernetes_validate.utils import schema_contents
from referencing import Registry, Resource

from tests.crd_schemas import OBJECT_META, list_type, structural

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas" / "prometheus-operator"
GROUP = "monitoring.coreos.com"




def _cel(validator: Validator, rules: Any, instance: Any,
         schema: Mapping[str, Any]) -> Iterator[jsonschema.ValidationError]:
    yield jsonschema.ValidationError(f"x-kubernetes-validations not evaluated here: {rules}")


CrdValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"x-kubernetes-list-type": list_type, "x-kubernetes-validations": _cel})




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
    root = structural(schema)
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
