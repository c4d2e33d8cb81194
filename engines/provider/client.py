"""A typed client of one provider process: protocol 5's calls with cty values in and out.

What terraform core does around each call (which state is prior, what is proposed, when to
refresh, writing the state file) is the engine's; this module only turns Python values into the
protocol's messages and answers back into typed values, diagnostics included, so that no caller
touches protobuf or msgpack. The schema is fetched once per client (GetSchema answers every one of
the AWS provider's ~1,500 resource types in one message); a resource type's schema is turned into
typed values the first time it is used.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import grpc

from engines.provider import cty
from engines.provider.cty import CtyValue
from engines.provider.proto import tfplugin5_pb2 as pb
from engines.provider.schema import Attribute, Block, NestedBlock, Nesting, Schema

SERVICE = "/tfplugin5.Provider/"
TERRAFORM_VERSION = "1.9.8"  # what Configure reports as the calling terraform's version
_NESTING: dict[int, Nesting] = {1: "single", 2: "list", 3: "set", 4: "map", 5: "group"}
_SEVERITY: dict[int, Literal["invalid", "error", "warning"]] = {0: "invalid", 1: "error", 2: "warning"}
_DEFERRED = {0: "unknown", 1: "resource config unknown", 2: "provider config unknown", 3: "absent prerequisite"}


@dataclass(frozen=True)
class PathStep:
    """One step of an attribute path: an attribute by name, or an element by key or index."""

    attribute: str | None = None
    key: str | int | None = None

    def __str__(self) -> str:
        return f".{self.attribute}" if self.attribute is not None else f"[{self.key!r}]"


AttributePath = tuple[PathStep, ...]


@dataclass(frozen=True)
class Diagnostic:
    severity: Literal["invalid", "error", "warning"]
    summary: str
    detail: str
    path: AttributePath = ()

    def __str__(self) -> str:
        where = "".join(str(step) for step in self.path).lstrip(".")
        return f"{self.severity}: {self.summary}" + (f" ({where})" if where else "") + \
            (f": {self.detail}" if self.detail else "")


Diagnostics = tuple[Diagnostic, ...]


def has_errors(diagnostics: Diagnostics) -> bool:
    return any(d.severity == "error" for d in diagnostics)


@dataclass(frozen=True)
class PlannedChange:
    planned_state: CtyValue
    requires_replace: tuple[AttributePath, ...]
    planned_private: bytes
    diagnostics: Diagnostics
    legacy_type_system: bool  # SDKv2 providers: terraform tolerates their small inconsistencies
    deferred: str | None = None


@dataclass(frozen=True)
class AppliedChange:
    new_state: CtyValue
    private: bytes
    diagnostics: Diagnostics
    legacy_type_system: bool


@dataclass(frozen=True)
class ReadState:
    new_state: CtyValue  # None: the object is gone
    private: bytes
    diagnostics: Diagnostics
    deferred: str | None = None


@dataclass(frozen=True)
class UpgradedState:
    state: CtyValue
    diagnostics: Diagnostics


@dataclass(frozen=True)
class ImportedResource:
    type_name: str
    state: CtyValue
    private: bytes


@dataclass(frozen=True)
class ImportedState:
    resources: tuple[ImportedResource, ...]
    diagnostics: Diagnostics
    deferred: str | None = None


@dataclass(frozen=True)
class ServerCapabilities:
    plan_destroy: bool
    get_provider_schema_optional: bool
    move_resource_state: bool


class ProviderSchemas:
    """GetSchema's answer: the provider's own schema, and each resource type's on first use."""

    def __init__(self, response: Any) -> None:
        self._response = response
        self.serialized = response.SerializeToString  # for a cache of the answer (`ProviderPool`)
        self.provider = schema_from_pb(response.provider)
        self.capabilities = ServerCapabilities(response.server_capabilities.plan_destroy,
                                               response.server_capabilities.get_provider_schema_optional,
                                               response.server_capabilities.move_resource_state)
        self.diagnostics = diagnostics_from_pb(response.diagnostics)
        self._resources: dict[str, Schema] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_bytes(cls, data: bytes) -> ProviderSchemas:
        """A kept answer (`serialized()`); protobuf's DecodeError when it is not one."""
        return cls(pb.GetProviderSchema.Response.FromString(data))

    @property
    def resource_types(self) -> frozenset[str]:
        return frozenset(self._response.resource_schemas)

    def resource(self, type_name: str) -> Schema:
        return self._schema(self._response.resource_schemas, type_name, "resource type")

    def data_source(self, type_name: str) -> Schema:
        return self._schema(self._response.data_source_schemas, type_name, "data source")

    def _schema(self, schemas: Any, type_name: str, what: str) -> Schema:
        key = f"{what}:{type_name}"
        with self._lock:
            if key not in self._resources:
                if type_name not in schemas:
                    raise KeyError(f"the provider has no {what} {type_name}")
                self._resources[key] = schema_from_pb(schemas[type_name])
            return self._resources[key]


