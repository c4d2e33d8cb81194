"""A captured Pulumi resource graph -> Terraform JSON configuration (pure).

Each `aws:*` type the components use has an explicit mapping (`engines.type_mappings.MAPPINGS`): the Terraform type,
renamed inputs, which inputs are nested blocks, and which carry JSON documents. Everything else
is camelCase -> snake_case. `check_against_schema` verifies every produced attribute exists in
the installed provider's schema, so a pulumi-aws / provider version skew fails loudly instead of
being silently dropped. Explicit `aws` providers of the graph become provider aliases; inputs that
that depend on another resource's output (the graph's property dependencies: the only one is an
Organizations policy's generated id) become Terraform references (`${type.name.id}`), and the graph's
dependencies become `depends_on`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engines.settings import AWS_SERVICES, AwsSettings
from engines.type_mappings import (
    AWS_PROVIDER_TYPE,
    DATA_SOURCES,
    MAPPINGS,
    MAPPINGS_BY_TF,
    TypeMapping,
    snake,
    tf_name,
)
from stacks.resource_graph import LOOKUP_PLACEHOLDER


class GraphResource(Protocol):
    @property
    def urn(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def inputs(self) -> Mapping[str, Any]: ...
    @property
    def depends_on(self) -> Sequence[str]: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def property_dependencies(self) -> Mapping[str, Sequence[str]]: ...
    @property
    def lookup(self) -> bool: ...


class UnmappedResourceError(Exception):
    """The graph holds an `aws:*` type the terraform engine has no explicit mapping for."""


def _convert(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {snake(k): _convert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_convert(v) for v in value]
    return value


def _body(mapping: TypeMapping, inputs: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key, value in sorted(inputs.items()):
        if key in mapping.drop or value is None:
            continue
        name = mapping.renames.get(key, snake(key))
        if key == "tags" and isinstance(value, Mapping):  # tag keys are data, never renamed
            body[name] = dict(value)
        elif name in mapping.blocks:
            items = value if isinstance(value, list) else [value]
            body[name] = [_convert(v) for v in items]
        else:
            body[name] = _convert(value)
    return body


@dataclass(frozen=True)
class Translation:
    config: dict[str, Any]
    addresses: dict[str, str]  # pulumi URN -> terraform address

    def json(self) -> str:
        return json.dumps(self.config, indent=2, sort_keys=True) + "\n"


def _provider_input(value: Any) -> Any:
    """Pulumi passes non-string provider config as JSON text (`'["1111..."]'`)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def provider_block(aws: AwsSettings, *, alias: str | None, inputs: Mapping[str, Any]) -> dict[str, Any]:
    inputs = {k: _provider_input(v) for k, v in inputs.items()}
    block: dict[str, Any] = {"region": inputs.get("region"), "max_retries": aws.max_retries}
    if alias:
        block["alias"] = alias
    if inputs.get("allowedAccountIds"):
        block["allowed_account_ids"] = list(inputs["allowedAccountIds"])
    role = {snake(k): v for k, v in (inputs.get("assumeRole") or {}).items()}
    if role.get("role_arn"):
        block["assume_role"] = [{"role_arn": role["role_arn"], "session_name": role.get("session_name") or "hypergov"}]
    if aws.profile:
        block["profile"] = aws.profile
    endpoints = {s: aws.endpoint_for(s) for s in AWS_SERVICES if aws.endpoint_for(s)}
    if endpoints:
        block["endpoints"] = [endpoints]
        block.update({"skip_credentials_validation": True, "skip_metadata_api_check": True,
                      "skip_region_validation": True})
    return {k: v for k, v in block.items() if v is not None}


def translate(resources: Iterable[GraphResource], *, aws: AwsSettings, provider_version: str,
              default_region: str) -> Translation:
    items = sorted(resources, key=lambda r: r.urn)
    providers: dict[str, str] = {}  # provider URN -> alias
    provider_blocks: list[dict[str, Any]] = [provider_block(aws, alias=None, inputs={"region": default_region})]
    for res in items:
        if res.type == AWS_PROVIDER_TYPE:
            alias = tf_name(res.name).replace("-", "_")
            providers[res.urn] = alias
            provider_blocks.append(provider_block(aws, alias=alias, inputs=res.inputs))
    addresses: dict[str, str] = {}
    lookups = {r.name: r for r in items if r.lookup}
    mapped = [r for r in items if r.type.startswith("aws:") and not r.lookup]
    for res in mapped:
        mapping = MAPPINGS.get(res.type)
        if mapping is None:
            raise UnmappedResourceError(f"no terraform mapping for {res.type} ({res.name}); add one to MAPPINGS")
        addresses[res.urn] = f"{mapping.tf_type}.{tf_name(res.name)}"
    blocks: dict[str, dict[str, Any]] = {}
    for res in mapped:
        mapping = MAPPINGS[res.type]
        body = _body(mapping, res.inputs)
        for key, sources in sorted(res.property_dependencies.items()):
            targets = [addresses[u] for u in sources if u in addresses]
            if len(targets) == 1 and key in res.inputs and isinstance(res.inputs[key], str) \
                    and not LOOKUP_PLACEHOLDER.fullmatch(res.inputs[key]):
                id_attribute = MAPPINGS_BY_TF[targets[0].split(".")[0]].id_attribute
                body[mapping.renames.get(key, snake(key))] = f"${{{targets[0]}.{id_attribute}}}"
        blocks.setdefault(mapping.tf_type, {})[tf_name(res.name)] = _placed(
            _resolved(body, lookups), res, addresses, providers)
    data: dict[str, dict[str, Any]] = {}
    for res in lookups.values():
        mapping = _data_source(res.type)
        data.setdefault(mapping.tf_type, {})[tf_name(res.name)] = _placed(
            _body(mapping, res.inputs), res, addresses, providers)
    config: dict[str, Any] = {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": provider_version}}},
        "provider": {"aws": provider_blocks},
    }
    if blocks:  # Terraform refuses an empty "resource" object
        config["resource"] = blocks
    if data:
        config["data"] = data
    return Translation(config=config, addresses=addresses)


