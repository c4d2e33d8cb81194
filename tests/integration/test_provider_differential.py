"""The provider engine plans what terraform plans, by property (issue 34): the example tree is
applied with the real terraform against the embedded endpoint (a copy of the run's snapshot);
then for sampled single-field edits of its files (the generator and the sampling of
`test_scan_plan_property`, with a seed of this module's own), one affected org or project stack is planned by
the terraform engine and by the provider engine on the same state: every resource, action and
attribute change must be the same. The provider engine then applies its plan, and terraform must
plan nothing for the stack; the stack is then put back to the example by the provider engine for
the next case.

Real: terraform 1.11 with hashicorp/aws 5.100.0, the same provider binary spoken to over the
plugin protocol, the embedded endpoint in a child process. The expected changes are terraform's."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.factory import provider_engine, terraform_engine
from engines.plan import Plan, StackName
from engines.settings import Settings
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from tests.integration.applied_once import restore
from tests.integration.conftest import CREDENTIALS, example_files
from tests.integration.test_scan_plan_property import _sampled_cases
from tests.tree_edits import Edit, edited

pytestmark = pytest.mark.integration
FILES = example_files()
# Terraform's objects are in the org and project stacks (a cluster stack's are HyperPod's and
# Kubernetes', planned by the same executors in both engines): the cases are drawn among those.
CASES = [case for case in _sampled_cases(16, seed=34) if not case[1].startswith("cluster-")][:4]
ENVIRON = {**os.environ, **CREDENTIALS}


@pytest.fixture(scope="module")
def base(endpoint: EmbeddedAwsProcess, applied_example: Path, settings: Settings,
         tmp_path_factory: pytest.TempPathFactory) -> GovernanceTree:
    """The example tree, every stack applied by terraform (a copy of the run's snapshot)."""
    copy = restore(applied_example, endpoint, tmp_path_factory.mktemp("applied"))
    shutil.copytree(copy / "state", settings.state_dir, symlinks=True, dirs_exist_ok=True)
    report = validate_files(FILES)
    assert report.ok and report.tree is not None, report.problems
    return report.tree


def terraform_changes(plan: Plan) -> set[tuple[object, ...]]:
    """Each terraform change: address, action and every attribute change (path, before, after,
    sensitive, forces replacement)."""
    return {(c.address, c.action.value, tuple(sorted(
        (a.path, repr(a.before), repr(a.after), a.sensitive, a.forces_replacement) for a in c.attributes)))
        for c in plan.actionable if c.executor == "terraform"}


def _planned(plans: dict[StackName, object], stack: StackName) -> Plan:
    plan = plans[stack]
    assert isinstance(plan, Plan), plan
    return plan


@pytest.mark.parametrize(("edit", "stack"), CASES, ids=[f"{e[0]}:{'.'.join(map(str, e[1]))}:{e[2]}@{s}"
                                                        for e, s in CASES])
def test_the_provider_engine_plans_what_terraform_plans_and_leaves_it_nothing(
        edit: Edit, stack: StackName, base: GovernanceTree, settings: Settings) -> None:
    report = validate_files(edited(FILES, *edit))
    assert report.ok and report.tree is not None, report.problems
    reference = _planned(terraform_engine(settings, report.tree, environ=ENVIRON).plan_many([stack]), stack)
    provider = provider_engine(settings, report.tree, environ=ENVIRON)
    planned = _planned(provider.plan_many([stack]), stack)
    assert planned.engine == "provider"
    assert terraform_changes(planned) == terraform_changes(reference), (edit, stack)

    (applied,) = provider.apply_many([planned])
    assert applied.ok, (applied.error, applied.failed)
    after = _planned(terraform_engine(settings, report.tree, environ=ENVIRON).plan_many([stack]), stack)
    assert not terraform_changes(after), (edit, stack, after.actionable)

    back = provider_engine(settings, base, environ=ENVIRON)  # the example again, for the next case
    (restored,) = back.apply_many([_planned(back.plan_many([stack]), stack)])
    assert restored.ok, (restored.error, restored.failed)


def test_the_cases_edit_more_than_one_file() -> None:
    assert len({edit[0] for edit, _ in CASES}) > 1, CASES
