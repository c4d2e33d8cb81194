"""The live scan plans what terraform plans, by property: the example tree is applied with the real
terraform against the embedded endpoint; then for random single-field edits of its files, the
changes decided from one live scan (`--terraform-max-stacks`) and `terraform plan` of every
affected stack must name the same resources with the same actions. Edits are drawn from every
scalar leaf of every file (numbers moved by one, booleans flipped, strings changed, optional keys
dropped); one that makes the tree invalid, or removes a stack, is discarded (the gate refuses the
first; a removal is planned as a destroy, by terraform). Deterministic (derandomized), so CI
replays the same edits."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engines.live.scan import scanned_terraform_changes
from engines.plan import Plan
from engines.settings import Settings
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from stacks.affected import affected_stacks
from stacks.spec import plan_stacks
from tests.integration.conftest import EngineFactory, example_files
from tests.tree_edits import Edit, edited, single_field_edits

pytestmark = pytest.mark.integration
FILES = example_files()
EDITS = single_field_edits(FILES)
CHECKED: list[Edit] = []  # the edits that were planned both ways (not discarded)


@pytest.fixture(scope="module")
def base(engine_for: EngineFactory) -> GovernanceTree:
    """The example tree, every stack applied."""
    engine = engine_for(FILES)
    plans = engine.plan_many([s.name for s in plan_stacks(engine.tree)])
    results = engine.apply_many([p for p in plans.values() if isinstance(p, Plan) and not p.is_empty])
    assert all(r.ok for r in results), [r.failure for r in results if not r.ok]
    return engine.tree


def terraform_actions(plan: Plan) -> set[tuple[str, str]]:
    return {(c.address, c.action.value) for c in plan.actionable if c.executor == "terraform"}


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edit=st.sampled_from(EDITS))
def test_the_scan_plans_the_resources_and_actions_terraform_plans(edit: Edit, base: GovernanceTree,
                                                                  engine_for: EngineFactory,
                                                                  settings: Settings) -> None:
    files = edited(FILES, *edit)
    report = validate_files(files)
    assume(report.ok and report.tree is not None)
    affected = affected_stacks(base, report.tree)
    assume(affected.to_plan and not affected.removed)
    stacks = list(affected.to_plan)
    planned = engine_for(files).plan_many(stacks)
    assert all(isinstance(p, Plan) for p in planned.values()), planned
    scanned, scan = scanned_terraform_changes(settings.aws, base, report.tree, stacks,
                                              cache_dir=Path(settings.state_dir) / "graphs")
    assert scan.complete, scan.failures
    for stack in stacks:
        plan = planned[stack]
        assert isinstance(plan, Plan)
        by_scan = {(c.address, c.action.value) for c in scanned[stack]}
        assert by_scan == terraform_actions(plan), (edit, stack)
    CHECKED.append(edit)


def test_the_property_ran_on_real_edits() -> None:
    """Runs after the property (same module, file order): it must not have discarded every edit."""
    assert len(CHECKED) >= 4, CHECKED