def _data_source(type_token: str) -> TypeMapping:
    mapping = DATA_SOURCES.get(type_token)
    if mapping is None:
        raise UnmappedResourceError(f"no terraform data source for the lookup {type_token}; add one to DATA_SOURCES")
    return mapping


def _placed(body: dict[str, Any], res: GraphResource, addresses: Mapping[str, str],
            providers: Mapping[str, str]) -> dict[str, Any]:
    """The body with its `depends_on` (resources of the graph) and its provider alias."""
    deps = sorted({addresses[d] for d in res.depends_on if d in addresses})
    if deps:
        body["depends_on"] = deps
    provider_urn = _provider_urn(res.provider)
    if provider_urn in providers:
        body["provider"] = f"aws.{providers[provider_urn]}"
    return body


def _resolved(value: Any, lookups: Mapping[str, GraphResource]) -> Any:
    """Lookup placeholders (`${lookup:<name>:<path>}`, `stacks.graph`) as references to the data
    source that reads them."""
    if isinstance(value, dict):
        return {k: _resolved(v, lookups) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, lookups) for v in value]
    if not isinstance(value, str) or "${lookup:" not in value:
        return value

    def reference(found: Any) -> str:
        lookup = lookups.get(found["name"])
        if lookup is None:
            raise UnmappedResourceError(f"a placeholder names the lookup {found['name']}, which the graph lacks")
        mapping = _data_source(lookup.type)
        template = mapping.results.get(found["path"])
        if template is None:
            raise UnmappedResourceError(f"{lookup.type} gives no '{found['path']}'; add it to DATA_SOURCES")
        return "${" + template.replace("@", f"data.{mapping.tf_type}.{tf_name(lookup.name)}") + "}"

    return LOOKUP_PLACEHOLDER.sub(reference, value)


def _provider_urn(reference: str | None) -> str:
    """Pulumi provider references are '<urn>::<id>'; the URN itself contains '::'."""
    if not reference:
        return ""
    return reference.rsplit("::", 1)[0] if reference.count("::") > 3 else reference


def check_against_schema(config: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Attributes and blocks the installed provider does not know (empty when all are known)."""
    provider = next(iter(schema["provider_schemas"].values()))
    problems: list[str] = []
    for section, schemas, what in (("resource", "resource_schemas", "resource"),
                                   ("data", "data_source_schemas", "data source")):
        for tf_type, resources in config.get(section, {}).items():
            spec = provider.get(schemas, {}).get(tf_type)
            if spec is None:
                problems.append(f"{tf_type}: not a {what} type of the installed provider")
                continue
            prefix = "data." if section == "data" else ""
            for name, body in resources.items():
                problems += [f"{prefix}{tf_type}.{name}: {p}"
                             for p in _check_block(body, spec["block"], top=True, data=section == "data")]
    return problems


_META = frozenset({"depends_on", "provider", "lifecycle", "count", "for_each"})


def _check_block(body: Mapping[str, Any], block: Mapping[str, Any], *, top: bool = False,
                 data: bool = False) -> list[str]:
    problems: list[str] = []
    attributes = block.get("attributes", {})
    nested = block.get("block_types", {})
    for key, value in body.items():
        if top and key in _META:
            continue
        if key in attributes:
            if not data and attributes[key].get("computed") and not attributes[key].get("optional") \
                    and not attributes[key].get("required"):
                problems.append(f"'{key}' is computed by the provider and cannot be set")
        elif key in nested:
            for item in value if isinstance(value, list) else [value]:
                problems += [f"{key}.{p}" for p in _check_block(item, nested[key]["block"])]
        else:
            problems.append(f"unknown attribute '{key}'")
    return problems
