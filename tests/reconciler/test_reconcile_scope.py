"""Which stacks a reconciler pass plans (pure: trees in, stack names out)."""

from __future__ import annotations

from engines.plan import StackName
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from reconciler.reconcile import reconcile_scope
from tests.example_tree import example_files


def _tree(files: dict[str, bytes]) -> GovernanceTree:
    report = validate_files(files)
    assert report.ok and report.tree is not None, report.problems
    return report.tree


def test_first_pass_plans_every_stack_and_destroys_state_without_source() -> None:
    head = _tree(example_files())
    scope = reconcile_scope(None, head, [StackName("org"), StackName("project-gone"), StackName("project-vision")])
    assert scope.plan[0] == "org" and "project-vision" in scope.plan and len(scope.plan) == 8
    assert scope.destroy == ("project-gone",)


def test_later_passes_plan_only_what_changed_since_the_applied_tree() -> None:
    files = example_files()
    base = _tree(files)
    changed = dict(files)
    changed["projects/speech.yaml"] = files["projects/speech.yaml"].replace(b"monthly_usd: 120000", b"monthly_usd: 1")
    del changed["projects/recsys.yaml"]
    scope = reconcile_scope(base, _tree(changed), [StackName("project-gone")])
    assert "project-speech" in scope.plan and "project-vision" not in scope.plan
    assert scope.destroy == ("project-recsys",)  # known-but-sourceless stacks are a first-pass matter
    assert reconcile_scope(base, base, []).plan == () and reconcile_scope(base, base, []).destroy == ()
