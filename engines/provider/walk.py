"""One stack planned and applied through the provider itself, resource by resource in dependency
order, as terraform core walks its graph (issue 34): refresh each object in the state, evaluate
its configuration with what it refers to, propose the new state, let the provider plan it; then,
at apply, evaluate again with the values now known, have the provider plan again, require the
new plan to keep every value the saved plan knew (terraform's "inconsistent final plan" check),
and apply. A replacement deletes first, then creates. Resources no longer configured are deleted
after the others, newest first. The state is written after every object (`write`), so a process
killed in the middle leaves a state the next pass (either engine) continues from.

As terraform's walk does (`-parallelism`, 10 by default), the objects of the state are read
side by side before the plan, and independent objects are applied side by side: the provider
spends most of a call waiting (for AWS, or in its own waits: five seconds before every budget
read, a poll every five seconds while Identity Center provisions a permission set), so one at a
time a stack with four account assignments took forty seconds to apply where one wait suffices.

The plan's `ResourceChange`s are made by the terraform engine's own converter from the entry
`terraform show -json` would print (`showplan.change_from_entry`), so both engines describe a
change alike.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engines.plan import Action, ResourceChange
from engines.provider.client import AttributePath, Diagnostics, ProviderClient, ReadState, has_errors
from engines.provider.config import (
    Reference,
    ResourceConfig,
    block_value,
    dependency_order,
    resources_of,
)
from engines.provider.cty import (
    UNKNOWN,
    CtyType,
    CtyValue,
    ListOf,
    MapOf,
    Object,
    SetOf,
    Tuple,
    Unknown,
    is_wholly_known,
)
from engines.provider.schema import Block, proposed_new, sensitive_mask
from engines.provider.state import AWS_PROVIDER, Instance, State, Upgrade, to_json_value
from engines.schedule import run_in_dependency_order
from engines.showplan import change_from_entry

Clients = Mapping[str | None, ProviderClient]  # provider alias (`aws.west`; None: the default) -> configured client
ReadData = Callable[[ProviderClient, str, CtyValue], ReadState]  # a data source's read: client, type, config
PARALLELISM = 10  # objects read or applied at once within a stack: terraform's `-parallelism` default
T = TypeVar("T")


class ProviderError(RuntimeError):
    """The provider refused or failed: which object, and its diagnostics."""

    def __init__(self, address: str, step: str, diagnostics: Diagnostics, why: str = "") -> None:
        self.address, self.step, self.diagnostics = address, step, diagnostics
        said = why or "; ".join(str(d) for d in diagnostics if d.severity == "error")
        super().__init__(f"{address}: {step}: {said}")


@dataclass
class PlannedResource:
    """One object's planned change, with what applying it needs."""

    block: ResourceConfig | None  # None: no longer configured (deleted)
    address: str
    type: str
    name: str
    provider: str | None
    action: Action
    prior: CtyValue
    prior_private: bytes
    planned: CtyValue
    planned_private: bytes = b""
    replace_paths: tuple[AttributePath, ...] = ()
    schema_version: int = 0
    legacy_type_system: bool = False  # SDKv2: terraform tolerates a final plan that differs (a warning only)
    importing: str | None = None  # the import id of an `import` block that brings a live object into the state


@dataclass
class StackPlan:
    resources: list[PlannedResource] = field(default_factory=list)
    data: dict[str, CtyValue] = field(default_factory=dict)  # data sources read at plan time
    # Data sources read at apply time, as terraform defers them: their configuration is not yet
    # known, or they depend on a resource with a change pending (e.g. the Identity Center role an
    # account assignment provisions, looked up after the assignment is applied).
    deferred: dict[str, ResourceConfig] = field(default_factory=dict)
    # Objects of the state no longer configured that the refresh found gone: nothing to delete;
    # an apply drops them from the state, as terraform's apply keeps the refreshed state.
    gone: list[str] = field(default_factory=list)

    def entries(self, clients: Clients) -> list[dict[str, Any]]:
        """Each change as `terraform show -json` prints it in `resource_changes`."""
        return [entry_of(r, clients[r.provider].schema().resource(r.type).block) for r in self.resources]

    def changes(self, clients: Clients) -> tuple[ResourceChange, ...]:
        return tuple(change_from_entry(e) for e in self.entries(clients))

    @property
    def has_changes(self) -> bool:
        return any(r.action != Action.NOOP or r.importing is not None for r in self.resources)


