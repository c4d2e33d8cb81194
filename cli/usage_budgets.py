"""`hypergov usage budgets`: per-team budget alerts on the usage chargeback, through the budget
topics the org stack keeps (`usage.budget_alerts` decides, `usage.budget_publish` publishes).
`budgets_cmd` is a command of its own, to be added to the `usage` group (cli/usage.py) as `budgets`;
it also runs on its own (tests, scripts), with the same exit codes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cli.options import check_months, config_option
from cli.output import echo
from cli.plan import cli_errors, load_cli_settings, to_stderr, valid_tree
from engines.settings import Settings

if TYPE_CHECKING:
    from hypergov.model.tree import GovernanceTree
    from usage.budget_alerts import AlertsDue, BudgetAlert, TreeBudgets
    from usage.budget_publish import Published, SentAlerts
    from usage.chargeback import Chargeback

EXIT_NOTHING_DUE = 0
EXIT_ALERTS = 2
EXIT_ERROR = 1

BUDGETS_EXIT = ("Exit status: 0 nothing due (no threshold reached, or every one reached already sent); 2 alerts "
                "sent (with --dry-run: due); 1 any error (usage included; a tree that fails validation or prices "
                "nothing; a pricing currency other than USD; an alert that could not be published, named with "
                "whether the failure is temporary or permanent: the alerts sent before it stay recorded).")


@click.command("budgets", epilog=BUDGETS_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@config_option(from_settings=True)
@click.option("--month", metavar="YYYY-MM", callback=check_months,
              help="The UTC month compared with the budgets (default: the current month, to now).")
@click.option("--dry-run", is_flag=True, help="Print the alerts that are due; publish and record nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the alerts (due, sent, failed, already sent) as JSON.")
@cli_errors
def budgets_cmd(settings_file: Path | None, config_dir: Path | None, month: str | None, dry_run: bool,
                as_json: bool) -> None:
    """Alert each project's budget topic when its team's usage chargeback for the month reaches a
    threshold (`alert_at_percent`) of its budget (`monthly_usd`).

    A shared cluster's instances carry no team's tag, so a team's GPU spend never reaches its AWS
    Budget; the chargeback (from the usage warehouse: run `hypergov usage account` first) knows it.
    The budget is split over the project's accounts as its AWS Budgets are, a charge counts in the
    account of the cluster it ran on, and each alert goes to that account's budget topic as an SNS
    message (JSON, type hypergov.usage.budget). Each threshold alerts once per month: what was sent
    is recorded in <state_dir>/usage/budget-alerts.json. Rules: usage/SEMANTICS.md, "Budget alerts".
    """
    from usage.budget_alerts import NotComparable, alerts_due
    from usage.budget_publish import SentAlerts, ledger_path

    settings = load_cli_settings(settings_file, config_dir)
    tree = valid_tree(settings)
    now = int(time.time())
    month = month or _month_of(now)
    charges = _month_chargeback(settings, tree, month, now)
    budgets = _budgets(tree)
    ledger = SentAlerts(ledger_path(Path(settings.state_dir).resolve()))
    with ledger.locked():  # one run at a time decides and sends: two never send one alert twice
        decision = alerts_due(charges, budgets, month=month, sent=ledger.sent_keys())
        if isinstance(decision, NotComparable):
            raise click.ClickException(decision.message)
        published = None if dry_run or not decision.alerts else _publish(settings, tree, decision, ledger)
    _show(decision, published, dry_run=dry_run, as_json=as_json)
    if published is not None and published.failed:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_ALERTS if decision.alerts else EXIT_NOTHING_DUE)


def _month_of(seconds: int) -> str:
    from usage.warehouse import month_of

    return month_of(seconds)


def _month_chargeback(settings: Settings, tree: GovernanceTree, month: str, now: int) -> Chargeback:
    """The month's chargeback, to now, from what the warehouse holds."""
    from usage.adapter import AdapterError, prices_for_tree
    from usage.chargeback import ChargebackError, chargeback
    from usage.warehouse import Warehouse, month_window, warehouse_dir

    if tree.org is None or tree.org.model.pricing is None:
        raise click.ClickException("org.yaml has no pricing: there is no chargeback to compare with the budgets "
                                   "(README, \"Prices and chargeback\")")
    start, end = month_window(month)
    period = Warehouse(warehouse_dir(Path(settings.state_dir).resolve())).period(start, min(end, now))
    if not period.pools:
        to_stderr(f"the usage warehouse holds nothing for {month} (hypergov usage account fills it): nothing charged")
    try:
        return chargeback(period.teams, period.pools, prices_for_tree(tree))
    except (ChargebackError, AdapterError) as exc:
        raise click.ClickException(str(exc)) from exc


def _budgets(tree: GovernanceTree) -> TreeBudgets:
    from components.arns import ConfigReferenceError
    from usage.adapter import budgets_for_tree

    try:
        return budgets_for_tree(tree)
    except ConfigReferenceError as exc:  # validation refuses this first
        raise click.ClickException(str(exc)) from exc


def _publish(settings: Settings, tree: GovernanceTree, decision: AlertsDue, ledger: SentAlerts) -> Published:
    """Each alert to its topic, with the settings' credentials (a member account's role assumed)."""
    from engines.aws_clients import AwsClients
    from usage.budget_publish import publish_all

    clients = AwsClients(settings=settings.aws, partition=tree.org.model.partition if tree.org else "aws")
    clients.require_credentials()  # none at all: one clear error before any alert
    return publish_all(decision.alerts, lambda account, region: clients.client("sns", region=region, account=account),
                       ledger)


def _show(decision: AlertsDue, published: Published | None, *, dry_run: bool, as_json: bool) -> None:
    failed = published.failed if published is not None else ()
    if as_json:
        sent = {s.alert.key: s.message_id for s in published.sent} if published is not None else {}
        echo(json.dumps({
            "month": decision.month, "dry_run": dry_run,
            "due": [_alert_dict(a, sent.get(a.key), sent=a.key in sent) for a in decision.alerts],
            "failed": [{**_alert_dict(f.alert, None, sent=False), "error": f.failure.as_dict()} for f in failed],
            "already_sent": [dict(zip(("month", "team", "account", "percent"), k, strict=True))
                             for k in decision.already_sent],
            "unbudgeted": [{"team": u.team, "account": u.account, "cost": str(u.cost.amount),
                            "currency": u.cost.currency} for u in decision.unbudgeted]}, indent=2))
    else:
        done = {s.alert.key for s in published.sent} if published is not None else set()
        for alert in decision.alerts:
            if dry_run or alert.key in done:
                echo(f"{'due' if dry_run else 'sent'}: {_line(alert)}")
        if not decision.alerts:
            echo(f"{decision.month}: no budget alert due ({len(decision.already_sent)} threshold(s) reached "
                 "were sent before)")
        for cost in decision.unbudgeted:
            echo(f"note: team {cost.team} is charged {cost.cost} in account {cost.account}, where its project "
                 "has no budget", err=True)
    for failure in failed:
        echo(f"ERROR {_line(failure.alert)}: {failure.failure.kind} error: {failure.failure.message}", err=True)


def _line(alert: BudgetAlert) -> str:
    return (f"team {alert.team}, account {alert.account}, {alert.month}: {alert.cost} reached {alert.percent}% of "
            f"{alert.budget} -> {alert.topic_arn}")


def _alert_dict(alert: BudgetAlert, message_id: str | None, *, sent: bool) -> dict[str, object]:
    return {**alert.body(), "topic_arn": alert.topic_arn, "subject": alert.subject, "sent": sent,
            **({"message_id": message_id} if message_id is not None else {})}
