"""Which budget alerts a month's chargeback makes due: per project with a budget, per account its
budget is split over, per threshold of `alert_at_percent`, once a month. SEMANTICS.md, "Budget
alerts", C8-C13.

AWS Budgets compare a project's budget with the costs AWS bills under its cost-centre tag; the
instances of a shared HyperPod cluster carry no team's tag, so a team's GPU spend there never
reaches its budget. The usage chargeback (`usage.chargeback`) knows that spend: this module compares
it with the same budgets, split over the same accounts and routed to the same topics as the
project's AWS Budgets (`components.project.budget_limits`, `components.arns.budget_topic_arn`, read
for it by `usage.adapter.budgets_for_tree`).

Pure: the chargeback, the budgets and the alerts already sent in, the alerts due out; nothing is
published here (`usage.budget_publish` does that).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Final

from usage.chargeback import Chargeback, Money, TeamCharge

BUDGET_CURRENCY: Final = "USD"
"""The currency of every project budget (`Budget.monthly_usd`, the AWS Budgets' `limit_unit`)."""
MESSAGE_TYPE: Final = "hypergov.usage.budget"

AlertKey = tuple[str, str, str, int]
"""An alert's identity, sent at most once: (month `YYYY-MM`, team, account id, percent)."""


class BudgetAlertError(ValueError):
    """The chargeback and the budgets do not fit together (the message says how)."""


@dataclass(frozen=True)
class AccountBudget:
    """A project's budget in one account: the limit AWS Budgets holds there (USD) and the topic its
    alerts go to."""

    account: str
    limit: Decimal
    topic_arn: str


@dataclass(frozen=True)
class ProjectBudget:
    """A project's monthly budget (USD), its thresholds, and its part in each account."""

    team: str
    monthly_usd: Decimal
    alert_at_percent: tuple[int, ...]
    accounts: tuple[AccountBudget, ...]


@dataclass(frozen=True)
class TreeBudgets:
    """Every project budget of a tree, and the account of every cluster (where a charge lands)."""

    projects: tuple[ProjectBudget, ...]
    cluster_accounts: Mapping[str, str]


@dataclass(frozen=True)
class BudgetAlert:
    """One threshold a team's month-to-date charge reached in one account: `budget` is the
    project's budget there (its whole `monthly_budget` unless `shared` over several accounts)."""

    team: str
    account: str
    month: str
    percent: int
    budget: Money
    cost: Money
    topic_arn: str
    monthly_budget: Money
    shared: bool = False

    @property
    def key(self) -> AlertKey:
        return self.month, self.team, self.account, self.percent

    @property
    def subject(self) -> str:
        """SNS subjects are at most 100 characters (team names are far shorter)."""
        return f"hypergov budget alert: team {self.team} reached {self.percent}% in {self.month}"[:100]

    @property
    def message(self) -> str:
        """For people: the team, the month and the amounts; no account id, ARN or tag value (the
        alert arrives on the account's own topic, and the JSON body names the account)."""
        where = " in this account" if self.shared else ""
        budget = (f"its budget here of {self.budget} (its share of {self.monthly_budget})" if self.shared
                  else f"its monthly budget of {self.budget}")
        share = f"{_percent_of(self.cost.amount, self.budget.amount)}% of " if self.budget.amount > 0 else ""
        return (f"Team {self.team}'s usage chargeback for {self.month}{where} is {self.cost}, {share}{budget}: "
                f"it reached the {self.percent}% alert.")

    def body(self) -> dict[str, object]:
        """The SNS message, as JSON: amounts as decimal strings (never floats), in `currency`."""
        return {"type": MESSAGE_TYPE, "team": self.team, "account": self.account, "month": self.month,
                "percent": self.percent, "budget": str(self.budget.amount), "cost": str(self.cost.amount),
                "currency": self.cost.currency, "message": self.message}


@dataclass(frozen=True)
class UnbudgetedCost:
    """A team's charge in an account where its project has no budget: nothing to compare it with."""

    team: str
    account: str
    cost: Money


@dataclass(frozen=True)
class AlertsDue:
    """The month's decision: alerts to send, thresholds reached but already sent, and charges no
    budget covers."""

    month: str
    alerts: tuple[BudgetAlert, ...]
    already_sent: tuple[AlertKey, ...] = ()
    unbudgeted: tuple[UnbudgetedCost, ...] = ()


@dataclass(frozen=True)
class NotComparable:
    """A refusal: the chargeback's currency is not the budgets' (C13)."""

    month: str
    currency: str

    @property
    def message(self) -> str:
        return (f"the chargeback for {self.month} is in {self.currency}, the projects' budgets are in "
                f"{BUDGET_CURRENCY}: they cannot be compared, and hypergov converts no currency (budget alerts "
                f"need org.yaml's pricing in {BUDGET_CURRENCY})")


def alerts_due(charges: Chargeback, budgets: TreeBudgets, *, month: str,
               sent: Collection[AlertKey] = ()) -> AlertsDue | NotComparable:
    """The alerts `charges` (the month's chargeback, month to date) make due against `budgets`,
    leaving out the keys in `sent` (C8-C13)."""
    if not budgets.projects:
        return AlertsDue(month, ())
    if charges.currency != BUDGET_CURRENCY:
        return NotComparable(month, charges.currency)
    by_team = {charge.team: charge for charge in charges.teams}
    alerts: list[BudgetAlert] = []
    already: list[AlertKey] = []
    unbudgeted: list[UnbudgetedCost] = []
    for project in sorted(budgets.projects, key=lambda p: p.team):
        charge = by_team.get(project.team)
        costs = account_costs(charge, budgets.cluster_accounts) if charge is not None else {}
        limits = {part.account: part for part in project.accounts}
        unbudgeted += [UnbudgetedCost(project.team, acct, _usd(cost)) for acct, cost in sorted(costs.items())
                       if acct not in limits and cost > 0]
        for part in project.accounts:
            for alert in _reached(project, part, costs.get(part.account, Decimal(0)), month):
                if alert.key in sent:
                    already.append(alert.key)
                else:
                    alerts.append(alert)
    return AlertsDue(month, tuple(alerts), tuple(already), tuple(unbudgeted))


def account_costs(charge: TeamCharge, cluster_accounts: Mapping[str, str]) -> dict[str, Decimal]:
    """A team's charge per account, each pool's to the account of its cluster (C9). All in one
    account: the team's total, rounded once from its exact sum (C7); over several, the sum of its
    pool lines there (each within half a minor unit of exact)."""
    lines: dict[str, list[Decimal]] = defaultdict(list)
    for line in charge.pools:
        account = cluster_accounts.get(line.cluster)
        if account is None:
            raise BudgetAlertError(f"team {charge.team} is charged on cluster {line.cluster}, which has no account "
                                   "in the tree: the chargeback and the budgets must come from the same tree")
        lines[account].append(line.total.amount)
    if len(lines) == 1:
        return {next(iter(lines)): charge.total.amount}
    return {account: sum(amounts, Decimal(0)) for account, amounts in sorted(lines.items())}


def reached(cost: Decimal, limit: Decimal, percent: int) -> bool:
    """C10: the cost is at least `percent`% of the limit, exactly (decimals, no float); a zero cost
    reaches nothing, so an unused zero budget is no alert."""
    return cost > 0 and cost * 100 >= limit * percent


def _reached(project: ProjectBudget, part: AccountBudget, cost: Decimal, month: str) -> list[BudgetAlert]:
    shared = len(project.accounts) > 1
    return [BudgetAlert(project.team, part.account, month, percent, _usd(part.limit), _usd(cost), part.topic_arn,
                        _usd(project.monthly_usd), shared)
            for percent in sorted(set(project.alert_at_percent)) if reached(cost, part.limit, percent)]


def _usd(amount: Decimal) -> Money:
    return Money(amount.quantize(Decimal("0.01"), ROUND_HALF_EVEN), BUDGET_CURRENCY)


def _percent_of(cost: Decimal, limit: Decimal) -> Decimal:
    return (cost * 100 / limit).quantize(Decimal("0.1"), ROUND_HALF_EVEN)
