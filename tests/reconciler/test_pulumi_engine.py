"""The pulumi engine's thin seam. The Pulumi CLI cannot be installed here, so the Automation API
itself is not run: the event conversion is tested on real `pulumi.automation` event objects, and
the engine's refusal without the CLI is tested for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pulumi.automation import EngineEvent, OpType, ResourcePreEvent, StepEventMetadata, StepEventStateMetadata

from reconciler.plan import Action, Plan, StackName
from reconciler.pulumi_engine import EngineUnavailableError, PulumiEngine, changes_from_events
from reconciler.settings import Settings


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
    engine = PulumiEngine(settings=Settings(state_dir=tmp_path), project_dir=tmp_path)
    with pytest.raises(EngineUnavailableError, match=r"Pulumi CLI.*engine: terraform"):
        engine.plan(StackName("org"))
    refused = engine.apply(StackName("org"), Plan(StackName("org"), "pulumi", (), artifact_sha256="x"))
    assert refused.refusal is not None and not refused.ok
