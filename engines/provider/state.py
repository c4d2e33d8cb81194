"""Terraform's own state format (version 4), written and read by the provider engine, so that
either engine can take a stack over from the other: `terraform plan` of a stack whose state this
module wrote reads it as its own and plans nothing when nothing changed.

The format (terraform's `internal/states/statefile/version4.go`): a JSON document with
`version` 4, the writing `terraform_version`, a `serial` that grows with every write, a
`lineage` that names the state's history (kept across writes, new only for a new state),
`outputs`, and `resources`: one entry per resource (`mode`, `type`, `name`, `provider` as the
provider's absolute address, `module` outside the root), each with its `instances`: the
resource type's `schema_version`, `attributes` (the object as cty's JSON encoding: sets as
arrays, a `dynamic` value as `{"value": ..., "type": ...}`), `sensitive_attributes`, `private`
(the provider's opaque bytes, base64) and `dependencies` (resource addresses).

Pure: documents in, documents out; the engine writes them where the terraform engine would
(`terraform.tfstate` of the stack, or the S3 backend's object).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from engines.provider.cty import (
    CtyType,
    CtyValue,
    Dynamic,
    ListOf,
    MapOf,
    Object,
    Primitive,
    SetOf,
    Tuple,
    Unknown,
    type_from_json,
    type_to_json,
)

STATE_VERSION = 4
AWS_PROVIDER = 'provider["registry.terraform.io/hashicorp/aws"]'


# UpgradeResourceState of one stored instance: (its provider address, type, the schema version it
# was written with, its stored JSON attributes) -> (its attributes in the current schema, that version)
Upgrade = Callable[[str, str, int, bytes], tuple[Mapping[str, CtyValue], int]]


class StateFormatError(ValueError):
    """A state document this module cannot read (another version, a malformed entry)."""


@dataclass(frozen=True)
class Instance:
    """One managed resource instance as the state holds it."""

    type: str
    name: str
    schema_version: int
    attributes: Mapping[str, CtyValue]
    private: bytes = b""
    dependencies: tuple[str, ...] = ()
    provider: str = AWS_PROVIDER
    index_key: int | str | None = None  # count (int) or for_each (str); None for a single instance

    @property
    def address(self) -> str:
        key = "" if self.index_key is None else f"[{self.index_key}]" if isinstance(self.index_key, int) \
            else f'["{self.index_key}"]'
        return f"{self.type}.{self.name}{key}"


@dataclass(frozen=True)
class State:
    """A stack's state: its history's name, its write count and its instances."""

    lineage: str = field(default_factory=lambda: str(uuid.uuid4()))
    serial: int = 0
    instances: tuple[Instance, ...] = ()

    def next(self, instances: Sequence[Instance]) -> State:
        """The state after a write: the same lineage, the serial one up."""
        return State(self.lineage, self.serial + 1, tuple(instances))


def to_json_value(value: CtyValue, ty: CtyType) -> Any:
    """`value` as cty's JSON encoding of `ty` (go-cty's `ctyjson.Marshal`): what state holds."""
    if value is None:
        return None
    if isinstance(value, Unknown):
        raise StateFormatError("an unknown value cannot be stored in state (it is known after apply)")
    if isinstance(ty, Primitive):
        if ty.name == "dynamic":
            if not isinstance(value, Dynamic):
                raise StateFormatError(f"a dynamic value must carry its type, not {type(value).__name__}")
            return {"value": to_json_value(value.value, value.type), "type": type_to_json(value.type)}
        if ty.name == "number" and isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else float(value)
        return value
    if isinstance(ty, ListOf | SetOf):
        assert isinstance(value, list)
        return [to_json_value(v, ty.element) for v in value]
    if isinstance(ty, MapOf):
        assert isinstance(value, dict)
        return {k: to_json_value(v, ty.element) for k, v in value.items()}
    if isinstance(ty, Tuple):
        assert isinstance(value, list)
        return [to_json_value(v, t) for v, t in zip(value, ty.elements, strict=True)]
    assert isinstance(ty, Object) and isinstance(value, dict)
    return {name: to_json_value(value.get(name), t) for name, t in ty.attributes.items()}


def from_json_value(raw: Any, ty: CtyType) -> CtyValue:
    """The inverse of `to_json_value`: a state attribute back as a cty value of `ty`."""
    if raw is None:
        return None
    if isinstance(ty, Primitive):
        if ty.name == "dynamic":
            inner = type_from_json(raw["type"])
            return Dynamic(inner, from_json_value(raw["value"], inner))
        return raw  # type: ignore[no-any-return]
    if isinstance(ty, ListOf | SetOf):
        return [from_json_value(v, ty.element) for v in raw]
    if isinstance(ty, MapOf):
        return {k: from_json_value(v, ty.element) for k, v in raw.items()}
    if isinstance(ty, Tuple):
        return [from_json_value(v, t) for v, t in zip(raw, ty.elements, strict=True)]
    return {name: from_json_value(raw.get(name), t) for name, t in ty.attributes.items()}


SensitivePaths = Callable[[Instance], list[list[dict[str, Any]]]]  # an instance's `sensitive_attributes`


def state_document(state: State, types: Mapping[str, Object], *, terraform_version: str,
                   sensitive: SensitivePaths | None = None) -> dict[str, Any]:
    """The version-4 document of `state`; `types`: each resource type's object type (its schema),
    by which the attributes are encoded; `sensitive`: each instance's `sensitive_attributes` (the
    schema's sensitive paths, `schema.sensitive_paths`; none without it). Instances of one
    resource are grouped in one entry."""
    resources: dict[tuple[str, str, str], dict[str, Any]] = {}
    for instance in state.instances:
        entry = resources.setdefault((instance.type, instance.name, instance.provider), {
            "mode": "managed", "type": instance.type, "name": instance.name, "provider": instance.provider,
            "instances": []})
        body: dict[str, Any] = {"schema_version": instance.schema_version,
                                "attributes": to_json_value(dict(instance.attributes), types[instance.type]),
                                "sensitive_attributes": sensitive(instance) if sensitive else []}
        if instance.index_key is not None:
            body = {"index_key": instance.index_key, **body}
        if instance.private:
            body["private"] = base64.b64encode(instance.private).decode()
        if instance.dependencies:
            body["dependencies"] = sorted(instance.dependencies)
        entry["instances"].append(body)
    return {"version": STATE_VERSION, "terraform_version": terraform_version, "serial": state.serial,
            "lineage": state.lineage, "outputs": {}, "resources": list(resources.values()), "check_results": None}


def read_state(document: Mapping[str, Any], types: Mapping[str, Object], *, upgrade: Upgrade | None = None) -> State:
    """A version-4 document (ours or terraform's) as a `State`: managed root-module resources only
    (a data source is read again on every plan; hypergov's stacks have no modules). `upgrade`: the
    provider's UpgradeResourceState of each instance, as terraform calls it on every state read
    (without it, the stored attributes are decoded by the current schema's type)."""
    if document.get("version") != STATE_VERSION:
        raise StateFormatError(f"state version {document.get('version')!r}: only version {STATE_VERSION} is read")
    instances = []
    for entry in document.get("resources") or []:
        if entry.get("mode") != "managed":
            continue
        if entry.get("module"):
            raise StateFormatError(f"{entry.get('module')}.{entry.get('type')}.{entry.get('name')}: a module's "
                                   "resource; hypergov's stacks have none")
        ty = types.get(entry["type"])
        if ty is None:
            raise StateFormatError(f"{entry['type']}.{entry['name']}: a resource type the provider does not have")
        provider = entry.get("provider", AWS_PROVIDER)
        for body in entry.get("instances") or []:
            version, stored = int(body.get("schema_version", 0)), body.get("attributes") or {}
            if upgrade is not None:
                attributes, version = upgrade(provider, entry["type"], version, json.dumps(stored).encode())
            else:
                attributes = from_json_value(stored, ty) or {}  # type: ignore[assignment]
            instances.append(Instance(
                type=entry["type"], name=entry["name"], schema_version=version, attributes=attributes,
                private=base64.b64decode(body["private"]) if body.get("private") else b"",
                dependencies=tuple(body.get("dependencies") or ()), provider=provider,
                index_key=body.get("index_key")))
    return State(lineage=str(document["lineage"]), serial=int(document["serial"]), instances=tuple(instances))
