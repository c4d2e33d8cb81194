"""What a merge request showed is kept per config tree and compared with the reconciler's plan:
the same (address, action) set passes, any difference refuses the stack naming both sides; no
record (or an unreadable one) compares nothing."""

from __future__ import annotations

from pathlib import Path

from engines.plan import Action, Plan, ResourceChange, StackName
from reconciler.reviewed import differing, record_reviewed, reviewed_plan

SPEECH = StackName("project-speech")


def plan(*changes: tuple[str, Action], stack: StackName = SPEECH, note: str | None = None) -> Plan:
    return Plan(stack=stack, engine="terraform", changes=tuple(
        ResourceChange(address=a, type=a.split(".")[0], name=a.split(".")[1], action=act, executor="terraform",
                       note=note) for a, act in changes))


BUDGET = ("aws_budgets_budget.budget_ml-prod", Action.UPDATE)
ENTRY = ("aws_eks_access_entry.access-engineer_gpu-west", Action.CREATE)


def test_the_same_changes_pass_and_any_other_refuses_the_stack_with_both_sides(tmp_path: Path) -> None:
    record_reviewed(tmp_path, "tree1", [plan(BUDGET), plan(stack=StackName("org"))], base_ref="main",
                    method={SPEECH: "live scan"})
    reviewed = reviewed_plan(tmp_path, "tree1")
    assert reviewed is not None
    assert differing(reviewed, [plan(BUDGET), plan(("aws_x.y", Action.NOOP), stack=StackName("org"))]) == {}
    refused = differing(reviewed, [plan(BUDGET, ENTRY)])
    assert list(refused) == [SPEECH]
    assert "(live scan)" in refused[SPEECH]
    assert f"only in the new plan: create {ENTRY[0]}" in refused[SPEECH]
    assert "only in the reviewed one: no changes" in refused[SPEECH]
    assert differing(reviewed, [plan()])[SPEECH].endswith("Plan the change again in a merge request to review "
                                                          "what would be applied")
    # a stack the merge request did not show is not compared; changes not carried out never count
    unapplied = plan(ENTRY, note="not applied: no kubeconfig")
    with_unapplied = Plan(stack=SPEECH, engine="terraform", changes=plan(BUDGET).changes + unapplied.changes)
    assert differing(reviewed, [plan(ENTRY, stack=StackName("project-nlp")), with_unapplied]) == {}


def test_no_record_or_an_unreadable_one_compares_nothing(tmp_path: Path) -> None:
    assert reviewed_plan(tmp_path, "absent") is None and reviewed_plan(tmp_path, None) is None
    (tmp_path / "reviewed").mkdir()
    (tmp_path / "reviewed" / "bad.json").write_text("{not json")
    assert reviewed_plan(tmp_path, "bad") is None
