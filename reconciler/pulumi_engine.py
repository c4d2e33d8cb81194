"""The pulumi engine: Pulumi's Automation API (LocalWorkspace) over the same program that
`pulumi up` runs for administrators.

This seam is deliberately thin: select the stack, preview with a saved plan file, `up` exactly
that plan, refresh. Everything it returns is converted by `changes_from_events`, a pure function
over Pulumi's engine events that is tested without the CLI. The Pulumi CLI cannot be installed
on every machine (the installers download from the internet); without it this engine refuses
with a clear message and the terraform engine does the work.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.plan import Action, ApplyResult, AttributeChange, Drift, Plan, ResourceChange, StackName
from reconciler.settings import Settings

_OPS = {"create": Action.CREATE, "update": Action.UPDATE, "replace": Action.REPLACE,
        "create-replacement": Action.REPLACE, "delete": Action.DELETE, "same": Action.NOOP,
        "read": Action.READ, "refresh": Action.READ}
_SKIP_TYPES = ("pulumi:pulumi:Stack", "pulumi:providers:")


class EngineUnavailableError(Exception):
    """The engine cannot run on this machine; the message says what to install or configure."""


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


@dataclass
class PulumiEngine:
    """plan / apply / refresh through the Automation API for one project directory."""

    settings: Settings
    project_dir: Path

    def _stack(self, stack: StackName) -> Any:
        require_pulumi_cli()
        from pulumi import automation as auto  # imported late: only this engine needs it

        opts = auto.LocalWorkspaceOptions(work_dir=str(self.project_dir), env_vars={
            "PULUMI_BACKEND_URL": self.settings.pulumi_backend})
        return auto.select_stack(stack_name=stack, work_dir=str(self.project_dir), opts=opts)

    def _plan_file(self, stack: StackName) -> Path:
        path = self.settings.state_dir / "pulumi-plans" / f"{stack}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def plan(self, stack: StackName) -> Plan:
        events: list[Any] = []
        plan_file = self._plan_file(stack)
        self._stack(stack).preview(diff=True, plan=str(plan_file), on_event=events.append)
        digest = hashlib.sha256(plan_file.read_bytes()).hexdigest() if plan_file.exists() else None
        return Plan(stack=stack, engine="pulumi", changes=changes_from_events(events), artifact_sha256=digest)

    def apply(self, stack: StackName, plan: Plan) -> ApplyResult:
        plan_file = self._plan_file(stack)
        if not plan_file.exists() or hashlib.sha256(plan_file.read_bytes()).hexdigest() != plan.artifact_sha256:
            return ApplyResult(stack=stack, refusal="the saved Pulumi plan changed since it was reviewed; plan again")
        self._stack(stack).up(plan=str(plan_file))
        return ApplyResult(stack=stack, applied=plan.actionable)

    def refresh(self, stack: StackName) -> Drift:
        events: list[Any] = []
        self._stack(stack).preview_refresh(on_event=events.append)
        return Drift(stack=stack, changes=tuple(c for c in changes_from_events(events) if c.action is not Action.NOOP))
