"""What a merge request showed is kept per config tree in the record store and compared with the
applier's plan by attribute value: the same changes pass; another value (a budget amount), another
change or another secret refuses the stack naming both sides; a tree without a record is
unreviewed (refused only with require_reviewed); no secret is ever written into the record."""

from __future__ import annotations

import json
import logging
from io import StringIO
from pathlib import Path

from cli.watch import report_pass
from engines.objects import LocalRecords
from engines.outcomes import Refusal
from engines.plan import MASK, Action, AttributeChange, Plan, ResourceChange, StackName, value_digest
from engines.showplan import UNKNOWN, changes_from_show
from reconciler.logs import EventLog, configure
from reconciler.pass_result import PassResult
from reconciler.reviewed import record_reviewed, review_verdict, reviewed_plan

SPEECH, ORG = StackName("project-speech"), StackName("org")
BUDGET = "aws_budgets_budget.budget_ml-prod"
ENTRY = "aws_eks_access_entry.access-engineer_gpu-west"


def change(address: str, action: Action = Action.UPDATE, *attributes: AttributeChange,
           note: str | None = None) -> ResourceChange:
    kind, name = address.split(".")
    return ResourceChange(address=address, type=kind, name=name, action=action, executor="terraform",
                          attributes=attributes, note=note)


def plan(*changes: ResourceChange, stack: StackName = SPEECH) -> Plan:
    return Plan(stack=stack, engine="terraform", changes=changes)


def amount(after: str, before: str = "120000.00") -> AttributeChange:
    return AttributeChange(path="limit_amount", before=before, after=after)


def test_the_record_round_trips_through_the_record_store(tmp_path: Path) -> None:
    records = LocalRecords(tmp_path)
    where = record_reviewed(records, "tree1", [plan(change(BUDGET, Action.UPDATE, amount("80000.00"))),
                                               plan(stack=ORG)], base_ref="main", method={})
    assert where == str(tmp_path / "reviewed" / "tree1.json")
    reviewed = reviewed_plan(records, "tree1")
    assert reviewed is not None and set(reviewed.stacks) == {SPEECH, ORG}
    assert reviewed.method == {SPEECH: "terraform", ORG: "terraform"}  # the plans' engine
    [kept] = reviewed.stacks[SPEECH]
    assert (kept.address, kept.action, kept.attributes) == (BUDGET, "update", (("limit_amount", '"80000.00"'),))
    # planned again (the merge request's pipeline ran twice): the newer record replaces the older
    record_reviewed(records, "tree1", [plan(stack=ORG)], base_ref="main", method={})
    again = reviewed_plan(records, "tree1")
    assert again is not None and set(again.stacks) == {ORG}


def test_no_record_or_an_unreadable_one_is_unreviewed(tmp_path: Path) -> None:
    records = LocalRecords(tmp_path)
    assert reviewed_plan(records, "absent") is None and reviewed_plan(records, None) is None
    (tmp_path / "reviewed").mkdir()
    (tmp_path / "reviewed" / "bad.json").write_text("{not json")
    assert reviewed_plan(records, "bad") is None


def _verdict(tmp_path: Path, reviewed: list[Plan], now: list[Plan], *, method: dict[str, str] | None = None,
             require: bool = False) -> dict[StackName, Refusal]:
    records = LocalRecords(tmp_path)
    record_reviewed(records, "tree1", reviewed, base_ref="main", method=method or {})
    verdict = review_verdict(reviewed_plan(records, "tree1"), now, require_reviewed=require)
    assert verdict.state == "reviewed"
    return dict(verdict.refused)


def test_a_budget_amount_changed_between_review_and_merge_refuses_the_stack(tmp_path: Path) -> None:
    reviewed = [plan(change(BUDGET, Action.UPDATE, amount("80000.00")))]
    assert _verdict(tmp_path, reviewed, [plan(change(BUDGET, Action.UPDATE, amount("80000.00", before="1.00")))]) == {}
    refused = _verdict(tmp_path, reviewed, [plan(change(BUDGET, Action.UPDATE, amount("90000.00")))])
    assert list(refused) == [SPEECH] and refused[SPEECH].kind == "plan changed"
    why = refused[SPEECH].message
    assert why.startswith("the plan differs from the one reviewed in the merge request (terraform)")
    assert f'only in the new plan: update {BUDGET} [limit_amount="90000.00"]' in why
    assert f'only in the reviewed one: update {BUDGET} [limit_amount="80000.00"]' in why
    assert why.endswith("Plan the change again in a merge request to review what would be applied")


def test_other_changes_refuse_and_what_is_not_compared(tmp_path: Path) -> None:
    reviewed = [plan(change(BUDGET)), plan(stack=ORG)]
    added = _verdict(tmp_path, reviewed, [plan(change(BUDGET), change(ENTRY, Action.CREATE))])
    assert added[SPEECH].kind == "plan changed"
    assert f"only in the new plan: create {ENTRY}" in added[SPEECH].message
    assert "only in the reviewed one: no changes" in added[SPEECH].message
    # a stack the merge request did not show is not compared; changes not carried out never count;
    # a value known only after apply is the same marker in both plans
    unknown = AttributeChange(path="arn", before=None, after=UNKNOWN)
    assert _verdict(tmp_path, [plan(change(BUDGET, Action.UPDATE, unknown))], [
        plan(change(ENTRY, Action.CREATE), stack=StackName("project-nlp")),
        plan(change(BUDGET, Action.UPDATE, unknown), change(ENTRY, Action.CREATE, note="not applied: no kubeconfig"))
    ]) == {}


