"""moto's Budgets service completed with what the Terraform provider calls on every read and
update of ``aws_budgets_budget`` and what the live scan reads (DescribeBudgets paged,
DescribeBudgetNotificationsForAccount): tags (ListTagsForResource, TagResource, UntagResource, and
CreateBudget's ResourceTags), UpdateBudget, and the subscriber and notification operations.

Without ListTagsForResource the provider retries the unknown operation for minutes and then
fails; that is the hang this module removes.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from moto.budgets.models import Budget, BudgetsBackend
from moto.budgets.responses import BudgetsResponse
from moto.core.base_backend import BackendDict, BaseBackend
from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import unix_time
from moto.utilities.utils import PARTITION_NAMES

from embedded_aws.errors import (
    budgets_duplicate,
    budgets_invalid,
    budgets_invalid_token,
    budgets_not_found,
)
from embedded_aws.extension import ModelValidatedResponse, page

BUDGET_ARN = re.compile(r"arn:aws[a-z-]*:budgets::(?P<account>\d{12}):budget/(?P<name>.+)")
EXTENDED = frozenset({
    "CreateBudget", "UpdateBudget", "DeleteBudget", "DescribeBudgets",
    "DescribeBudgetNotificationsForAccount", "ListTagsForResource", "TagResource", "UntagResource",
    "DescribeNotificationsForBudget", "DescribeSubscribersForNotification", "CreateSubscriber", "DeleteSubscriber",
    "UpdateSubscriber", "UpdateNotification",
})


class BudgetTagsBackend(BaseBackend):
    """Tags of budgets, by budget ARN (Budgets is global: one backend per partition)."""

    def __init__(self, region_name: str, account_id: str) -> None:
        super().__init__(region_name, account_id)
        self.tags: dict[str, dict[str, str]] = {}


budget_tags_backends: BackendDict[BudgetTagsBackend] = BackendDict(
    BudgetTagsBackend, "budgets", use_boto3_regions=False, additional_regions=PARTITION_NAMES)


class ExtendedBudgetsResponse(ModelValidatedResponse, BudgetsResponse):
    VALIDATED: ClassVar[frozenset[str]] = EXTENDED

    @property
    def tags(self) -> dict[str, dict[str, str]]:
        return budget_tags_backends[self.current_account][self.partition].tags

    def create_budget(self) -> str:
        result = super().create_budget()
        name = self.param("Budget")["BudgetName"]
        self.tags[self._arn(self.param("AccountId"), name)] = _tag_map(self.param("ResourceTags", []))
        return result

    def update_budget(self) -> ActionResult:
        new = self.param("NewBudget")
        budget = self._budget(self.param("AccountId"), new["BudgetName"])
        if "BudgetLimit" not in new and "PlannedBudgetLimits" not in new and "AutoAdjustData" not in new:
            raise budgets_invalid("Unable to update budget - please provide one of the followings: Budget Limit/ "
                                  "Planned Budget Limit/ Auto Adjust Data")
        kept: dict[str, Any] = {key: budget.budget[key] for key in ("TimePeriod", "CalculatedSpend")
                                if key in budget.budget}
        budget.budget = {**kept, **json.loads(json.dumps(new, default=_epoch)), "LastUpdatedTime": unix_time()}
        return EmptyResult()

    def delete_budget(self) -> str:
        result = super().delete_budget()
        self.tags.pop(self._arn(self.param("AccountId"), self.param("BudgetName")), None)
        return result

    def describe_budgets(self) -> ActionResult:  # type: ignore[override]  # moto: str, one page, "nextToken"
        """Paged as the API documents (MaxResults, default 100; NextToken); moto returns every
        budget at once under a key the model does not have."""
        backend: BudgetsBackend = self.backend
        chunk, token = self._page(list(backend.describe_budgets(account_id=self.param("AccountId"))))
        return self.shaped({"Budgets": chunk, "NextToken": token})

    def describe_budget_notifications_for_account(self) -> ActionResult:
        """Every budget of the account that has notifications, with them, paged (moto lacks it)."""
        backend: BudgetsBackend = self.backend
        listed = [{"BudgetName": name, "Notifications": [n.details for n in budget.notifications]}
                  for name, budget in sorted(backend.budgets[self.param("AccountId")].items()) if budget.notifications]
        chunk, token = self._page(listed)
        return self.shaped({"BudgetNotificationsForAccount": chunk, "NextToken": token})

    # Tags ------------------------------------------------------------------------------------
    def list_tags_for_resource(self) -> ActionResult:
        arn = self._existing_arn()
        return self.shaped({"ResourceTags": [{"Key": k, "Value": v} for k, v in self.tags.get(arn, {}).items()]})

    def tag_resource(self) -> ActionResult:
        arn = self._existing_arn()
        self.tags.setdefault(arn, {}).update(_tag_map(self.param("ResourceTags", [])))
        return EmptyResult()

    def untag_resource(self) -> ActionResult:
        arn = self._existing_arn()
        for key in self.param("ResourceTagKeys", []):
            self.tags.get(arn, {}).pop(key, None)
        return EmptyResult()

    # Notifications and subscribers -------------------------------------------------------------
    def describe_notifications_for_budget(self) -> ActionResult:  # type: ignore[override]  # moto: str
        budget = self._budget(self.param("AccountId"), self.param("BudgetName"))
        chunk, token = self._page([n.details for n in budget.notifications])
        return self.shaped({"Notifications": chunk, "NextToken": token})

    def describe_subscribers_for_notification(self) -> ActionResult:
        notification = self._notification(self.param("Notification"))
        chunk, token = self._page(list(notification.subscribers))
        return self.shaped({"Subscribers": chunk, "NextToken": token})

    def create_subscriber(self) -> ActionResult:
        notification = self._notification(self.param("Notification"))
        subscriber = self.param("Subscriber")
        if subscriber in notification.subscribers:
            raise budgets_duplicate(f"Error creating subscriber: {subscriber['Address']} - the subscriber already "
                                    "exists.")
        notification.subscribers = [*notification.subscribers, subscriber]
        return EmptyResult()

    def delete_subscriber(self) -> ActionResult:
        notification = self._notification(self.param("Notification"))
        subscriber = self.param("Subscriber")
        if subscriber not in notification.subscribers:
            raise budgets_not_found(f"Unable to delete subscriber: {subscriber['Address']} - the subscriber doesn't "
                                    "exist.")
        notification.subscribers = [s for s in notification.subscribers if s != subscriber]
        return EmptyResult()

    def update_subscriber(self) -> ActionResult:
        notification = self._notification(self.param("Notification"))
        old, new = self.param("OldSubscriber"), self.param("NewSubscriber")
        if old not in notification.subscribers:
            raise budgets_not_found(f"Unable to update subscriber: {old['Address']} - the subscriber doesn't exist.")
        notification.subscribers = [new if s == old else s for s in notification.subscribers]
        return EmptyResult()

    def update_notification(self) -> ActionResult:
        notification = self._notification(self.param("OldNotification"))
        notification.details = dict(self.param("NewNotification"))
        return EmptyResult()

    # Helpers ---------------------------------------------------------------------------------
    def _budget(self, account_id: str, name: str) -> Budget:
        backend: BudgetsBackend = self.backend
        budget = backend.budgets[account_id].get(name)
        if budget is None:
            raise budgets_not_found(f"Unable to get budget: {name} - the budget doesn't exist.")
        return budget

    def _notification(self, wanted: dict[str, Any]) -> Any:
        budget = self._budget(self.param("AccountId"), self.param("BudgetName"))
        found = next((n for n in budget.notifications if _same_notification(n.details, wanted)), None)
        if found is None:
            raise budgets_not_found(f"Unable to find notification {wanted} for budget {self.param('BudgetName')}.")
        return found

    def _existing_arn(self) -> str:
        arn = self.param("ResourceARN")
        match = BUDGET_ARN.fullmatch(arn)
        if match is None:
            raise budgets_invalid(f"The ResourceARN {arn} is not a budget ARN.")
        self._budget(match["account"], match["name"])
        return str(arn)

    def _arn(self, account_id: str, name: str) -> str:
        return f"arn:{self.partition}:budgets::{account_id}:budget/{name}"

    def _page(self, items: list[Any]) -> tuple[list[Any], str | None]:
        return page(items, max_results=self.param("MaxResults"), next_token=self.param("NextToken"),
                    invalid=budgets_invalid_token())


def _tag_map(tags: list[dict[str, str]]) -> dict[str, str]:
    return {tag["Key"]: tag["Value"] for tag in tags}


def _same_notification(stored: dict[str, Any], wanted: dict[str, Any]) -> bool:
    def key(n: dict[str, Any]) -> tuple[Any, ...]:
        return (n.get("NotificationType"), n.get("ComparisonOperator"), float(n.get("Threshold", 0)),
                n.get("ThresholdType", "PERCENTAGE"))

    return key(stored) == key(wanted)


def _epoch(value: Any) -> float:
    """Timestamps in the parsed request become moto's epoch seconds (what DescribeBudget returns)."""
    return float(unix_time(value))