def schema_from_pb(message: Any) -> Schema:
    return Schema(version=int(message.version), block=_block_from_pb(message.block))


def _block_from_pb(block: Any) -> Block:
    attributes = {a.name: Attribute(type=cty.type_from_json(json.loads(a.type)), required=a.required,
                                    optional=a.optional, computed=a.computed, sensitive=a.sensitive,
                                    write_only=a.write_only)
                  for a in block.attributes}
    blocks = {b.type_name: NestedBlock(nesting=_NESTING[b.nesting], block=_block_from_pb(b.block),
                                       min_items=int(b.min_items), max_items=int(b.max_items))
              for b in block.block_types}
    return Block(attributes=attributes, blocks=blocks)


def path_from_pb(path: Any) -> AttributePath:
    steps: list[PathStep] = []
    for step in path.steps:
        which = step.WhichOneof("selector")
        if which == "attribute_name":
            steps.append(PathStep(attribute=step.attribute_name))
        elif which == "element_key_string":
            steps.append(PathStep(key=step.element_key_string))
        elif which == "element_key_int":
            steps.append(PathStep(key=int(step.element_key_int)))
    return tuple(steps)


def diagnostics_from_pb(diagnostics: Any) -> Diagnostics:
    return tuple(Diagnostic(severity=_SEVERITY.get(d.severity, "invalid"), summary=d.summary, detail=d.detail,
                            path=path_from_pb(d.attribute) if d.HasField("attribute") else ())
                 for d in diagnostics)


def _deferred(response: Any) -> str | None:
    return _DEFERRED.get(response.deferred.reason, "unknown") if response.HasField("deferred") else None