def upgrader(clients: Clients) -> Upgrade:
    """UpgradeResourceState of each stored instance by its own provider, as terraform calls it on
    every state read: the provider's migration from the schema version the state was written with
    (none of hypergov's types is above version 0 in 5.100.0; a provider upgrade may change that),
    and its normalisation of the stored JSON."""

    def upgrade(provider: str, type_name: str, version: int, raw_json: bytes) -> tuple[Mapping[str, CtyValue], int]:
        client = clients[_alias(provider)]
        upgraded = client.upgrade_state(type_name, version=version, raw_json=raw_json)
        _check(f"{type_name} (stored with schema version {version})", "upgrade state", upgraded.diagnostics)
        if not isinstance(upgraded.state, Mapping):
            raise ProviderError(type_name, "upgrade state", upgraded.diagnostics, "the provider returned no object")
        return upgraded.state, client.schema().resource(type_name).version

    return upgrade


def _check(address: str, step: str, diagnostics: Diagnostics) -> None:
    if has_errors(diagnostics):
        raise ProviderError(address, step, diagnostics)


def _walk(value: CtyValue, path: tuple[str, ...]) -> CtyValue:
    for step in path:
        if isinstance(value, Unknown):
            return UNKNOWN
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value


def lookup_in(values: Mapping[str, CtyValue]) -> Callable[[Reference], CtyValue]:
    return lambda ref: _walk(values.get(ref.target, UNKNOWN), ref.path)


def plan_stack(clients: Clients, config: Mapping[str, Any], state: State, *, refresh: bool = True,
               parallelism: int = PARALLELISM, read_data: ReadData | None = None) -> StackPlan:
    """What applying `config` over `state` would do, object by object (every object of the state
    read again first, `parallelism` at a time, unless `refresh` is false). `read_data`: how a data
    source is read at plan time (the run's `DataReads.read`; by default the provider's own read)."""
    plan = StackPlan()
    values: dict[str, CtyValue] = {}
    prior_of = {i.address: i for i in state.instances}
    if refresh:
        prior_of = {a: i for a, i in zip(prior_of, _refreshed(clients, state.instances, parallelism),
                                         strict=True) if i is not None}
    imports = {str(block["to"]): str(block["id"]) for block in config.get("import", [])}
    pending: set[str] = set()  # resources with a change, and data sources read only at apply
    ordered = dependency_order(resources_of(config))
    for block in ordered:
        client = clients[block.provider]
        if block.mode == "data":
            schema = client.schema().data_source(block.type)
            value = block_value(schema.block, block.body, lookup_in(values), block.address)
            if is_wholly_known(value) and not block.needs & pending:
                read = read_data(client, block.type, value) if read_data else client.read_data(block.type, value)
                _check(block.address, "read", read.diagnostics)
                plan.data[block.address] = values[block.address] = read.new_state
            else:
                values[block.address] = UNKNOWN
                plan.deferred[block.address] = block
                pending.add(block.address)
            continue
        instance = prior_of.get(block.address)
        importing = imports.get(block.address) if instance is None else None
        if importing is not None:
            instance = _imported(client, block, importing)
        planned = _plan_one(client, block, instance, values, refresh=importing is not None)
        planned.importing = importing
        plan.resources.append(planned)
        if planned.action != Action.NOOP:
            pending.add(block.address)
        values[block.address] = planned.prior if planned.action == Action.NOOP else planned.planned
    configured = {b.address for b in ordered}
    for instance in reversed(state.instances):
        if instance.address in configured:
            continue
        if instance.address in prior_of:
            plan.resources.append(_plan_delete(clients[_alias(instance.provider)], prior_of[instance.address]))
        else:
            plan.gone.append(instance.address)
    return plan


def _side_by_side(work: Callable[[T], Any], items: Sequence[T], parallelism: int) -> list[Any]:
    """`work` of each item, `parallelism` at a time, in the items' order; the first error raised."""
    if len(items) <= 1 or parallelism <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(parallelism, len(items))) as pool:
        return list(pool.map(work, items))


def _refreshed(clients: Clients, instances: Sequence[Instance], parallelism: int) -> list[Instance | None]:
    """Each object read again (None: gone), with its new attributes and private data."""
    def read_one(instance: Instance) -> Instance | None:
        read = clients[_alias(instance.provider)].read(instance.type, current=dict(instance.attributes),
                                                       private=instance.private)
        _check(instance.address, "refresh", read.diagnostics)
        if not isinstance(read.new_state, dict):
            return None
        return dataclasses.replace(instance, attributes=read.new_state, private=read.private)
    return _side_by_side(read_one, instances, parallelism)