def test_a_live_scan_review_compares_the_values_it_showed_in_any_spelling(tmp_path: Path) -> None:
    """The scan spells a budget amount as declared (a number as text) and a policy as a parsed
    document; terraform as the provider does, with computed attributes the scan cannot know."""
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"],
                                                      "Resource": "*"}]}
    scan = [plan(change(BUDGET, Action.UPDATE, amount("80000")),
                 change("aws_iam_policy.p", Action.UPDATE, AttributeChange("policy", None, policy)))]
    terraform = [plan(change(BUDGET, Action.UPDATE, amount("80000.0"), AttributeChange("arn", None, UNKNOWN)),
                      change("aws_iam_policy.p", Action.UPDATE, AttributeChange("policy", None, json.dumps(policy))))]
    assert _verdict(tmp_path, scan, terraform, method={SPEECH: "live scan"}) == {}
    other = [plan(change(BUDGET, Action.UPDATE, amount("90000.0")), terraform[0].changes[1])]
    refused = _verdict(tmp_path, scan, other, method={SPEECH: "live scan"})
    assert refused[SPEECH].kind == "plan changed"
    assert "(live scan)" in refused[SPEECH].message
    assert f"only in the new plan: update {BUDGET}" in refused[SPEECH].message


def test_a_changed_secret_is_a_difference_and_never_written(tmp_path: Path) -> None:
    """Terraform's `show -json` holds a sensitive value in clear, marked in `after_sensitive`."""
    def shown(password: str) -> Plan:
        entry = {"address": "aws_iam_user_login_profile.x", "mode": "managed", "type": "aws_iam_user_login_profile",
                 "name": "x", "change": {"actions": ["update"], "before": {"password": "old-secret-1", "user": "u"},
                                         "after": {"password": password, "user": "u"},
                                         "before_sensitive": {"password": True}, "after_sensitive": {"password": True}}}
        return plan(*changes_from_show({"resource_changes": [entry]}))

    first = shown("new-secret-2")
    [attribute] = first.changes[0].attributes
    assert (attribute.before, attribute.after, attribute.sensitive) == (MASK, MASK, True)
    assert attribute.digest == value_digest("new-secret-2") and "secret" not in json.dumps(first.as_dict())
    assert _verdict(tmp_path, [first], [shown("new-secret-2")]) == {}
    refused = _verdict(tmp_path, [first], [shown("new-secret-3")])
    assert refused[SPEECH].kind == "plan changed"
    assert f"[password={MASK}]" in refused[SPEECH].message and "secret" not in refused[SPEECH].message
    written = (tmp_path / "reviewed" / "tree1.json").read_text()
    assert "secret" not in written and value_digest("new-secret-2") not in written  # keyed by the tree id


def test_an_unreviewed_tree_is_refused_only_when_review_is_required() -> None:
    changed, quiet = plan(change(BUDGET)), plan(stack=ORG)
    assert review_verdict(None, [changed, quiet], require_reviewed=False).refused == {}
    verdict = review_verdict(None, [changed, quiet], require_reviewed=True, where="s3://state/prod/reconciler/x.json")
    assert verdict.state == "unreviewed" and list(verdict.refused) == [SPEECH]  # nothing to apply, nothing refused
    why = verdict.refused[SPEECH]
    assert why.kind == "not reviewed"
    assert "Run `hypergov plan --base <target branch>` on the merge request" in why.message
    assert "by the config tree's Git id in s3://state/prod/reconciler/x.json" in why.message


def test_a_stack_the_review_did_not_show_is_refused_when_review_is_required(tmp_path: Path) -> None:
    refused = _verdict(tmp_path, [plan(stack=ORG)], [plan(change(BUDGET)), plan(stack=ORG)], require=True)
    assert list(refused) == [SPEECH] and refused[SPEECH].kind == "not reviewed"
    assert refused[SPEECH].message.startswith("not reviewed: the merge request's plan")


def test_an_unreviewed_pass_is_a_warning_event() -> None:
    out, err = StringIO(), StringIO()
    log = EventLog(configure("json", environ={}, out=out, err=err), branch="main")
    report_pass(log, PassResult(head="c0ffee" * 6 + "abcd", base=None, status="applied", review="unreviewed"),
                seconds=1.0)
    events = [json.loads(line) for line in err.getvalue().splitlines()]
    [warning] = [e for e in events if e["event"] == "review.unreviewed"]
    assert warning["level"] == logging.getLevelName(logging.WARNING).lower() and warning["review"] == "unreviewed"
    assert "hypergov plan --base" in warning["message"]
