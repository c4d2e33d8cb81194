"""Resource graph capture: run a stack's Pulumi program in-process under the Pulumi SDK's mock
monitor (`pulumi.runtime.set_mocks`, what Pulumi's own unit tests use) and record every resource
registration: type, logical name, parent, inputs, dependencies, provider.

The terraform engine translates these graphs, and the tests prove governance properties on them.
Mocks echo the inputs as outputs and give each resource the id `<id:NAME>`, so the graph is a pure
function of the tree. Pulumi's runtime keeps per-process global state (settings, root stack,
config): each capture resets it, and captures in one process must not overlap (use processes for
parallelism). URNs are built as the Pulumi engine builds them (component type chain, no root
stack type), not as the mock monitor abbreviates them.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pulumi.runtime import config as pulumi_config
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components.scheduler_config import CaptureOnlyProvider
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import StackView, stack_view
from hypergov.validate import load_valid_tree
from stacks.program import StackSettings, declare
from stacks.resource_graph import LOOKUPS, GraphResource, ResourceGraph, lookup_name, lookup_placeholder
from stacks.spec import find_stack

PROJECT = "hypergov"
_DROPPED_INPUTS = frozenset({"__provider"})  # a dynamic provider's pickled code: not configuration
_SECRET_INPUTS = frozenset({"kubeconfig"})
_ROOT_TYPE = "pulumi:pulumi:Stack"


def _placeholders(name: str, value: Any) -> Any:
    if isinstance(value, str):
        return lookup_placeholder(name, value)
    if isinstance(value, list):
        return [_placeholders(name, v) for v in value]
    return {k: _placeholders(name, v) for k, v in value.items()}


class EchoMocks(mocks.Mocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        # An ARN is an output a resource may take from another (a permission set's): `<arn:NAME>`,
        # recorded with the property dependency the engine turns into a reference.
        return f"<id:{args.name}>", {"arn": f"<arn:{args.name}>", **dict(args.inputs)}

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        results = LOOKUPS.get(args.token)
        if results is None:
            raise UnknownLookupError(f"the program reads {args.token}, which no engine resolves; add it to LOOKUPS")
        name = lookup_name(args.token, _plain(dict(args.args)), _provider_urn(args.provider))
        return {key: _placeholders(name, path) for key, path in results.items()}, []


class UnknownLookupError(Exception):
    """A program made a read (invoke) that `LOOKUPS` does not list."""


def _provider_urn(reference: str | None) -> str | None:
    return reference.rsplit("::", 1)[0] if reference else None


class RecordingMonitor(mocks.MockMonitor):
    """Pulumi's mock monitor, recording every registration as a `GraphResource`."""

    def __init__(self, stack: str) -> None:
        super().__init__(EchoMocks())
        self.stack = stack
        self.recorded: list[GraphResource] = []

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != _ROOT_TYPE:
                type_ = f"{parent_type}${type_}"
        return f"urn:pulumi:{self.stack}::{PROJECT}::{type_}::{name}"

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type != _ROOT_TYPE:
            inputs = rpc.deserialize_properties(request.object)
            clean = {k: ("<redacted>" if k in _SECRET_INPUTS and v else v)
                     for k, v in sorted(inputs.items()) if k not in _DROPPED_INPUTS}
            parent = request.parent if request.parent and _ROOT_TYPE not in request.parent.split("::")[2] else None
            self.recorded.append(GraphResource(
                urn=response.urn, type=request.type, name=request.name, parent=parent, custom=bool(request.custom),
                provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
                inputs=_plain(clean), depends_on=tuple(sorted(set(request.dependencies))),
                property_dependencies={k: tuple(sorted(v.urns)) for k, v in request.propertyDependencies.items()
                                       if v.urns}, import_id=request.importId or None))
        return response

    def GetDeploymentInfo(self, request: Any) -> Any:
        """Pulumi's mock monitor, plus the engine's "invokes take dependencies" feature: with it the
        SDK sends a read's `depends_on` (which terraform needs: a data source read after what it
        depends on), instead of only waiting for them itself."""
        info = super().GetDeploymentInfo(request)  # type: ignore[no-untyped-call]
        info.supportedFeatures.append(resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_DEPENDS_ON)
        return info

    def Invoke(self, request: Any) -> Any:
        response = super().Invoke(request)  # type: ignore[no-untyped-call]
        if request.tok in LOOKUPS:
            args = _plain(dict(rpc.deserialize_properties(request.args)))
            provider = _provider_urn(request.provider)
            name = lookup_name(request.tok, args, provider)
            urn = f"urn:pulumi:{self.stack}::{PROJECT}::{request.tok}::{name}"
            if urn not in {r.urn for r in self.recorded}:
                self.recorded.append(GraphResource(
                    urn=urn, type=request.tok, name=name, parent=None, custom=False, provider=provider,
                    inputs=args, depends_on=tuple(sorted(set(request.dependsOn))), lookup=True))
        return response

    def graph(self) -> ResourceGraph:
        return ResourceGraph(stack=self.stack, resources=tuple(sorted(self.recorded, key=lambda r: r.urn)))


