"""The pulumi engine: Pulumi's Automation API (LocalWorkspace) over the same program that
`pulumi up` runs for administrators.

This seam is deliberately thin: write the program and the tree it was given into a workspace
(`engines.pulumi.workspace`), select the stack (or create it: a new project's first plan), set
its config, preview with a saved plan file, `up` exactly that plan, refresh, destroy a stack
that left the tree. Everything it returns is converted by
pure functions over Pulumi's engine events (`changes_from_events`, `_checked`) that are tested
without the CLI. The Pulumi CLI cannot be installed on every machine (the installers download
from the internet); without it every stack's outcome is a permanent failure saying what to
install or how to select the terraform engine.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from engines.outcomes import PermanentError, Refusal, classify_text, permanent
from engines.plan import (
    Action,
    ApplyResult,
    AttributeChange,
    Drift,
    DriftOutcome,
    Plan,
    PlanOutcome,
    ResourceChange,
    StackName,
)
from engines.protocol import Progress
from engines.pulumi.workspace import ProgramInput, build_workspace
from engines.schedule import apply_in_dependency_order, run_in_parallel
from engines.settings import Settings
from hypergov.model.tree import GovernanceTree
from stacks.spec import plan_stacks

_OPS = {"create": Action.CREATE, "update": Action.UPDATE, "replace": Action.REPLACE,
        "create-replacement": Action.REPLACE, "delete": Action.DELETE, "same": Action.NOOP,
        "read": Action.READ, "refresh": Action.READ}
_SKIP_TYPES = ("pulumi:pulumi:Stack", "pulumi:providers:")


class EngineUnavailableError(PermanentError):
    """The engine cannot run on this machine; the message says what to install or configure."""

    reason = "engine-unavailable"


def require_pulumi_cli() -> str:
    path = shutil.which("pulumi")
    if path is None:
        raise EngineUnavailableError(
            "the pulumi engine needs the Pulumi CLI, which is not on PATH. Install it "
            "(https://www.pulumi.com/docs/install/) or set 'engine: terraform' in hypergov.yaml "
            "(or HYPERGOV_ENGINE=terraform) to use the terraform engine")
    return path


def _state_inputs(state: Any) -> dict[str, Any]:
    return dict(getattr(state, "inputs", None) or {}) if state is not None else {}


def _state_outputs(state: Any) -> dict[str, Any]:
    return dict(getattr(state, "outputs", None) or {}) if state is not None else {}


def changes_from_events(events: Iterable[Any]) -> tuple[ResourceChange, ...]:
    """Pulumi `ResourcePreEvent`s of a preview -> ResourceChanges (one per URN, last event wins)."""
    by_urn: dict[str, ResourceChange] = {}
    for event in events:
        pre = getattr(event, "resource_pre_event", None)
        if pre is None or pre.metadata is None:
            continue
        meta = pre.metadata
        if meta.type.startswith(_SKIP_TYPES):
            continue
        op = getattr(meta.op, "value", meta.op)
        action = _OPS.get(str(op))
        if action is None:
            continue
        if action is Action.READ:  # refresh: live outputs vs recorded outputs
            before, after = _state_outputs(meta.old), _state_outputs(meta.new)
            action = Action.UPDATE if before != after else Action.NOOP
        else:
            before, after = _state_inputs(meta.old), _state_inputs(meta.new)
        keys = sorted(set(meta.diffs or []) or (set(before) | set(after) if action is Action.UPDATE else set()))
        attributes = tuple(AttributeChange(path=k, before=before.get(k), after=after.get(k),
                                           forces_replacement=k in (meta.keys or []))
                           for k in keys if before.get(k) != after.get(k))
        name = meta.urn.rsplit("::", 1)[-1]
        by_urn[meta.urn] = ResourceChange(address=meta.urn, type=meta.type, name=name, action=action,
                                          executor="pulumi", attributes=attributes)
    return tuple(by_urn[k] for k in sorted(by_urn))


class AutomationStack(Protocol):
    """The slice of `pulumi.automation.Stack` this engine calls: the seam its tests drive, since
    the Pulumi CLI behind the real one cannot be installed on every machine."""

    def preview(self, **kwargs: Any) -> Any: ...
    def up(self, **kwargs: Any) -> Any: ...
    def preview_destroy(self, **kwargs: Any) -> Any: ...
    def destroy(self, **kwargs: Any) -> Any: ...
    def preview_refresh(self, **kwargs: Any) -> Any: ...


class AutomationWorkspace(Protocol):
    """The slice of `pulumi.automation.LocalWorkspace` this engine calls (same seam)."""

    def list_stacks(self) -> list[Any]: ...
    def select_stack(self, stack_name: str) -> None: ...
    def create_stack(self, stack_name: str) -> None: ...
    def set_all_config(self, stack_name: str, config: Any, path: bool = False) -> None: ...


@dataclass
class _Planned:
    plan: Plan
    destroy: bool


@dataclass
class PulumiEngine:
    """The `Engine` of Pulumi's Automation API over hypergov's program (`program/__main__.py`),
    run in a workspace holding exactly the tree this engine was given (`engines.pulumi.workspace`).

    Apply runs exactly what was previewed: `preview(plan=FILE)` saves Pulumi's update plan and
    `up(plan=FILE)` refuses to do anything else; the file's hash is part of the reviewed plan.
    Every result is checked (`summary.result`), and CLI errors are classified (a concurrent
    update is temporary, a compilation error permanent)."""

    settings: Settings
    tree: GovernanceTree
    source_commit: str | None = None
    environ: Mapping[str, str] | None = None
    # The Automation API boundary (default: LocalWorkspace and Stack over the Pulumi CLI).
    open_workspace: Callable[[ProgramInput, dict[str, str]], AutomationWorkspace] | None = None
    stack_in: Callable[[StackName, AutomationWorkspace], AutomationStack] | None = None
    name: str = "pulumi"
    _planned: dict[StackName, _Planned] = field(default_factory=dict)
    _workspace: tuple[ProgramInput, AutomationWorkspace] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # --- the Automation API boundary -----------------------------------------------------------
    def _options(self) -> dict[str, str]:
        env = {"PULUMI_BACKEND_URL": self.settings.pulumi_backend,
               "PULUMI_EXPERIMENTAL": "true"}  # update plans (preview --save-plan, up --plan)
        passphrase = (self.environ or {}).get("PULUMI_CONFIG_PASSPHRASE")
        if passphrase is not None:
            env["PULUMI_CONFIG_PASSPHRASE"] = passphrase
        return env

    def workspace(self) -> tuple[ProgramInput, AutomationWorkspace]:
        """The program and this engine's tree written once per engine, and the workspace over it."""
        with self._lock:  # stacks are planned from worker threads
            if self._workspace is None:
                program = build_workspace(self.tree, self.settings, Path(self.settings.state_dir) / "pulumi-workspaces")
                self._workspace = (program, (self.open_workspace or _local_workspace)(program, self._options()))
            return self._workspace

    def _stack(self, stack: StackName, *, configure: bool = True) -> AutomationStack:
        """The stack, created when it does not exist yet (a new project's first plan), its config
        set to this run's input (not for a stack being destroyed: it left the tree)."""
        from pulumi.automation import ConfigValue, StackNotFoundError  # imported late: only this engine needs it

        program, workspace = self.workspace()
        try:
            workspace.select_stack(stack)
        except StackNotFoundError:
            workspace.create_stack(stack)
        if configure and stack in program.configs:
            workspace.set_all_config(stack, {k: ConfigValue(value=v) for k, v in program.configs[stack].items()})
        return (self.stack_in or _automation_stack)(stack, workspace)

    def known_stacks(self) -> list[StackName]:
        _, workspace = self.workspace()
        return sorted(StackName(s.name) for s in workspace.list_stacks())

    # --- plan ----------------------------------------------------------------------------------
    def _plan_file(self, stack: StackName) -> Path:
        path = Path(self.settings.state_dir) / "pulumi-plans" / f"{stack}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _plan_one(self, stack: StackName, *, destroy: bool) -> Plan:
        events: list[Any] = []
        target = self._stack(stack, configure=not destroy)
        plan_file = self._plan_file(stack)
        plan_file.unlink(missing_ok=True)
        if destroy:
            target.preview_destroy(on_event=events.append)
        else:
            target.preview(diff=True, plan=str(plan_file), on_event=events.append)
        changes = changes_from_events(events)
        plan = Plan(stack=stack, engine=self.name, changes=changes, source_commit=self.source_commit,
                    artifact_sha256=_artifact(plan_file, changes),
                    notes=("stack removed from the tree",) if destroy else ())
        self._planned[stack] = _Planned(plan, destroy)
        return plan

    def plan_many(self, stacks: Sequence[StackName], *, destroy: Sequence[StackName] = (),
                  progress: Progress[PlanOutcome] | None = None) -> dict[StackName, PlanOutcome]:
        removed = set(destroy)
        return run_in_parallel([*stacks, *destroy], lambda s: self._plan_one(s, destroy=s in removed),
                               parallelism=self.settings.terraform.parallelism, progress=progress)

    # --- apply ---------------------------------------------------------------------------------
    def apply(self, plan: Plan) -> ApplyResult:
        stack = plan.stack
        planned = self._planned.get(stack)
        if planned is None or planned.plan.fingerprint() != plan.fingerprint():
            return ApplyResult(stack=stack, refusal=Refusal("stale plan",
                                                            "this plan was not made by this run; plan again"))
        plan_file = self._plan_file(stack)
        if _artifact(plan_file, plan.changes) != plan.artifact_sha256:
            return ApplyResult(stack=stack, refusal=Refusal(
                "stale plan", "the saved Pulumi plan changed since it was reviewed; plan again"))
        if plan.is_empty:
            return ApplyResult(stack=stack)
        events: list[Any] = []
        target = self._stack(stack, configure=not planned.destroy)
        if planned.destroy:
            result = target.destroy(on_event=events.append)
        else:
            result = target.up(plan=str(plan_file), on_event=events.append)
        return _checked(plan, result, events)

    def apply_many(self, plans: Sequence[Plan], *, on_start: Callable[[StackName], None] | None = None,
                   on_done: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None) -> list[ApplyResult]:
        return apply_in_dependency_order(
            plans, depends_on={s.name: s.depends_on for s in plan_stacks(self.tree)}, apply_one=self.apply,
            parallelism=self.settings.terraform.parallelism, on_start=on_start, on_done=on_done, stop=stop)

    # --- drift ---------------------------------------------------------------------------------
    def _refresh_one(self, stack: StackName) -> Drift:
        events: list[Any] = []
        self._stack(stack).preview_refresh(on_event=events.append)
        return Drift(stack=stack, changes=tuple(c for c in changes_from_events(events) if c.action is not Action.NOOP))

    def refresh_many(self, stacks: Sequence[StackName], *,
                     progress: Progress[DriftOutcome] | None = None) -> dict[StackName, DriftOutcome]:
        return run_in_parallel(stacks, self._refresh_one, parallelism=self.settings.terraform.parallelism,
                               progress=progress)


