"""What `hypergov drift` prints and exits with, from a live scan and the terraform refresh (pure):
0 only when both are complete and clean, 2 on any drift, 1 when either part failed somewhere,
even if what was read is clean."""

from __future__ import annotations

import pytest

from engines.live.items import AttributeDrift, DriftItem, LiveScan, ScanFailure
from engines.live.scan import PRUNERS
from engines.outcomes import temporary
from engines.plan import Action, AttributeChange, Drift, DriftOutcome, ResourceChange, StackName
from reconciler.drift_repair import prune, repair_plan
from reconciler.drift_report import drift_exit, drift_json, drift_markdown, drift_text

ORG, GPU = StackName("org"), StackName("cluster-gpu-west")
ITEM = DriftItem(kind="changed", stack=GPU, address="hyperpod:ComputeQuota:vision-on-gpu-west",
                 type="sagemaker:ComputeQuota", account="111122223333", region="us-west-2",
                 fix="hypergov apply --stack cluster-gpu-west restores it",
                 attributes=(AttributeDrift("ComputeQuotaTarget.FairShareWeight", 30, 35),),
                 changed_by="arn:aws:sts::111122223333:assumed-role/lead/alice", changed_at="2025-03-04T10:12:09+00:00")
THROTTLED = temporary("AWS ListComputeQuotas: ThrottlingException: Rate exceeded", "throttled", 30.0)


def scan(*items: DriftItem, failures: tuple[ScanFailure, ...] = ()) -> LiveScan:
    return LiveScan(items=items, failures=failures, api_calls=3, seconds=0.1, scanned_at="2025-03-04T10:30:00+00:00",
                    stacks=(GPU,))


CLEAN: dict[StackName, DriftOutcome] = {ORG: Drift(stack=ORG), GPU: Drift(stack=GPU)}


def test_exit_status() -> None:
    assert drift_exit(scan(), CLEAN) == 0
    assert drift_exit(scan(ITEM), CLEAN) == 2
    role = ResourceChange(address="aws_iam_role.r", type="aws_iam_role", name="r", action=Action.UPDATE,
                          executor="terraform")
    assert drift_exit(scan(), {**CLEAN, ORG: Drift(stack=ORG, changes=(role,))}) == 2
    assert drift_exit(scan(ITEM, failures=(ScanFailure(GPU, "cluster gpu-west", THROTTLED),)), CLEAN) == 1
    assert drift_exit(scan(), {**CLEAN, ORG: THROTTLED}) == 1  # the refresh failed: incomplete


def test_text_names_each_stack_and_each_items_attributes_and_fix() -> None:
    out, errors = drift_text(scan(ITEM), CLEAN)
    assert out == [
        "org: in sync",
        "cluster-gpu-west: DRIFTED",
        "  changed   hyperpod:ComputeQuota:vision-on-gpu-west (111122223333 us-west-2) by "
        "arn:aws:sts::111122223333:assumed-role/lead/alice at 2025-03-04T10:12:09+00:00",
        "      ComputeQuotaTarget.FairShareWeight: 30 -> 35",
        "      fix: hypergov apply --stack cluster-gpu-west restores it"]
    assert errors == []


def test_a_cluster_not_read_is_never_in_sync() -> None:
    out, errors = drift_text(scan(failures=(ScanFailure(GPU, "cluster gpu-west (arn:x)", THROTTLED),)), CLEAN)
    assert out == ["org: in sync"]
    assert errors == ["cluster-gpu-west: temporary: AWS ListComputeQuotas: ThrottlingException: Rate exceeded "
                      "(scanning cluster gpu-west (arn:x); the scan is incomplete)"]


