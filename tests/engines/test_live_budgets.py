"""The live scan of the projects' AWS Budgets.

Pure: a declared budget as project-nlp's stack captures it; live budgets shaped as DescribeBudgets
returns them (botocore's `Budget`: BudgetLimit {Amount, Unit} as strings, CostFilters as a map,
the service's CostTypes, TimePeriod and CalculatedSpend beside them) and notifications as
DescribeBudgetNotificationsForAccount returns them. Against the embedded endpoint: the example
tree's budgets created as terraform's provider creates them (CreateBudget, then CreateNotification
with its subscribers per notification block), then changed out of band."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from embedded_aws import EmbeddedAws
from engines.desired import DesiredObject
from engines.live import budgets
from engines.live.budgets import BUDGET, AccountBudgets, compare
from engines.live.items import AttributeDrift, LiveScan
from engines.live.runner import CallCounter
from tests.engines.live_apply import applied_example, scan_service

PROD = "111122223333"
TOPIC = f"arn:aws:sns:us-west-2:{PROD}:acme-hypergov-budget-alerts"
NLP = DesiredObject(
    stack="project-nlp", type=BUDGET, name="budget@ml-prod", address="aws_budgets_budget.budget_ml-prod", account=PROD,
    region="us-west-2", property_dependencies={},
    inputs={"accountId": PROD, "budgetType": "COST", "limitAmount": "171428.57", "limitUnit": "USD",
            "name": "acme-nlp-monthly", "timeUnit": "MONTHLY",
            "costFilters": [{"name": "TagKeyValue", "values": ["user:CostCentre$CC-2001"]}],
            "notifications": [{"comparisonOperator": "GREATER_THAN", "notificationType": "ACTUAL", "threshold": pct,
                               "thresholdType": "PERCENTAGE", "subscriberSnsTopicArns": [TOPIC]} for pct in (80, 100)]})
ACCOUNT = AccountBudgets(account=PROD, region="us-west-2", org="acme", declared={"acme-nlp-monthly": NLP},
                         stacks=frozenset({"org", "project-nlp", "project-vision"}))
LIVE: dict[str, Any] = {
    "BudgetName": "acme-nlp-monthly", "BudgetLimit": {"Amount": "171428.570000000", "Unit": "USD"},
    "CostFilters": {"TagKeyValue": ["user:CostCentre$CC-2001"]},
    "CostTypes": {"IncludeTax": True, "IncludeSubscription": True, "UseBlended": False},
    "TimeUnit": "MONTHLY", "BudgetType": "COST", "CalculatedSpend": {"ActualSpend": {"Amount": "0", "Unit": "USD"}}}
NOTIFIED = {"acme-nlp-monthly": [{"NotificationType": "ACTUAL", "ComparisonOperator": "GREATER_THAN", "Threshold": t,
                                  "ThresholdType": "PERCENTAGE", "NotificationState": "OK"} for t in (100.0, 80.0)]}


def live(**changes: Any) -> dict[str, Any]:
    budget = copy.deepcopy(LIVE)
    budget.update(changes)
    return budget


def test_a_budget_as_declared_is_no_drift_whatever_aws_fills_in_or_how_it_spells_numbers() -> None:
    assert compare(ACCOUNT, [live()], NOTIFIED) == []


def test_a_raised_limit_is_changed_with_both_amounts() -> None:
    (item,) = compare(ACCOUNT, [live(BudgetLimit={"Amount": "500000", "Unit": "USD"})], NOTIFIED)
    assert (item.kind, item.stack, item.address, item.account) == (
        "changed", "project-nlp", "aws_budgets_budget.budget_ml-prod", PROD)
    assert item.attributes == (AttributeDrift("limitAmount", "171428.57", "500000"),)


def test_a_widened_filter_and_a_dropped_notification_are_changed() -> None:
    filters = {"TagKeyValue": ["user:CostCentre$CC-2001", "user:CostCentre$CC-9999"]}
    (item,) = compare(ACCOUNT, [live(CostFilters=filters)], {"acme-nlp-monthly": NOTIFIED["acme-nlp-monthly"][:1]})
    assert [a.path for a in item.attributes] == ["costFilters", "notifications"]
    assert item.attributes[0].live == [{"name": "TagKeyValue",
                                        "values": ["user:CostCentre$CC-2001", "user:CostCentre$CC-9999"]}]
    assert [n["threshold"] for n in item.attributes[1].expected] == [100, 80]
    assert [n["threshold"] for n in item.attributes[1].live] == [100.0]


def test_a_deleted_budget_is_missing() -> None:
    (item,) = compare(ACCOUNT, [], {})
    assert (item.kind, item.fix) == ("missing", "hypergov apply --stack project-nlp recreates it")


@pytest.mark.parametrize(("name", "stack"), [
    pytest.param("acme-vision-monthly", "project-vision", id="of-a-project-not-budgeted-here"),
    pytest.param("acme-ghost-monthly", "org", id="of-no-project"),
])
def test_undeclared_budgets_named_as_hypergov_names_them_are_unmanaged(name: str, stack: str) -> None:
    others = [live(BudgetName=name), live(BudgetName="finance-quarterly")]  # the latter is not hypergov's
    (item,) = compare(ACCOUNT, [live(), *others], NOTIFIED)
    assert (item.kind, item.stack, item.address, item.ref) == (
        "unmanaged", stack, f"aws_budgets_budget.{name}", {"AccountId": PROD, "BudgetName": name})


# --- against the embedded endpoint ----------------------------------------------------------------

TYPES = ("aws:sns/topic:Topic", BUDGET)


def scan(aws: EmbeddedAws, context: Any) -> LiveScan:
    return scan_service(aws, budgets.units, context)


def test_after_an_apply_the_scan_is_clean_with_two_lists_per_account(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    aws.clear_calls()
    result = scan(aws, applied.context)
    assert (result.items, result.complete) == ((), True)
    calls = Counter(c["operation"] for c in aws.calls() if c["service"] == "budgets")
    assert calls == {"DescribeBudgets": 2, "DescribeBudgetNotificationsForAccount": 2}  # 4 and 2 budgets


def test_a_raised_limit_is_found_and_an_undeclared_budget_pruned(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    client = aws.client("budgets", account=PROD, region="us-west-2")
    client.update_budget(AccountId=PROD, NewBudget={
        "BudgetName": "acme-nlp-monthly", "BudgetType": "COST", "TimeUnit": "MONTHLY",
        "BudgetLimit": {"Amount": "300000", "Unit": "USD"},
        "CostFilters": {"TagKeyValue": ["user:CostCentre$CC-2001"]}})
    client.create_budget(AccountId=PROD, Budget={"BudgetName": "acme-ghost-monthly", "BudgetType": "COST",
                                                 "TimeUnit": "MONTHLY", "BudgetLimit": {"Amount": "10", "Unit": "USD"}})
    result = scan(aws, applied.context)
    assert [(i.kind, i.stack, i.address) for i in result.items] == [
        ("unmanaged", "org", "aws_budgets_budget.acme-ghost-monthly"),
        ("changed", "project-nlp", "aws_budgets_budget.budget_ml-prod")]
    assert result.items[1].attributes == (AttributeDrift("limitAmount", "171428.57", "300000"),)
    budgets.PRUNERS[BUDGET].delete(client, result.items[0], CallCounter())
    assert [i.kind for i in scan(aws, applied.context).items] == ["changed"]
    assert {b["BudgetName"] for b in client.describe_budgets(AccountId=PROD)["Budgets"]} == {
        "acme-nlp-monthly", "acme-recsys-monthly", "acme-speech-monthly", "acme-vision-monthly"}


def test_budgets_and_notifications_are_listed_in_pages(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    applied = applied_example(aws, types=TYPES)
    monkeypatch.setattr(budgets, "PAGE_SIZE", 2)
    aws.clear_calls()
    assert scan(aws, applied.context).items == ()
    calls = Counter(c["operation"] for c in aws.calls() if c["service"] == "budgets")
    assert calls == {"DescribeBudgets": 2 + 1, "DescribeBudgetNotificationsForAccount": 2 + 1}  # 4 and 2, 2 a page
