"""Live drift of the projects' monthly AWS Budgets, per account.

Read (`units`, one per account of the org): DescribeBudgets (paginated, 100 a page; it carries
each budget's limit, time unit, type and cost filters) and DescribeBudgetNotificationsForAccount
(paginated, 100 a page: every budget's notifications), not DescribeNotificationsForBudget once per
budget. Subscribers are not read: only DescribeSubscribersForNotification has them, one call per
notification (two or three per budget, the calls of the scan tripled), and hypergov subscribes the
org's budget topic to every notification.
Compared (`compare`, pure): what the declaration sets, in the API's own terms: the limit as a
decimal number (AWS may answer "100.0" for "100", which is why the Terraform provider suppresses
such diffs), cost filters as a map of value sets (Pulumi declares a list of {name, values}), the
notifications as a set. Unmanaged: a budget named as hypergov names them (`<org>-<team>-monthly`)
that no stack declares in that account.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from engines.desired import DesiredObject, address_of, of_type
from engines.live.items import AttributeDrift, DriftItem, DriftKind, attribute, iso_time
from engines.live.runner import CallCounter, Pruner, ScanContext, ScanUnit
from hypergov import naming

BUDGET = "aws:budgets/budget:Budget"
PAGE_SIZE = 100  # DescribeBudgets' default page, asked of both lists (MaxResults allows up to 1000)


@dataclass(frozen=True)
class AccountBudgets:
    account: str
    region: str
    org: str  # the org's name: hypergov's budgets are named <org>-<team>-monthly
    declared: Mapping[str, DesiredObject]  # budget name -> its declaration
    stacks: frozenset[str]


def number(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def declared_filters(obj: DesiredObject) -> dict[str, list[str]]:
    return {str(f["name"]): sorted(f.get("values", [])) for f in obj.input("costFilters") or []}


def _notification_key(n: Mapping[str, Any]) -> tuple[Any, ...]:
    threshold = number(n.get("threshold"))  # normalised: 80 and 80.0 are one key
    return (n.get("notificationType"), n.get("comparisonOperator"), threshold.normalize() if threshold else None,
            n.get("thresholdType") or "PERCENTAGE")


def _as_declared(n: Mapping[str, Any]) -> dict[str, Any]:
    """An API Notification in the declaration's spelling (subscribers apart)."""
    return {"comparisonOperator": n.get("ComparisonOperator"), "notificationType": n.get("NotificationType"),
            "threshold": n.get("Threshold"), "thresholdType": n.get("ThresholdType", "PERCENTAGE")}


def _shown(notifications: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: n.get(k) for k in ("comparisonOperator", "notificationType", "threshold", "thresholdType")}
                   for n in notifications), key=lambda n: str(_notification_key(n)))


def budget_drift(obj: DesiredObject, live: Mapping[str, Any],
                 notifications: Sequence[Mapping[str, Any]] | None) -> tuple[AttributeDrift, ...]:
    limit = live.get("BudgetLimit") or {}
    drift = []
    if obj.input("limitAmount") is not None and number(obj.input("limitAmount")) != number(limit.get("Amount")):
        drift.append(attribute("limitAmount", obj.input("limitAmount"), limit.get("Amount")))
    for key, have in (("limitUnit", limit.get("Unit")), ("timeUnit", live.get("TimeUnit")),
                      ("budgetType", live.get("BudgetType"))):
        if obj.input(key) is not None and obj.input(key) != have:
            drift.append(attribute(key, obj.input(key), have))
    if obj.input("costFilters") is not None:
        have_filters = {str(k): sorted(v) for k, v in (live.get("CostFilters") or {}).items()}
        if declared_filters(obj) != have_filters:
            drift.append(attribute("costFilters", [{"name": k, "values": v} for k, v in declared_filters(obj).items()],
                                   [{"name": k, "values": v} for k, v in sorted(have_filters.items())]))
    if obj.input("notifications") is not None and notifications is not None:
        want, have = list(obj.input("notifications")), [_as_declared(n) for n in notifications]
        if sorted(str(_notification_key(n)) for n in want) != sorted(str(_notification_key(n)) for n in have):
            drift.append(attribute("notifications", _shown(want), _shown(have)))
    return tuple(drift)