def test_json_has_the_documented_keys() -> None:
    change = ResourceChange(address="aws_iam_role.r", type="aws_iam_role", name="r", action=Action.UPDATE,
                            executor="terraform", attributes=(AttributeChange("max_session_duration", 3600, 7200),))
    data = drift_json(scan(ITEM), {ORG: Drift(stack=ORG, changes=(change,)), GPU: THROTTLED}, commit="abc")
    assert list(data) == ["commit", "scanned_at", "seconds", "api_calls", "api_calls_by_service", "complete", "items",
                          "errors", "not_read", "refreshed"]
    assert (data["commit"], data["api_calls"], data["complete"]) == ("abc", 3, False)
    assert data["items"] == [ITEM.as_dict()]
    assert data["refreshed"] == [
        {"stack": "org", "drifted": True, "changes": [{"address": "aws_iam_role.r", "action": "update", "attributes": [
            {"path": "max_session_duration", "before": 3600, "after": 7200}]}]},
        {"stack": "cluster-gpu-west", "error": THROTTLED.as_dict()}]


def test_markdown_says_the_verdict_counts_per_kind_and_one_table_per_drifted_stack() -> None:
    stranger = DriftItem(kind="unmanaged", stack=GPU, address="hyperpod:ComputeQuota:interns|x",
                         type="sagemaker:ComputeQuota", account="111122223333", region="us-west-2",
                         fix="delete it", attributes=(AttributeDrift("ComputeQuotaTarget.TeamName", None, "interns"),))
    text = drift_markdown(scan(ITEM, stranger), CLEAN, commit="0123456789abcdef", compared_with="the working tree")
    lines = text.splitlines()
    assert lines[0] == "## hypergov drift: drift found"
    assert "Compared the working tree (commit `0123456789ab`)" in lines[2]
    assert "| unmanaged | 1 |" in lines and "| changed | 1 |" in lines
    assert lines.count("### cluster-gpu-west") == 1 and "### org" not in lines  # org is in sync
    unmanaged_row = next(line for line in lines if line.startswith("| unmanaged | `hyperpod"))
    changed_row = next(line for line in lines if line.startswith("| changed | `hyperpod"))
    assert lines.index(unmanaged_row) < lines.index(changed_row)  # the more serious kind first
    assert "interns\\|x" in unmanaged_row  # a pipe in a value cannot break the table
    assert "| `ComputeQuotaTarget.FairShareWeight` | 30 | 35 |" in changed_row
    assert "- `hyperpod:ComputeQuota:vision-on-gpu-west`: hypergov apply --stack cluster-gpu-west restores it" in lines


def test_markdown_of_an_incomplete_scan_lists_what_was_not_read() -> None:
    text = drift_markdown(scan(failures=(ScanFailure(GPU, "cluster gpu-west", THROTTLED),)), CLEAN, commit=None,
                          compared_with="the working tree")
    assert text.startswith("## hypergov drift: incomplete: part of the org could not be read\n")
    assert "- **cluster-gpu-west**: temporary: AWS ListComputeQuotas" in text
    assert drift_markdown(scan(), CLEAN, commit=None, compared_with="x").startswith("## hypergov drift: no drift\n")


def test_repairs_apply_the_stacks_in_dependency_order_and_prune_only_unmanaged_items() -> None:
    missing = DriftItem(kind="missing", stack=ORG, address="aws_iam_policy.boundary", type="aws_iam_policy",
                        account="1", region="r", fix="f")
    stranger = DriftItem(kind="unmanaged", stack=GPU, address="hyperpod:ComputeQuota:x", type="sagemaker:ComputeQuota",
                         account="1", region="r", fix="f", ref={"ComputeQuotaId": "q"})
    odd = DriftItem(kind="unmanaged", stack=ORG, address="thing.x", type="thing", account="1", region="r", fix="f")
    plan = repair_plan([ITEM, stranger, missing, odd], [ORG, GPU], PRUNERS)
    assert plan.stacks == (ORG, GPU)
    assert plan.items == {GPU: ("changed hyperpod:ComputeQuota:vision-on-gpu-west",),
                          ORG: ("missing aws_iam_policy.boundary",)}
    assert (plan.unmanaged, plan.unprunable) == ((stranger,), (odd,))
    with pytest.raises(ValueError, match="not unmanaged"):
        prune([ITEM], PRUNERS, lambda *_: None)