class ProviderClient:
    """Calls on one provider process's channel (`engines.provider.plugin.ProviderProcess.channel`)."""

    def __init__(self, channel: grpc.Channel, *, timeout_s: float = 600.0,
                 known_schema: ProviderSchemas | None = None) -> None:
        """`known_schema`: GetSchema's answer from another process of the same provider build,
        used instead of asking when that answer said the provider needs no GetSchema call first
        (`get_provider_schema_optional`, as terraform's own schema cache relies on it)."""
        self._channel, self.timeout_s = channel, timeout_s
        self._schemas: ProviderSchemas | None = (
            known_schema if known_schema is not None and known_schema.capabilities.get_provider_schema_optional
            else None)
        self._lock = threading.Lock()
        self._stubs: dict[str, Callable[..., Any]] = {}

    def _call(self, method: str, request: Any, response_type: Any) -> Any:
        stub = self._stubs.get(method)
        if stub is None:
            stub = self._channel.unary_unary(SERVICE + method, request_serializer=lambda m: m.SerializeToString(),
                                             response_deserializer=response_type.FromString)
            self._stubs[method] = stub
        return stub(request, timeout=self.timeout_s)

    def schema(self) -> ProviderSchemas:
        """GetSchema, once."""
        with self._lock:
            if self._schemas is None:
                response = self._call("GetSchema", pb.GetProviderSchema.Request(), pb.GetProviderSchema.Response)
                self._schemas = ProviderSchemas(response)
            return self._schemas

    def _value(self, value: CtyValue, ty: cty.CtyType) -> Any:
        return pb.DynamicValue(msgpack=cty.encode(value, ty))

    def prepare(self, config: Mapping[str, CtyValue]) -> tuple[Diagnostics, bytes]:
        """PrepareProviderConfig: the provider's diagnostics for `config` and the configuration it
        prepared (msgpack of the provider's type, what Configure is then given). The AWS provider
        spends ~2-3 s of CPU here (measured; the framework half of the provider, over its ~300
        endpoint attributes), and the answer depends only on the provider build and `config`."""
        value = self._value(dict(config), self.schema().provider.type)
        prepared = self._call("PrepareProviderConfig", pb.PrepareProviderConfig.Request(config=value),
                              pb.PrepareProviderConfig.Response)
        return diagnostics_from_pb(prepared.diagnostics), bytes(prepared.prepared_config.msgpack or value.msgpack)

    def configure(self, config: Mapping[str, CtyValue], *, validate: bool = True,
                  prepared: bytes | None = None) -> Diagnostics:
        """PrepareProviderConfig (unless `validate` is False or `prepared`, a configuration
        `prepare` made from this `config` before, is given), then Configure with the prepared
        configuration."""
        diagnostics: Diagnostics = ()
        if prepared is None and validate:
            diagnostics, prepared = self.prepare(config)
            if has_errors(diagnostics):
                return diagnostics
        value = pb.DynamicValue(msgpack=prepared) if prepared is not None else \
            self._value(dict(config), self.schema().provider.type)
        configured = self._call("Configure", pb.Configure.Request(
            terraform_version=TERRAFORM_VERSION, config=value, client_capabilities=pb.ClientCapabilities()),
            pb.Configure.Response)
        return diagnostics + diagnostics_from_pb(configured.diagnostics)

    def validate(self, type_name: str, config: CtyValue) -> Diagnostics:
        ty = self.schema().resource(type_name).type
        response = self._call("ValidateResourceTypeConfig", pb.ValidateResourceTypeConfig.Request(
            type_name=type_name, config=self._value(config, ty), client_capabilities=pb.ClientCapabilities()),
            pb.ValidateResourceTypeConfig.Response)
        return diagnostics_from_pb(response.diagnostics)

    def plan(self, type_name: str, *, prior: CtyValue, proposed: CtyValue, config: CtyValue,
             prior_private: bytes = b"") -> PlannedChange:
        """PlanResourceChange. `proposed` None with `config` None plans the object's deletion."""
        ty = self.schema().resource(type_name).type
        response = self._call("PlanResourceChange", pb.PlanResourceChange.Request(
            type_name=type_name, prior_state=self._value(prior, ty), proposed_new_state=self._value(proposed, ty),
            config=self._value(config, ty), prior_private=prior_private,
            client_capabilities=pb.ClientCapabilities()), pb.PlanResourceChange.Response)
        return PlannedChange(
            planned_state=cty.decode(response.planned_state.msgpack, ty) if response.planned_state.msgpack else None,
            requires_replace=tuple(path_from_pb(p) for p in response.requires_replace),
            planned_private=bytes(response.planned_private), diagnostics=diagnostics_from_pb(response.diagnostics),
            legacy_type_system=response.legacy_type_system, deferred=_deferred(response))

    def apply(self, type_name: str, *, prior: CtyValue, planned: CtyValue, config: CtyValue,
              planned_private: bytes = b"") -> AppliedChange:
        """ApplyResourceChange: create (prior None), update, or delete (planned None)."""
        ty = self.schema().resource(type_name).type
        response = self._call("ApplyResourceChange", pb.ApplyResourceChange.Request(
            type_name=type_name, prior_state=self._value(prior, ty), planned_state=self._value(planned, ty),
            config=self._value(config, ty), planned_private=planned_private), pb.ApplyResourceChange.Response)
        return AppliedChange(
            new_state=cty.decode(response.new_state.msgpack, ty) if response.new_state.msgpack else None,
            private=bytes(response.private), diagnostics=diagnostics_from_pb(response.diagnostics),
            legacy_type_system=response.legacy_type_system)

    def read(self, type_name: str, *, current: CtyValue, private: bytes = b"") -> ReadState:
        """ReadResource: the object as it is now (None when it no longer exists)."""
        ty = self.schema().resource(type_name).type
        response = self._call("ReadResource", pb.ReadResource.Request(
            type_name=type_name, current_state=self._value(current, ty), private=private,
            client_capabilities=pb.ClientCapabilities()), pb.ReadResource.Response)
        return ReadState(new_state=cty.decode(response.new_state.msgpack, ty) if response.new_state.msgpack else None,
                         private=bytes(response.private), diagnostics=diagnostics_from_pb(response.diagnostics),
                         deferred=_deferred(response))

    def read_data(self, type_name: str, config: CtyValue) -> ReadState:
        """ReadDataSource: what a data source's configuration finds (its whole object, the
        configuration's values with the computed ones filled in)."""
        ty = self.schema().data_source(type_name).type
        response = self._call("ReadDataSource", pb.ReadDataSource.Request(
            type_name=type_name, config=self._value(config, ty), client_capabilities=pb.ClientCapabilities()),
            pb.ReadDataSource.Response)
        return ReadState(new_state=cty.decode(response.state.msgpack, ty) if response.state.msgpack else None,
                         private=b"", diagnostics=diagnostics_from_pb(response.diagnostics),
                         deferred=_deferred(response))

    def upgrade_state(self, type_name: str, *, version: int, raw_json: bytes) -> UpgradedState:
        """UpgradeResourceState: a stored state (terraform's JSON `attributes`, written with schema
        `version`) in the current schema's type."""
        ty = self.schema().resource(type_name).type
        response = self._call("UpgradeResourceState", pb.UpgradeResourceState.Request(
            type_name=type_name, version=version, raw_state=pb.RawState(json=raw_json)),
            pb.UpgradeResourceState.Response)
        state = cty.decode(response.upgraded_state.msgpack, ty) if response.upgraded_state.msgpack else None
        return UpgradedState(state=state, diagnostics=diagnostics_from_pb(response.diagnostics))

    def import_state(self, type_name: str, import_id: str) -> ImportedState:
        """ImportResourceState: the objects an import id names (each still to be read)."""
        response = self._call("ImportResourceState", pb.ImportResourceState.Request(
            type_name=type_name, id=import_id, client_capabilities=pb.ClientCapabilities()),
            pb.ImportResourceState.Response)
        resources = tuple(
            ImportedResource(type_name=r.type_name,
                             state=cty.decode(r.state.msgpack, self.schema().resource(r.type_name).type),
                             private=bytes(r.private))
            for r in response.imported_resources)
        return ImportedState(resources=resources, diagnostics=diagnostics_from_pb(response.diagnostics),
                             deferred=_deferred(response))
