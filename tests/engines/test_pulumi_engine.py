"""The pulumi engine's thin seam. The Pulumi CLI cannot be installed here, so the Automation API
itself is not run: the event conversion is tested on real `pulumi.automation` event objects, the
engine is driven through its `AutomationStack` seam by a stand-in answering with Pulumi's own
result types, and the engine's refusal without the CLI is tested for real."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pulumi.automation import (
    ConfigValue,
    DiagnosticEvent,
    EngineEvent,
    OpType,
    PreviewResult,
    ResourcePreEvent,
    StackSummary,
    StepEventMetadata,
    StepEventStateMetadata,
    UpdateSummary,
    UpResult,
)
from pulumi.automation._cmd import CommandResult
from pulumi.automation.errors import ConcurrentUpdateError, StackNotFoundError

from engines.factory import build_engine
from engines.outcomes import Failure
from engines.plan import Action, Drift, Plan, StackName
from engines.protocol import Engine
from engines.pulumi.engine import PulumiEngine, changes_from_events
from engines.pulumi.workspace import ProgramInput
from engines.settings import Settings
from hypergov.model.tree import GovernanceTree
from tests.example_tree import example_tree


def _event(op: OpType, urn: str, rtype: str, old: dict | None, new: dict | None, diffs: list[str] | None = None,
           outputs: tuple[dict, dict] | None = None) -> EngineEvent:
    def state(inputs: dict | None, outs: dict | None) -> StepEventStateMetadata | None:
        if inputs is None and outs is None:
            return None
        return StepEventStateMetadata(type=rtype, urn=urn, id="id", parent="", provider="", inputs=inputs, outputs=outs)

    o_out, n_out = outputs or (None, None)
    meta = StepEventMetadata(op=op, urn=urn, type=rtype, provider="", old=state(old, o_out), new=state(new, n_out),
                             diffs=diffs, keys=[])
    return EngineEvent(sequence=1, timestamp=0, resource_pre_event=ResourcePreEvent(metadata=meta))


URN = "urn:pulumi:project-vision::hypergov::hypergov:index:ProjectGovernance$aws:iam/role:Role::vision-engineer"


def test_preview_events_become_changes() -> None:
    events = [
        _event(OpType.UPDATE, URN, "aws:iam/role:Role", {"maxSessionDuration": 3600}, {"maxSessionDuration": 7200},
               diffs=["maxSessionDuration"]),
        _event(OpType.CREATE, URN + "-2", "aws:iam/policy:Policy", None, {"name": "p"}),
        _event(OpType.SAME, "urn:pulumi:s::p::pulumi:pulumi:Stack::s", "pulumi:pulumi:Stack", {}, {}),
    ]
    changes = changes_from_events(events)
    assert [c.action for c in changes] == [Action.UPDATE, Action.CREATE]
    assert changes[0].name == "vision-engineer"
    assert [(a.path, a.before, a.after) for a in changes[0].attributes] == [("maxSessionDuration", 3600, 7200)]


def test_refresh_events_compare_outputs() -> None:
    events = [_event(OpType.REFRESH, URN, "aws:iam/role:Role", {}, {},
                     outputs=({"maxSessionDuration": 3600}, {"maxSessionDuration": 43200}))]
    (change,) = changes_from_events(events)
    assert change.action is Action.UPDATE


@pytest.mark.skipif(shutil.which("pulumi") is not None, reason="the Pulumi CLI is installed here")
def test_engine_refuses_clearly_without_the_cli(tmp_path: Path) -> None:
    """Without the CLI every stack's outcome is a permanent failure that says what to do; nothing raises."""
    engine = PulumiEngine(settings=Settings(state_dir=tmp_path), tree=example_tree())
    outcomes = engine.plan_many([StackName("org"), StackName("project-vision")])
    for outcome in outcomes.values():
        assert isinstance(outcome, Failure) and outcome.kind == "permanent"
        assert "Pulumi CLI" in outcome.message and "engine: terraform" in outcome.message
    (refused,) = engine.apply_many([Plan(StackName("org"), "pulumi", (), artifact_sha256="x")])
    assert refused.refusal is not None and not refused.ok


# --- the Automation API boundary -------------------------------------------------------------
# The Pulumi CLI cannot be installed on the build machines, so `pulumi.automation.Stack` cannot
# run here. These tests drive the engine through its `AutomationStack` seam with a stand-in that
# answers with Pulumi's own event and result types, exactly what a real Stack returns.