def _plain(value: Any) -> Any:
    """JSON-able copy: enums to their values, tuples to lists, keys sorted."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire format (protobuf Struct) turns every number into a float
    return value


@contextmanager
def _without_source_positions() -> Iterator[None]:
    """The SDK walks the Python stack on every registration to tell the engine where a resource
    was declared (~10% of capture time); a graph has no use for it. This swaps a private SDK
    function, so a Pulumi upgrade that renames it only loses the speed-up (checked by hasattr)."""
    original = getattr(pulumi_resource, "_get_stack_trace", None)
    if original is None:
        yield
        return
    pulumi_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        pulumi_resource._get_stack_trace = original


def capture_graph(source: GovernanceTree | str | os.PathLike[str], stack_name: str, *,
                  kubeconfig: str = "", assume_role_name: str = "") -> ResourceGraph:
    """The resource graph of `stack_name`, from a loaded tree or a config directory (validated
    first; an invalid tree raises InvalidTreeError, an unknown stack UnknownStackError)."""
    tree = source if isinstance(source, GovernanceTree) else load_valid_tree(source)
    spec = find_stack(tree, stack_name)
    config_dir = "config" if isinstance(source, GovernanceTree) else os.fspath(source)
    return capture_view(stack_view(tree, spec.kind, spec.subject), stack_name, config_dir=config_dir,
                        kubeconfig=kubeconfig, assume_role_name=assume_role_name)


def capture_view(view: StackView, stack_name: str, *, config_dir: str = "config", kubeconfig: str = "",
                 assume_role_name: str = "") -> ResourceGraph:
    """The resource graph of the stack declared from `view` (what the engines capture)."""
    # Every Kubernetes object is captured: the terraform engine plans them all and applies them with
    # its own kubeconfig setting (or marks them not applied); it never uses this graph's provider.
    stack_settings = StackSettings(kind=view.kind, name=view.subject, kubernetes="declare",
                                   scheduler_config_provider=CaptureOnlyProvider(), config_dir=config_dir,
                                   kubeconfig=kubeconfig, assume_role_name=assume_role_name)
    config = {"hypergov:kind": view.kind, "hypergov:name": view.subject, "hypergov:configDir": config_dir}

    def program() -> None:
        declare(view, stack_settings)

    _ensure_thread_event_loop()
    with mocked_runtime(stack_name, config=config) as monitor, _without_ambient_kubeconfig():
        _sync_await(run_pulumi_func(program))
    return monitor.graph()


def _ensure_thread_event_loop() -> None:
    """The SDK makes its futures on the current thread's event loop as it declares resources;
    asyncio makes one on demand in the main thread only, and captures also run in others (a plan's
    head graphs are captured while its scan reads)."""
    try:
        asyncio.get_event_loop()
    except RuntimeError:
        asyncio.set_event_loop(asyncio.new_event_loop())


@contextmanager
def _without_ambient_kubeconfig() -> Iterator[None]:
    """pulumi-kubernetes' Provider reads $KUBECONFIG when it is given no kubeconfig, which would put
    the capturing machine's kubeconfig into the graph (and fail the golden file on a machine with
    kubectl set up): the graph must be a function of the tree and the arguments only."""
    saved = os.environ.pop("KUBECONFIG", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["KUBECONFIG"] = saved


@contextmanager
def mocked_runtime(stack_name: str, *, config: Mapping[str, str],
                   logger: logging.Logger | None = None) -> Iterator[RecordingMonitor]:
    """Pulumi's process-global runtime set up as `pulumi up --stack <stack_name>` sets it up
    (project, stack, config map, a root stack resource), with a recording mock monitor in place of
    the engine, and reset on the way out, also on error. Run one program inside (`run_pulumi_func`);
    `logger` receives what the program logs (`pulumi.log.*`; default: the root logger)."""
    monitor = RecordingMonitor(stack_name)
    settings.ROOT.set(None)
    pulumi_config.set_all_config(dict(config), [])
    try:
        mocks.set_mocks(monitor.mocks, project=PROJECT, stack=stack_name, preview=False, logger=logger,
                        monitor=monitor)
        with _without_source_positions():
            yield monitor
    finally:
        settings.ROOT.set(None)
        pulumi_config.set_all_config({}, [])