def _local_workspace(program: ProgramInput, env: dict[str, str]) -> AutomationWorkspace:
    require_pulumi_cli()
    from pulumi import automation as auto

    return cast(AutomationWorkspace, auto.LocalWorkspace(work_dir=str(program.work_dir), env_vars=env))


def _automation_stack(stack: StackName, workspace: AutomationWorkspace) -> AutomationStack:
    from pulumi import automation as auto

    return cast(AutomationStack, auto.Stack.select(stack, cast(auto.LocalWorkspace, workspace)))


def _artifact(plan_file: Path, changes: Sequence[ResourceChange]) -> str:
    """The saved update plan (when there is one) and the decided changes: what apply must match."""
    digest = hashlib.sha256(plan_file.read_bytes() if plan_file.exists() else b"")
    digest.update(repr([(c.address, c.action.value) for c in changes]).encode())
    return digest.hexdigest()


def _failed_urns(events: Iterable[Any]) -> dict[str, str]:
    """URN -> the engine's message, for every resource operation that failed during an update."""
    failed: dict[str, str] = {}
    for event in events:
        op_failed = getattr(event, "res_op_failed_event", None)
        if op_failed is not None and op_failed.metadata is not None:
            failed[op_failed.metadata.urn] = f"{op_failed.metadata.op} failed (status {op_failed.status})"
        diagnostic = getattr(event, "diagnostic_event", None)
        if diagnostic is not None and diagnostic.urn and diagnostic.severity == "error":
            failed[diagnostic.urn] = " ".join(diagnostic.message.split())
    return failed


def _checked(plan: Plan, result: Any, events: Sequence[Any]) -> ApplyResult:
    """Believe an update only as far as its summary and events say: a `failed` result or a failed
    resource operation is a failure, never "applied"."""
    outcome = getattr(getattr(result, "summary", None), "result", None)
    failed = _failed_urns(events)
    bad = tuple((c, classify_text(failed[c.address])) for c in plan.actionable if c.address in failed)
    applied = tuple(c for c in plan.actionable if c.address not in failed)
    if outcome == "succeeded" and not bad:
        return ApplyResult(stack=plan.stack, applied=applied)
    if bad:
        return ApplyResult(stack=plan.stack, applied=applied, failed=bad)
    return ApplyResult(stack=plan.stack, error=permanent(
        f"pulumi up ended '{outcome}' without saying which resource failed; see `pulumi stack history`",
        "pulumi"))