ROLE = "urn:pulumi:{stack}::hypergov::hypergov:index:ProjectGovernance$aws:iam/role:Role::vision-engineer"


def _summary(result: str) -> UpdateSummary:
    return UpdateSummary(kind="update", start_time=datetime.now(UTC), message="", environment={}, config={},
                         result=result)


@dataclass
class FakeStack:
    """Answers like `pulumi.automation.Stack` of one stack; records every call it gets."""

    name: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    up_result: str = "succeeded"
    up_events: list[EngineEvent] = field(default_factory=list)
    up_raises: Exception | None = None

    def _changes(self, on_event: Any) -> None:
        on_event(_event(OpType.UPDATE, ROLE.format(stack=self.name), "aws:iam/role:Role",
                        {"maxSessionDuration": 3600}, {"maxSessionDuration": 7200}, diffs=["maxSessionDuration"]))

    def preview(self, **kwargs: Any) -> PreviewResult:
        self.calls.append(("preview", kwargs))
        Path(kwargs["plan"]).write_text(json.dumps({"resourcePlans": {ROLE.format(stack=self.name): {}}}))
        self._changes(kwargs["on_event"])
        return PreviewResult(stdout="", stderr="", change_summary={OpType.UPDATE: 1})

    def up(self, **kwargs: Any) -> UpResult:
        self.calls.append(("up", kwargs))
        if self.up_raises:
            raise self.up_raises
        for event in self.up_events:
            kwargs["on_event"](event)
        return UpResult(stdout="", stderr="", summary=_summary(self.up_result), outputs={})

    def preview_destroy(self, **kwargs: Any) -> PreviewResult:
        self.calls.append(("preview_destroy", kwargs))
        kwargs["on_event"](_event(OpType.DELETE, ROLE.format(stack=self.name), "aws:iam/role:Role",
                                  {"maxSessionDuration": 3600}, None))
        return PreviewResult(stdout="", stderr="", change_summary={OpType.DELETE: 1})

    def destroy(self, **kwargs: Any) -> Any:
        self.calls.append(("destroy", kwargs))
        return UpResult(stdout="", stderr="", summary=_summary("succeeded"), outputs={})

    def preview_refresh(self, **kwargs: Any) -> PreviewResult:
        self.calls.append(("preview_refresh", kwargs))
        kwargs["on_event"](_event(OpType.REFRESH, ROLE.format(stack=self.name), "aws:iam/role:Role", {}, {},
                                  outputs=({"maxSessionDuration": 3600}, {"maxSessionDuration": 43200})))
        return PreviewResult(stdout="", stderr="", change_summary={OpType.REFRESH: 1})


@dataclass
class FakeWorkspace:
    """Answers like `pulumi.automation.LocalWorkspace` over `stacks` (the backend's stacks); records
    the program input it was opened on and every call."""

    program: ProgramInput
    stacks: dict[str, FakeStack]
    calls: list[tuple[str, str]] = field(default_factory=list)
    configs: dict[str, dict[str, str]] = field(default_factory=dict)

    def list_stacks(self) -> list[StackSummary]:
        return [StackSummary(name=n, current=False) for n in sorted(self.stacks)]

    def select_stack(self, stack_name: str) -> None:
        self.calls.append(("select", stack_name))
        if stack_name not in self.stacks:  # what LocalWorkspace raises (`pulumi stack select` exit)
            raise StackNotFoundError(CommandResult(stdout="", stderr=f"no stack named '{stack_name}' found",
                                                   code=255))

    def create_stack(self, stack_name: str) -> None:
        self.calls.append(("create", stack_name))
        self.stacks[stack_name] = FakeStack(stack_name)

    def set_all_config(self, stack_name: str, config: dict[str, ConfigValue], path: bool = False) -> None:
        self.configs[stack_name] = {k: v.value for k, v in config.items()}


def fake_engine(settings: Settings, tree: GovernanceTree, stacks: dict[str, FakeStack],
                opened: list[FakeWorkspace] | None = None) -> PulumiEngine:
    """The engine with its Automation boundary answered by `FakeWorkspace` and `FakeStack`."""
    def open_workspace(program: ProgramInput, env: dict[str, str]) -> FakeWorkspace:
        workspace = FakeWorkspace(program, stacks)
        (opened if opened is not None else []).append(workspace)
        return workspace

    return PulumiEngine(settings=settings, tree=tree, open_workspace=open_workspace,
                        stack_in=lambda name, workspace: stacks[name])


