"""Plans render for terminals and merge requests."""

from __future__ import annotations

from engines.outcomes import Refusal, permanent
from engines.plan import Action, ApplyResult, AttributeChange, Plan, ResourceChange, StackName
from reconciler.render import apply_line, render_markdown, render_text, summary_line


def _plan() -> Plan:
    return Plan(stack=StackName("project-vision"), engine="terraform", changes=(
        ResourceChange("aws_iam_role.engineer", "aws_iam_role", "engineer", Action.UPDATE, "terraform",
                       (AttributeChange("max_session_duration", 3600, 7200),)),
        ResourceChange("aws_budgets_budget.monthly", "aws_budgets_budget", "monthly", Action.CREATE, "terraform"),
        ResourceChange("kubernetes:v1/LimitRange:hyperpod-ns-vision/max-gpus", "LimitRange", "max-gpus",
                       Action.CREATE, "kubernetes", note="not applied: no kubeconfig for gpu-west"),
        ResourceChange("aws_iam_policy.same", "aws_iam_policy", "same", Action.NOOP, "terraform"),
    ))


def test_summary_counts_only_actionable_changes() -> None:
    assert summary_line(_plan()) == "project-vision: 1 to create, 1 to update, 0 to replace, 0 to delete"
    empty = Plan(stack=StackName("org"), engine="terraform", changes=())
    assert summary_line(empty) == "org: no changes"


def test_text_shows_attribute_changes_and_notes() -> None:
    text = render_text([_plan()])
    assert "~ aws_iam_role.engineer" in text
    assert "max_session_duration: 3600 -> 7200" in text
    assert "[not applied: no kubeconfig for gpu-west]" in text
    assert "aws_iam_policy.same" not in text


def test_markdown_has_table_and_details_per_changed_stack() -> None:
    md = render_markdown([_plan(), Plan(stack=StackName("org"), engine="terraform", changes=())],
                         extra_sections=["### capacity impact", "none"])
    assert "**1** of 2 stacks change: 1 to create, 1 to update, 0 to replace, 0 to delete." in md
    assert "1 object(s) are planned but will not be applied" in md
    assert "| `project-vision` | 1 | 1 | 0 | 0 |" in md
    assert "`max_session_duration`: 3600 → 7200" in md
    assert "<code>org</code>" not in md
    assert md.rstrip().endswith("none")


def test_apply_line_says_what_was_applied_or_why_not() -> None:
    plan = _plan()
    done = ApplyResult(StackName("project-vision"), applied=plan.actionable, skipped=(plan.changes[2],))
    assert apply_line(done) == "applied project-vision: 2 change(s), 1 not applied (no kubeconfig)"
    assert done.failure is None
    partial = ApplyResult(StackName("project-vision"), failed=((plan.changes[0], permanent("AccessDenied",
                                                                                          "access-denied")),))
    assert apply_line(partial) == "FAILED project-vision: aws_iam_role.engineer: AccessDenied"
    blocked = ApplyResult(StackName("project-x"), refusal=Refusal("dependency failed", "not applied: org failed"))
    assert apply_line(blocked) == "FAILED project-x: not applied: org failed"


def test_markdown_carries_a_plans_notes_into_the_merge_request() -> None:
    removed = Plan(stack=StackName("project-gone"), engine="terraform", notes=("stack removed from the tree",),
                   changes=(ResourceChange("aws_iam_role.engineer", "aws_iam_role", "engineer", Action.DELETE,
                                           "terraform"),))
    md = render_markdown([removed])
    assert "> **note:** stack removed from the tree\n\n</details>" in md  # a blank line ends the quote


def test_leading_sections_come_above_the_resource_tables() -> None:
    md = render_markdown([_plan()], leading_sections=["### Governance summary\n\nNo governance changes."],
                         extra_sections=["### Required approvals"])
    lines = md.splitlines()
    assert lines[:5] == ["## hypergov plan", "", "### Governance summary", "", "No governance changes."]
    assert (md.index("### Governance summary") < md.index("### Resource changes")
            < md.index("| `project-vision` | 1 | 1 | 0 | 0 |") < md.index("### Required approvals"))
    assert "### Resource changes" not in render_markdown([_plan()])  # a plain plan keeps its layout