def _imported(client: ProviderClient, block: ResourceConfig, import_id: str) -> Instance:
    """The live object an `import` block names, as the provider's ImportResourceState gives it
    (then read, as terraform does, before it is planned)."""
    found = client.import_state(block.type, import_id)
    _check(block.address, "import", found.diagnostics)
    matching = [r for r in found.resources if r.type_name == block.type]
    if len(matching) != 1:
        raise ProviderError(block.address, "import", found.diagnostics,
                            f"import id {import_id!r} names {len(matching)} objects of type {block.type}, not one")
    schema = client.schema().resource(block.type)
    state = matching[0].state
    return Instance(block.type, block.name, schema.version, state if isinstance(state, dict) else {},
                    matching[0].private)


def refresh_entries(clients: Clients, state: State, *, parallelism: int = PARALLELISM) -> list[dict[str, Any]]:
    """What changed outside: each object of `state` read again, as the `resource_drift` entries of
    a refresh-only plan (an object gone is a delete, one that differs an update)."""
    entries = []
    for instance, now in zip(state.instances, _refreshed(clients, state.instances, parallelism), strict=True):
        if now is not None and now.attributes == instance.attributes:
            continue
        block = clients[_alias(instance.provider)].schema().resource(instance.type).block
        before, after = dict(instance.attributes), dict(now.attributes) if now is not None else None
        ty = block.object_type()
        entries.append({"address": instance.address, "mode": "managed", "type": instance.type,
                        "name": instance.name, "change": {
                            "actions": ["delete"] if now is None else ["update"],
                            "before": to_json_value(before, ty),
                            "after": to_json_value(after, ty) if after is not None else None,
                            "after_unknown": False, "before_sensitive": sensitive_mask(block, before),
                            "after_sensitive": sensitive_mask(block, after)}})
    return entries


def _alias(provider: str) -> str | None:
    """`provider["registry.terraform.io/hashicorp/aws"].west` -> `aws.west` (None: the default)."""
    return None if provider.endswith("]") else f"aws.{provider.rsplit('.', 1)[1]}"


def _provider_address(alias: str | None) -> str:
    return AWS_PROVIDER if alias is None else f"{AWS_PROVIDER}.{alias.split('.', 1)[1]}"


def _plan_one(client: ProviderClient, block: ResourceConfig, instance: Instance | None,
              values: Mapping[str, CtyValue], *, refresh: bool) -> PlannedResource:
    schema = client.schema().resource(block.type)
    prior: CtyValue = dict(instance.attributes) if instance else None
    private = instance.private if instance else b""
    if instance is not None and refresh:
        read = client.read(block.type, current=prior, private=private)
        _check(block.address, "refresh", read.diagnostics)
        prior, private = read.new_state, read.private
    value = block_value(schema.block, block.body, lookup_in(values), block.address)
    planned = client.plan(block.type, prior=prior, proposed=proposed_new(schema.block, prior, value), config=value,
                          prior_private=private)
    _check(block.address, "plan", planned.diagnostics)
    replace_paths = tuple(p for p in planned.requires_replace if _at(prior, p) != _at(planned.planned_state, p))
    action = (Action.CREATE if prior is None else Action.REPLACE if replace_paths
              else Action.NOOP if planned.planned_state == prior else Action.UPDATE)
    return PlannedResource(block, block.address, block.type, block.name, block.provider, action, prior, private,
                           planned.planned_state, planned.planned_private, replace_paths, schema.version,
                           planned.legacy_type_system)


def _plan_delete(client: ProviderClient, instance: Instance) -> PlannedResource:
    planned = client.plan(instance.type, prior=dict(instance.attributes), proposed=None, config=None,
                          prior_private=instance.private)
    _check(instance.address, "plan", planned.diagnostics)
    return PlannedResource(None, instance.address, instance.type, instance.name, _alias(instance.provider),
                           Action.DELETE, dict(instance.attributes), instance.private, None,
                           planned.planned_private, (), instance.schema_version)


def _at(value: CtyValue, path: AttributePath) -> CtyValue:
    for step in path:
        if isinstance(value, dict) and step.attribute is not None:
            value = value.get(step.attribute)
        elif isinstance(value, list) and isinstance(step.key, int) and step.key < len(value):
            value = value[step.key]
        else:
            return None
    return value