def compare(account: AccountBudgets, live: Sequence[Mapping[str, Any]],
            notifications: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[DriftItem]:
    """`live`: DescribeBudgets' Budget objects; `notifications`: budget name -> its notifications."""
    present = {str(b["BudgetName"]): b for b in live}
    items = []
    for name, obj in sorted(account.declared.items()):
        found = present.get(name)
        if found is None:
            items.append(_item(account, obj.stack, obj.address, "missing",
                               f"hypergov apply --stack {obj.stack} recreates it"))
        elif changed := budget_drift(obj, found, notifications.get(name)):
            items.append(_item(account, obj.stack, obj.address, "changed",
                               f"hypergov apply --stack {obj.stack} restores it", attributes=changed,
                               changed_at=iso_time(found.get("LastUpdatedTime"))))
    owned = re.compile(rf"{re.escape(account.org)}-(?P<team>.+)-monthly")
    for name, found in sorted(present.items()):
        match = owned.fullmatch(name)
        if match is None or name in account.declared:
            continue
        stack = naming.project_stack(match["team"])
        stack = stack if stack in account.stacks else naming.org_stack()
        where = f"projects/{match['team']}.yaml" if stack != naming.org_stack() else "the tree (no such project)"
        limit = found.get("BudgetLimit") or {}
        items.append(_item(account, stack, address_of(BUDGET, name), "unmanaged",
                           f"delete it (hypergov drift --prune-unmanaged) or declare its budget in {where}",
                           attributes=(attribute("name", None, name),
                                       attribute("limitAmount", None, limit.get("Amount")),
                                       attribute("timeUnit", None, found.get("TimeUnit"))),
                           changed_at=iso_time(found.get("LastUpdatedTime")),
                           ref={"AccountId": account.account, "BudgetName": name}))
    return items


def _item(account: AccountBudgets, stack: str, address: str, kind: DriftKind, fix: str, *,
          attributes: tuple[AttributeDrift, ...] = (), changed_at: str | None = None,
          ref: Mapping[str, str] | None = None) -> DriftItem:
    return DriftItem(kind=kind, stack=stack, address=address, type=BUDGET, account=account.account,
                     region=account.region, fix=fix, attributes=attributes, changed_at=changed_at, ref=ref or {})


# --- I/O -------------------------------------------------------------------------------------------

def scan_account(client: Any, account: AccountBudgets, calls: CallCounter) -> list[DriftItem]:
    live = [b for page in calls.pages(client, "describe_budgets", AccountId=account.account,
                                      PaginationConfig={"PageSize": PAGE_SIZE}) for b in page.get("Budgets", [])]
    notifications: dict[str, Sequence[Mapping[str, Any]]] = {str(b["BudgetName"]): [] for b in live}
    if any(obj.input("notifications") is not None for obj in account.declared.values()):
        for page in calls.pages(client, "describe_budget_notifications_for_account", AccountId=account.account,
                                PaginationConfig={"PageSize": PAGE_SIZE}):
            notifications.update({str(b["BudgetName"]): b.get("Notifications", [])
                                  for b in page.get("BudgetNotificationsForAccount", [])})
    return compare(account, live, notifications)


def accounts_of(context: ScanContext) -> list[AccountBudgets]:
    org = context.tree.org.model if context.tree.org else None
    declared: dict[str, dict[str, DesiredObject]] = {a.id: {} for a in (org.accounts if org else [])}
    regions: dict[str, str] = {}
    for obj in of_type(context.desired, BUDGET):
        account = str(obj.input("accountId") or context.account_of(obj) or "")
        declared.setdefault(account, {})[str(obj.input("name"))] = obj
        regions.setdefault(account, obj.region)
    home = org.home_region if org else "us-east-1"
    stacks = frozenset(s.name for s in context.specs)
    return [AccountBudgets(account=a, region=regions.get(a, home), org=org.name if org else "", declared=d,
                           stacks=stacks) for a, d in sorted(declared.items())]


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit per account of the org (unmanaged budgets may be in any)."""
    return [ScanUnit(service="budgets", account=a.account, region=a.region, stack=naming.org_stack(),
                     what=f"Budgets of account {a.account}", read=_reader(a)) for a in accounts_of(context)]


def _reader(account: AccountBudgets) -> Any:
    return lambda client, calls: scan_account(client, account, calls)


def _delete(client: Any, item: DriftItem, calls: CallCounter) -> None:
    calls(client, "delete_budget", AccountId=item.ref["AccountId"], BudgetName=item.ref["BudgetName"])


PRUNERS = {BUDGET: Pruner(service="budgets", delete=_delete)}
