"""Contract of the Budgets operations the endpoint adds to moto (what the Terraform provider
calls for aws_budgets_budget): tags, UpdateBudget, notifications and subscribers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .conftest import assert_complete, error_of

NOTIFICATION = {"NotificationType": "ACTUAL", "ComparisonOperator": "GREATER_THAN", "Threshold": 80.0,
                "ThresholdType": "PERCENTAGE"}
EMAIL = {"SubscriptionType": "EMAIL", "Address": "lead@example.com"}
Ctx = dict[str, str]


def budget(limit: str = "1000") -> dict[str, Any]:
    return {"BudgetName": "acme-nlp-monthly", "BudgetType": "COST", "TimeUnit": "MONTHLY",
            "BudgetLimit": {"Amount": limit, "Unit": "USD"}}


@pytest.fixture
def budgets(client: Callable[..., Any]) -> Any:
    return client("budgets")


@pytest.fixture
def ctx(budgets: Any, account: str) -> Ctx:
    budgets.create_budget(AccountId=account, Budget=budget(),
                          NotificationsWithSubscribers=[{"Notification": NOTIFICATION, "Subscribers": [EMAIL]}],
                          ResourceTags=[{"Key": "Project", "Value": "nlp"}])
    return {"account": account, "arn": f"arn:aws:budgets::{account}:budget/acme-nlp-monthly"}


def test_tags_from_create_then_tag_and_untag(budgets: Any, ctx: Ctx) -> None:
    created = budgets.list_tags_for_resource(ResourceARN=ctx["arn"])
    budgets.tag_resource(ResourceARN=ctx["arn"], ResourceTags=[{"Key": "CostCentre", "Value": "CC-1"},
                                                               {"Key": "Project", "Value": "nlp2"}])
    budgets.untag_resource(ResourceARN=ctx["arn"], ResourceTagKeys=["CostCentre"])
    final = budgets.list_tags_for_resource(ResourceARN=ctx["arn"])

    assert_complete("budgets", "ListTagsForResource", created)
    assert created["ResourceTags"] == [{"Key": "Project", "Value": "nlp"}]
    assert final["ResourceTags"] == [{"Key": "Project", "Value": "nlp2"}]


def test_update_budget_changes_the_limit(budgets: Any, ctx: Ctx) -> None:
    budgets.update_budget(AccountId=ctx["account"], NewBudget=budget("2500"))

    described = budgets.describe_budget(AccountId=ctx["account"], BudgetName="acme-nlp-monthly")["Budget"]

    assert described["BudgetLimit"] == {"Amount": "2500", "Unit": "USD"}
    assert "TimePeriod" in described


def test_subscribers_of_a_notification(budgets: Any, ctx: Ctx) -> None:
    key = {"AccountId": ctx["account"], "BudgetName": "acme-nlp-monthly", "Notification": NOTIFICATION}
    sns = {"SubscriptionType": "SNS", "Address": "arn:aws:sns:us-east-1:111122223333:alerts"}

    first = budgets.describe_subscribers_for_notification(**key)
    budgets.create_subscriber(**key, Subscriber=sns)
    budgets.update_subscriber(**key, OldSubscriber=EMAIL, NewSubscriber={**EMAIL, "Address": "new@example.com"})
    budgets.delete_subscriber(**key, Subscriber=sns)
    final = budgets.describe_subscribers_for_notification(**key)

    assert_complete("budgets", "DescribeSubscribersForNotification", first)
    assert first["Subscribers"] == [EMAIL]
    assert final["Subscribers"] == [{**EMAIL, "Address": "new@example.com"}]


def test_update_notification(budgets: Any, ctx: Ctx) -> None:
    budgets.update_notification(AccountId=ctx["account"], BudgetName="acme-nlp-monthly", OldNotification=NOTIFICATION,
                                NewNotification={**NOTIFICATION, "Threshold": 95.0})

    listed = budgets.describe_notifications_for_budget(AccountId=ctx["account"], BudgetName="acme-nlp-monthly")

    assert_complete("budgets", "DescribeNotificationsForBudget", listed)
    assert [n["Threshold"] for n in listed["Notifications"]] == [95.0]


def test_deleting_a_budget_drops_its_tags(budgets: Any, ctx: Ctx) -> None:
    budgets.delete_budget(AccountId=ctx["account"], BudgetName="acme-nlp-monthly")
    budgets.create_budget(AccountId=ctx["account"], Budget=budget())

    assert budgets.list_tags_for_resource(ResourceARN=ctx["arn"])["ResourceTags"] == []


INVALID: list[Any] = [
    pytest.param("list_tags_for_resource", lambda c: {"ResourceARN": c["arn"].replace("nlp", "vision")},
                 "NotFoundException", "doesn't exist", id="tags-unknown-budget"),
    pytest.param("list_tags_for_resource", lambda c: {"ResourceARN": "arn:aws:iam::111122223333:role/x"},
                 "InvalidParameterException", "not a budget ARN", id="tags-not-a-budget-arn"),
    pytest.param("list_tags_for_resource", lambda c: {},
                 "InvalidParameterException", "Value null at 'resourceARN'", id="tags-missing-arn"),
    pytest.param("tag_resource", lambda c: {"ResourceARN": c["arn"], "ResourceTags": [{"Key": "", "Value": "v"}]},
                 "InvalidParameterException", "length greater than or equal to 1", id="tag-empty-key"),
    pytest.param("tag_resource", lambda c: {"ResourceARN": c["arn"].replace("nlp", "vision"), "ResourceTags": []},
                 "NotFoundException", "doesn't exist", id="tag-unknown-budget"),
    pytest.param("untag_resource", lambda c: {"ResourceARN": c["arn"]},
                 "InvalidParameterException", "Value null at 'resourceTagKeys'", id="untag-missing-keys"),
    pytest.param("update_budget", lambda c: {"AccountId": c["account"], "NewBudget": {**budget(), "BudgetName": "x"}},
                 "NotFoundException", "doesn't exist", id="update-unknown-budget"),
    pytest.param("update_budget", lambda c: {"AccountId": c["account"], "NewBudget": {
        **budget(), "TimeUnit": "WEEKLY"}}, "InvalidParameterException", "enum value set", id="update-time-unit-enum"),
    pytest.param("update_budget", lambda c: {"AccountId": c["account"], "NewBudget": {
        k: v for k, v in budget().items() if k != "BudgetLimit"}}, "InvalidParameterException", "Budget Limit",
                 id="update-without-limit"),
    pytest.param("describe_subscribers_for_notification", lambda c: {
        "AccountId": c["account"], "BudgetName": "acme-nlp-monthly", "Notification": {**NOTIFICATION, "Threshold": 1}},
                 "NotFoundException", "Unable to find notification", id="subscribers-unknown-notification"),
    pytest.param("create_subscriber", lambda c: {"AccountId": c["account"], "BudgetName": "acme-nlp-monthly",
                                                 "Notification": NOTIFICATION, "Subscriber": EMAIL},
                 "DuplicateRecordException", "already exists", id="subscriber-duplicate"),
]


@pytest.mark.parametrize(("operation", "request_of", "code", "message"), INVALID)
def test_invalid_requests_get_documented_errors(client: Callable[..., Any], ctx: Ctx, operation: str,
                                                request_of: Callable[[Ctx], dict[str, Any]], code: str,
                                                message: str) -> None:
    got = error_of(getattr(client("budgets", checked=False), operation), **request_of(ctx))

    assert got[:2] == (code, 400)
    assert message in got[2]