def entry_of(resource: PlannedResource, block: Block) -> dict[str, Any]:
    """The change as `terraform show -json` would print it (`resource_changes`), for the terraform
    engine's own converter (`showplan.change_from_entry`), sensitive values marked as it marks them."""
    ty = block.object_type()
    actions = {Action.CREATE: ["create"], Action.UPDATE: ["update"], Action.REPLACE: ["delete", "create"],
               Action.DELETE: ["delete"], Action.NOOP: ["no-op"]}[resource.action]
    after, unknown = known_json(resource.planned, ty)
    change: dict[str, Any] = {
        "actions": actions, "before": to_json_value(resource.prior, ty) if resource.prior is not None else None,
        "after": after, "after_unknown": unknown, "before_sensitive": sensitive_mask(block, resource.prior),
        "after_sensitive": sensitive_mask(block, resource.planned),
        "replace_paths": [[s.attribute if s.attribute is not None else s.key for s in p]
                          for p in resource.replace_paths]}
    if resource.importing is not None:
        change["importing"] = {"id": resource.importing}
    return {"address": resource.address, "type": resource.type, "name": resource.name, "change": change}


def known_json(value: CtyValue, ty: CtyType) -> tuple[Any, Any]:
    """(the JSON of `value` with unknowns as null, terraform's `after_unknown` mask for it)."""
    if isinstance(value, Unknown):
        return None, True
    if value is None:
        return None, False
    if isinstance(ty, Object) and isinstance(value, dict):
        pairs = {k: known_json(value.get(k), t) for k, t in ty.attributes.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items() if p[1] is not False}
    if isinstance(ty, ListOf | SetOf) and isinstance(value, list):
        items = [known_json(v, ty.element) for v in value]
        return [i[0] for i in items], [i[1] for i in items]
    if isinstance(ty, MapOf) and isinstance(value, dict):
        pairs = {k: known_json(v, ty.element) for k, v in value.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items() if p[1] is not False}
    if isinstance(ty, Tuple) and isinstance(value, list):
        items = [known_json(v, t) for v, t in zip(value, ty.elements, strict=True)]
        return [i[0] for i in items], [i[1] for i in items]
    return to_json_value(value, ty), False


def apply_stack(clients: Clients, plan: StackPlan, state: State, *,
                write: Callable[[State], None], parallelism: int = PARALLELISM) -> State:
    """Carry `plan` out; the state as it ends, written after every object. Objects are applied
    `parallelism` at a time, each once everything it needs (directly or through a data source read
    at apply) is applied; deletions of objects no longer configured come last, one at a time,
    newest first, as planned. A failure blocks what needs it; the first is raised."""
    values: dict[str, CtyValue] = dict(plan.data)
    current = {i.address: i for i in state.instances}
    order = [i.address for i in state.instances]
    saving, reading = threading.Lock(), threading.Lock()

    def save(address: str, instance: Instance | None) -> None:
        nonlocal state
        with saving:
            if instance is None:
                current.pop(address, None)
            else:
                if address not in current:
                    order.append(address)
                current[address] = instance
            state = state.next([current[a] for a in order if a in current])
            write(state)

    def apply_one(resource: PlannedResource) -> None:
        client = clients[resource.provider]
        if resource.action == Action.NOOP:
            values[resource.address] = resource.prior
            if resource.importing is not None and isinstance(resource.prior, dict):  # adopted as it is
                assert resource.block is not None
                save(resource.address, _instance(resource, resource.block, resource.prior, resource.prior_private))
            return
        if resource.action in (Action.DELETE, Action.REPLACE):
            deleted = client.apply(resource.type, prior=resource.prior, planned=None, config=None,
                                   planned_private=resource.planned_private if resource.action == Action.DELETE
                                   else b"")
            _check(resource.address, "delete", deleted.diagnostics)
            save(resource.address, None)
            if resource.action == Action.DELETE:
                return
        assert resource.block is not None
        with reading:  # one reader of the deferred data sources: each is read once
            _read_data_now_known(clients, plan, resource.block, values)
        prior = None if resource.action == Action.REPLACE else resource.prior
        final = _plan_one(client, resource.block, _as_instance(resource, prior), values, refresh=False)
        _consistent(resource, final)
        applied = client.apply(resource.type, prior=prior, planned=final.planned,
                               config=block_value(client.schema().resource(resource.type).block, resource.block.body,
                                                  lookup_in(values), resource.address),
                               planned_private=final.planned_private)
        _check(resource.address, "apply", applied.diagnostics)
        values[resource.address] = applied.new_state
        if isinstance(applied.new_state, dict):
            save(resource.address, _instance(resource, resource.block, applied.new_state, applied.private))

    for address in plan.gone:
        save(address, None)
    configured = [r for r in plan.resources if r.block is not None]
    _in_dependency_order(apply_one, configured, _applied_first(plan, configured), parallelism)
    for resource in plan.resources:
        if resource.block is None:
            apply_one(resource)
    return state