def _engine(tmp_path: Path, stacks: dict[str, FakeStack]) -> PulumiEngine:
    for name in ("org", "project-vision"):  # stacks the backend already has
        stacks.setdefault(name, FakeStack(name))
    return fake_engine(Settings(state_dir=tmp_path, engine="pulumi"), example_tree(), stacks)


def test_apply_runs_exactly_the_saved_preview_in_dependency_order(tmp_path: Path) -> None:
    stacks: dict[str, FakeStack] = {}
    engine = _engine(tmp_path, stacks)
    names = [StackName("project-vision"), StackName("org")]
    outcomes = engine.plan_many(names)
    plans = [o for o in outcomes.values() if isinstance(o, Plan)]
    assert [p.stack for p in plans] == names and all(p.engine == "pulumi" for p in plans)
    started: list[str] = []
    results = engine.apply_many(plans, on_start=started.append)
    assert all(r.ok for r in results) and started == ["org", "project-vision"]  # org first
    for name in names:
        (_, preview), (_, up) = stacks[name].calls
        assert up["plan"] == preview["plan"]  # `up --plan` of the file `preview --save-plan` wrote


def test_a_changed_saved_plan_is_refused(tmp_path: Path) -> None:
    stacks: dict[str, FakeStack] = {}
    engine = _engine(tmp_path, stacks)
    plan = engine.plan_many([StackName("org")])[StackName("org")]
    assert isinstance(plan, Plan)
    Path(stacks["org"].calls[0][1]["plan"]).write_text("{}")  # someone rewrote the saved plan
    (result,) = engine.apply_many([plan])
    assert result.refusal is not None and "changed since it was reviewed" in result.refusal.message
    assert [c for c, _ in stacks["org"].calls] == ["preview"]  # never `up`


@pytest.mark.parametrize(("fake", "expect"), [
    pytest.param(FakeStack("org", up_result="failed"), "pulumi up ended 'failed'", id="failed-summary"),
    pytest.param(FakeStack("org", up_events=[EngineEvent(sequence=2, timestamp=0, diagnostic_event=DiagnosticEvent(
        message="creating IAM Role: AccessDenied: not authorized", color="never", severity="error",
        urn=ROLE.format(stack="org")))]), "AccessDenied", id="failed-resource"),
])
def test_an_update_is_believed_only_as_far_as_its_result_says(tmp_path: Path, fake: FakeStack, expect: str) -> None:
    engine = _engine(tmp_path, {"org": fake})
    plan = engine.plan_many([StackName("org")])[StackName("org")]
    assert isinstance(plan, Plan)
    (result,) = engine.apply_many([plan])
    assert not result.ok and not result.applied
    assert expect in (result.failure or "") and all(f.kind == "permanent" for f in result.failures)


def test_cli_errors_are_classified(tmp_path: Path) -> None:
    busy = ConcurrentUpdateError(CommandResult(stdout="", stderr="the stack is currently locked by 1 lock(s)",
                                               code=255))
    engine = _engine(tmp_path, {"org": FakeStack("org", up_raises=busy)})
    plan = engine.plan_many([StackName("org")])[StackName("org")]
    assert isinstance(plan, Plan)
    (result,) = engine.apply_many([plan])
    assert result.error is not None and result.error.kind == "temporary" and result.error.reason == "state-lock"


def test_destroy_refresh_and_known_stacks(tmp_path: Path) -> None:
    stacks: dict[str, FakeStack] = {"project-gone": FakeStack("project-gone")}
    engine = _engine(tmp_path, stacks)
    assert engine.known_stacks() == ["org", "project-gone", "project-vision"]
    outcomes = engine.plan_many([], destroy=[StackName("project-gone")])
    plan = outcomes[StackName("project-gone")]
    assert isinstance(plan, Plan) and [c.action for c in plan.changes] == [Action.DELETE]
    assert plan.notes == ("stack removed from the tree",)
    (result,) = engine.apply_many([plan])
    assert result.ok and [c for c, _ in stacks["project-gone"].calls] == ["preview_destroy", "destroy"]
    drift = engine.refresh_many([StackName("org")])[StackName("org")]
    assert isinstance(drift, Drift) and drift.drifted


def test_the_engine_setting_selects_the_engine(tmp_path: Path) -> None:
    tree = example_tree()
    pulumi = build_engine(Settings(state_dir=tmp_path, engine="pulumi"), tree)
    assert isinstance(pulumi, PulumiEngine) and pulumi.name == "pulumi"
    engine: Engine = pulumi  # both engines satisfy the Protocol the CLI and the reconciler use
    assert engine.name == "pulumi"
