"""The live scan plans what terraform plans, by property: the example tree is applied with the real
terraform against the embedded endpoint (a copy of the run's snapshot); then for sampled
single-field edits of its files, the changes decided from one live scan (`--terraform-max-stacks`)
and `terraform plan` of an affected stack must name the same resources with the same actions.
Edits are drawn from every scalar leaf of every file (numbers moved by one, booleans flipped,
strings changed, optional keys dropped); one that makes the tree invalid, or removes a stack, is
discarded (the gate refuses the first; a removal is planned as a destroy, by terraform). The draw
is seeded, so CI replays the same cases, each its own test."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.live.scan import scanned_terraform_changes
from engines.plan import Plan, StackName
from engines.settings import Settings
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from stacks.affected import affected_stacks
from tests.integration.applied_once import restore
from tests.integration.conftest import EngineFactory, example_files
from tests.tree_edits import Edit, edited, single_field_edits

pytestmark = pytest.mark.integration
FILES = example_files()
EDITS = single_field_edits(FILES)


@pytest.fixture(scope="module")
def base(endpoint: EmbeddedAwsProcess, applied_example: Path, settings: Settings,
         tmp_path_factory: pytest.TempPathFactory) -> GovernanceTree:
    """The example tree, every stack applied (a copy of the run's snapshot, its terraform state in
    this module's state directory)."""
    copy = restore(applied_example, endpoint, tmp_path_factory.mktemp("applied"))
    shutil.copytree(copy / "state", settings.state_dir, symlinks=True, dirs_exist_ok=True)
    report = validate_files(FILES)
    assert report.ok and report.tree is not None, report.problems
    return report.tree


def terraform_actions(plan: Plan) -> set[tuple[str, str]]:
    return {(c.address, c.action.value) for c in plan.actionable if c.executor == "terraform"}


def _sampled_cases(count: int, seed: int = 20261204) -> list[tuple[Edit, StackName]]:
    """`count` (edit, stack) cases: edits drawn by a seeded shuffle of every single-field edit, kept
    when the tree stays valid and the edit changes a stack without removing one (the gate refuses
    the first; a removal is planned as a destroy, by terraform); of each edit's affected stacks,
    one drawn by the same generator (of a kind not sampled yet, when there is one). The same
    cases every run, one test each, so that the workers share them and a failure names its edit
    and stack."""
    draw = random.Random(seed)
    base = validate_files(FILES).tree
    assert base is not None
    cases: list[tuple[Edit, StackName]] = []
    for edit in draw.sample(EDITS, len(EDITS)):
        report = validate_files(edited(FILES, *edit))
        if report.ok and report.tree is not None:
            affected = affected_stacks(base, report.tree)
            if affected.to_plan and not affected.removed:
                # a kind of stack (org, cluster, project) not sampled yet when the edit affects one
                seen = {stack.split("-")[0] for _, stack in cases}
                fresh = [s for s in sorted(affected.to_plan) if s.split("-")[0] not in seen]
                cases.append((edit, draw.choice(fresh or sorted(affected.to_plan))))
        if len(cases) == count:
            return cases
    raise AssertionError(f"only {len(cases)} of the {len(EDITS)} edits keep the tree valid and change a stack")


CASES = _sampled_cases(8)


@pytest.mark.parametrize(("edit", "stack"), CASES, ids=[f"{e[0]}:{'.'.join(map(str, e[1]))}:{e[2]}@{s}"
                                                        for e, s in CASES])
def test_the_scan_plans_the_resources_and_actions_terraform_plans(edit: Edit, stack: StackName,
                                                                  base: GovernanceTree,
                                                                  engine_for: EngineFactory,
                                                                  settings: Settings) -> None:
    files = edited(FILES, *edit)
    report = validate_files(files)
    assert report.ok and report.tree is not None, report.problems
    planned = engine_for(files).plan_many([stack])
    plan = planned[stack]
    assert isinstance(plan, Plan), plan
    scanned, scan = scanned_terraform_changes(settings.aws, base, report.tree, [stack],
                                              cache_dir=Path(settings.state_dir) / "graphs")
    assert scan.complete, scan.failures
    assert {(c.address, c.action.value) for c in scanned[stack]} == terraform_actions(plan), (edit, stack)


def test_the_cases_span_the_tree() -> None:
    """The sample is not one corner of the tree: it edits more than one file and plans more than
    one kind of stack (org, cluster, project)."""
    assert len({edit[0] for edit, _ in CASES}) > 1, CASES
    assert len({stack.split("-")[0] for _, stack in CASES}) > 1, CASES