def _applied_first(plan: StackPlan, resources: Sequence[PlannedResource]) -> dict[str, set[str]]:
    """For each resource, the resources of `resources` it needs: directly, or through the data
    sources read at apply that it needs (a data source read at plan time is already known)."""
    addresses = {r.address for r in resources}
    first: dict[str, set[str]] = {}
    for resource in resources:
        assert resource.block is not None
        found: set[str] = set()
        seen: set[str] = set()
        todo = list(resource.block.needs)
        while todo:
            needed = todo.pop()
            if needed in seen:
                continue
            seen.add(needed)
            if needed in addresses:
                found.add(needed)
            elif needed in plan.deferred:
                todo.extend(plan.deferred[needed].needs)
        first[resource.address] = found
    return first


def _in_dependency_order(work: Callable[[PlannedResource], None], resources: Sequence[PlannedResource],
                         first: Mapping[str, set[str]], parallelism: int) -> None:
    """`work` on each resource once those it needs are done, `parallelism` at a time (the engines'
    own scheduler, `engines.schedule.run_in_dependency_order`): as terraform does, what does not
    need a failed object is still applied, what needs one is not; then the first failure, in the
    plan's order, is raised."""
    by_address = {r.address: r for r in resources}

    def run(address: str) -> BaseException | None:
        try:
            work(by_address[address])
        except Exception as exc:  # every failure is raised below, once the others ran
            return exc
        return None

    outcomes = run_in_dependency_order(list(by_address), {a: sorted(n) for a, n in first.items()}, run,
                                       succeeded=lambda error: error is None, parallelism=parallelism)
    failure = next((o for o in outcomes.values() if isinstance(o, BaseException)), None)
    if failure is not None:
        raise failure


def _instance(resource: PlannedResource, block: ResourceConfig, attributes: dict[str, CtyValue],
              private: bytes) -> Instance:
    needs = tuple(sorted(n for n in block.needs if not n.startswith("data.")))
    return Instance(resource.type, resource.name, resource.schema_version, attributes, private, needs,
                    _provider_address(resource.provider))


def _as_instance(resource: PlannedResource, prior: CtyValue) -> Instance | None:
    if not isinstance(prior, dict):
        return None
    return Instance(resource.type, resource.name, resource.schema_version, prior, resource.prior_private)


def _read_data_now_known(clients: Clients, plan: StackPlan, block: ResourceConfig,
                         values: dict[str, CtyValue]) -> None:
    """Read the deferred data sources `block` needs (and those they need), now that what they
    wait for is applied: the blocks are applied in dependency order."""
    for needed in sorted(block.needs):
        deferred = plan.deferred.get(needed)
        if deferred is None or not isinstance(values.get(needed, UNKNOWN), Unknown):
            continue
        _read_data_now_known(clients, plan, deferred, values)
        client = clients[deferred.provider]
        value = block_value(client.schema().data_source(deferred.type).block, deferred.body, lookup_in(values),
                            deferred.address)
        if not is_wholly_known(value):
            raise ProviderError(needed, "read", (), "its configuration is still not known at apply")
        read = client.read_data(deferred.type, value)
        _check(needed, "read", read.diagnostics)
        values[needed] = read.new_state


def _consistent(saved: PlannedResource, final: PlannedResource) -> None:
    """Every value the saved plan knew, the final plan keeps (terraform's check before apply)."""
    if not final.legacy_type_system and not _keeps(saved.planned, final.planned):
        raise ProviderError(saved.address, "apply", (), "the provider's final plan changes a value the saved plan "
                            "knew (terraform's \"inconsistent final plan\"); plan again")


def _keeps(saved: CtyValue, final: CtyValue) -> bool:
    if isinstance(saved, Unknown):
        return True
    if isinstance(saved, dict) and isinstance(final, dict):
        return all(_keeps(v, final.get(k)) for k, v in saved.items())
    if isinstance(saved, list) and isinstance(final, list):
        return len(saved) == len(final) and all(_keeps(a, b) for a, b in zip(saved, final, strict=True))
    return bool(saved == final)

