"""Which budget alerts a month's chargeback makes due (SEMANTICS.md C8-C13), on hand-computed
figures; none is copied from what the code returns.

Every charge here is priced at 40.00 per instance-hour of an 8-GPU type: 40.00 / 8 = 5.00 per
GPU-hour (C1), so a team charged h GPU-hours owes 5 h.

- Team `alpha`, budget 10,000 USD, alerts at 50/80/100 %, all in one account: 1,650 GPU-hours
  (1,200 own, 450 idle guarantee) cost 1,650 x 5 = 8,250.00, 82.5 % of 10,000: the 50 % alert
  (5,000) and the 80 % one (8,000) are due, not the 100 % one (10,000).
- The example tree's nlp (config/): 400,000 USD, alerts at 80/100 %, quota on gpu-west (ml-prod,
  12 ml.p5.48xlarge = 96 GPUs) and trn-east (ml-research, 8 ml.trn1.32xlarge = 128 Neuron
  devices). components/project.py splits the budget by guaranteed accelerators: ml-prod
  400,000 x 96 / 224 = 171,428.571... -> 171428.57, ml-research 400,000 x 128 / 224 =
  228,571.428... -> 228571.43.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from stacks.graph import capture_graph
from tests.example_tree import example_tree
from usage.adapter import budgets_for_tree
from usage.budget_alerts import (
    AccountBudget,
    AlertsDue,
    BudgetAlert,
    BudgetAlertError,
    NotComparable,
    ProjectBudget,
    TreeBudgets,
    UnbudgetedCost,
    alerts_due,
    reached,
)
from usage.chargeback import Chargeback, Money, chargeback
from usage.prices import InstanceRate, PoolPrices, unit_price
from usage.resources import ResourceKind
from usage.summary import PoolUsage, TeamUsage

GPU = ResourceKind.GPU
P5, P4D = "ml.p5.48xlarge", "ml.p4d.24xlarge"
PROD, RESEARCH = "111122223333", "444455556666"
TOPIC = "arn:aws:sns:us-west-2:{}:acme-hypergov-budget-alerts"
MONTH = "2026-03"
TYPES = {"west": P5, "gpu-west": P5, "trn-east": P4D, "east": P4D}


def usd(text: str) -> Money:
    return Money(Decimal(text), "USD")


def charges(hours: dict[tuple[str, str], tuple[float, float]], currency: str = "USD") -> Chargeback:
    """(team, cluster) -> (own, idle guarantee) GPU-hours, at 5.00 per GPU-hour everywhere."""
    clusters = sorted({cluster for _, cluster in hours})
    keys = [(cluster, TYPES[cluster], GPU) for cluster in clusters]
    rate = InstanceRate(Decimal("40.00"), "on-demand")
    prices = PoolPrices(currency, {key: unit_price(key, rate, currency=currency, accelerators=8, vcpus=96)
                                   for key in keys})
    teams = [TeamUsage(team, cluster, TYPES[cluster], GPU, own, own, 0.0, 0.0, idle, 0.0)
             for (team, cluster), (own, idle) in sorted(hours.items())]
    pools = [PoolUsage(cluster, TYPES[cluster], GPU, 100_000.0,
                       sum(o + i for (_, c), (o, i) in hours.items() if c == cluster),
                       sum(o for (_, c), (o, _i) in hours.items() if c == cluster), 0.0, 8928, 0)
             for cluster in clusters]
    return chargeback(teams, pools, prices)


def alpha_budget(monthly: str = "10000", percents: tuple[int, ...] = (50, 80, 100)) -> TreeBudgets:
    part = AccountBudget(PROD, Decimal(monthly), TOPIC.format(PROD))
    return TreeBudgets((ProjectBudget("alpha", Decimal(monthly), percents, (part,)),), {"west": PROD, "east": RESEARCH})


def due(result: AlertsDue | NotComparable) -> AlertsDue:
    assert isinstance(result, AlertsDue), result
    return result


def test_the_thresholds_reached_are_due_and_the_others_not() -> None:
    """8,250.00 of 10,000: 50 % (5,000) and 80 % (8,000) reached, 100 % (10,000) not."""
    result = due(alerts_due(charges({("alpha", "west"): (1200, 450)}), alpha_budget(), month=MONTH))

    assert [a.percent for a in result.alerts] == [50, 80]
    fifty = result.alerts[0]
    assert (fifty.team, fifty.account, fifty.month, fifty.topic_arn) == ("alpha", PROD, MONTH, TOPIC.format(PROD))
    assert (fifty.budget, fifty.cost, fifty.key) == (usd("10000.00"), usd("8250.00"), (MONTH, "alpha", PROD, 50))
    assert fifty.message == ("Team alpha's usage chargeback for 2026-03 is 8250.00 USD, 82.5% of its monthly budget "
                             "of 10000.00 USD: it reached the 50% alert.")
    assert fifty.body() == {"type": "hypergov.usage.budget", "team": "alpha", "account": PROD, "month": MONTH,
                            "percent": 50, "budget": "10000.00", "cost": "8250.00", "currency": "USD",
                            "message": fifty.message}
    assert fifty.subject == "hypergov budget alert: team alpha reached 50% in 2026-03"
    assert (result.already_sent, result.unbudgeted) == ((), ())


def test_what_was_sent_this_month_is_not_sent_again_but_other_months_are() -> None:
    sent = {(MONTH, "alpha", PROD, 50), ("2026-02", "alpha", PROD, 80)}
    result = due(alerts_due(charges({("alpha", "west"): (1200, 450)}), alpha_budget(), month=MONTH, sent=sent))

    assert [a.key for a in result.alerts] == [(MONTH, "alpha", PROD, 80)]
    assert result.already_sent == ((MONTH, "alpha", PROD, 50),)


def test_a_threshold_is_reached_at_exactly_its_amount_and_a_cent_below_is_not() -> None:
    """1,600 GPU-hours = 8,000.00 = 80 % of 10,000 exactly: due. 7,999.99 < 8,000: not."""
    exactly = due(alerts_due(charges({("alpha", "west"): (1600, 0)}), alpha_budget(), month=MONTH))
    assert [a.percent for a in exactly.alerts] == [50, 80]
    assert reached(Decimal("8000.00"), Decimal("10000"), 80)
    assert not reached(Decimal("7999.99"), Decimal("10000"), 80)


def test_nothing_charged_reaches_nothing_even_against_a_zero_budget() -> None:
    assert not reached(Decimal("0.00"), Decimal("0"), 50)
    assert reached(Decimal("0.01"), Decimal("0"), 100)  # spending on a zero budget passes every threshold
    result = due(alerts_due(charges({("beta", "west"): (10, 0)}), alpha_budget(), month=MONTH))
    assert result.alerts == ()  # alpha has no charge; beta has no budget


def test_budgets_are_usd_and_another_currency_is_refused_never_converted() -> None:
    result = alerts_due(charges({("alpha", "west"): (1200, 450)}, currency="EUR"), alpha_budget(), month=MONTH)

    assert isinstance(result, NotComparable)
    assert (result.currency, result.month) == ("EUR", MONTH)
    assert "EUR" in result.message and "USD" in result.message and "converts no currency" in result.message
    # no budget at all: nothing to compare, so no refusal
    assert alerts_due(charges({("alpha", "west"): (1, 0)}, currency="EUR"), TreeBudgets((), {}),
                      month=MONTH) == AlertsDue(MONTH, ())


def test_a_team_in_two_accounts_is_compared_per_account_as_its_aws_budgets_are() -> None:
    """nlp's charge on gpu-west (ml-prod): 28,000 GPU-hours x 5 = 140,000.00, 81.67 % of ml-prod's
    171,428.57: the 80 % alert is due there. On trn-east (ml-research): 20,000 x 5 = 100,000.00,
    43.75 % of 228,571.43: nothing. (Its 240,000 in all are 60 % of 400,000: compared with the
    whole budget, nothing would be due.)"""
    budgets = budgets_for_tree(example_tree())
    result = due(alerts_due(charges({("nlp", "gpu-west"): (20_000, 8_000), ("nlp", "trn-east"): (20_000, 0)}),
                            budgets, month=MONTH))

    (alert,) = result.alerts
    assert (alert.team, alert.account, alert.percent, alert.topic_arn) == ("nlp", PROD, 80, TOPIC.format(PROD))
    assert (alert.budget, alert.cost, alert.monthly_budget) == (usd("171428.57"), usd("140000.00"),
                                                                 usd("400000.00"))
    assert alert.message == ("Team nlp's usage chargeback for 2026-03 in this account is 140000.00 USD, 81.7% of its "
                             "budget here of 171428.57 USD (its share of 400000.00 USD): it reached the 80% alert.")


def test_the_split_and_the_topics_are_those_of_the_declared_aws_budgets() -> None:
    """The project stack's declared budgets (captured from components/project.py), one per account:
    the same limit, topic and thresholds as the alerts use."""
    nlp = next(p for p in budgets_for_tree(example_tree()).projects if p.team == "nlp")
    declared = capture_graph(example_tree(), "project-nlp").of_type("aws:budgets/budget:Budget")

    assert {(b.inputs["accountId"], b.inputs["limitAmount"]) for b in declared} == {
        (PROD, "171428.57"), (RESEARCH, "228571.43")}
    assert {(p.account, str(p.limit), p.topic_arn) for p in nlp.accounts} == {
        (b.inputs["accountId"], b.inputs["limitAmount"], *b.inputs["notifications"][0]["subscriberSnsTopicArns"])
        for b in declared}
    assert {n["threshold"] for b in declared for n in b.inputs["notifications"]} == set(nlp.alert_at_percent)


def test_a_charge_in_an_account_without_the_projects_budget_is_listed_not_dropped() -> None:
    """alpha's budget is in ml-prod only; its 10 GPU-hours on east (ml-research) cost 50.00 there."""
    result = due(alerts_due(charges({("alpha", "west"): (1, 0), ("alpha", "east"): (10, 0)}), alpha_budget(),
                            month=MONTH))
    assert result.unbudgeted == (UnbudgetedCost("alpha", RESEARCH, usd("50.00")),)


def test_a_cluster_without_an_account_is_an_error() -> None:
    budgets = TreeBudgets(alpha_budget().projects, {})
    with pytest.raises(BudgetAlertError, match="cluster west"):
        alerts_due(charges({("alpha", "west"): (1, 0)}), budgets, month=MONTH)


def test_the_message_names_no_account_topic_or_tag() -> None:
    alert = BudgetAlert("nlp", PROD, MONTH, 80, usd("171428.57"), usd("140000.00"), TOPIC.format(PROD),
                        usd("400000.00"), shared=True)
    assert PROD not in alert.message and "arn:" not in alert.message and "CC-" not in alert.message
    assert PROD not in alert.subject and len(alert.subject) <= 100
