"""Publishing budget alerts (SEMANTICS.md C12): each recorded as sent right after its publish, so a
failure in the middle loses none of the alerts before it and a rerun sends none twice; errors
typed temporary (throttling, an endpoint that cannot be reached) or permanent (an unknown topic).
A stand-in SNS client here; the real SNS of the embedded endpoint in test_budget_alerts_cli.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from engines.outcomes import HypergovError, PermanentError, TemporaryError
from usage.budget_alerts import BudgetAlert
from usage.budget_publish import SentAlerts, ledger_path, publish_alert, publish_all, topic_region
from usage.chargeback import Money

PROD = "111122223333"
TOPIC = f"arn:aws:sns:us-west-2:{PROD}:acme-hypergov-budget-alerts"
AT = datetime(2026, 3, 20, 8, 0, tzinfo=UTC)


def alert(team: str, percent: int) -> BudgetAlert:
    budget = Money(Decimal("10000.00"), "USD")
    return BudgetAlert(team, PROD, "2026-03", percent, budget, Money(Decimal("8250.00"), "USD"), TOPIC, budget)


def client_error(code: str, status: int) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}},
                       "Publish")


class FakeSns:
    """Answers Publish with a message id, or raises what `failing` gives for a team."""

    def __init__(self, failing: dict[str, Exception] | None = None) -> None:
        self.failing = failing or {}
        self.published: list[dict[str, Any]] = []

    def publish(self, **request: Any) -> dict[str, str]:
        team = json.loads(request["Message"])["team"]
        if team in self.failing:
            raise self.failing[team]
        self.published.append(request)
        return {"MessageId": f"m-{len(self.published)}"}


def test_the_message_is_the_alerts_subject_and_json_body() -> None:
    sns = FakeSns()
    assert publish_alert(sns, alert("alpha", 80)) == "m-1"
    (request,) = sns.published
    assert request["TopicArn"] == TOPIC
    assert request["Subject"] == "hypergov budget alert: team alpha reached 80% in 2026-03"
    body = json.loads(request["Message"])
    assert {k: body[k] for k in ("type", "team", "account", "month", "percent", "budget", "cost", "currency")} == {
        "type": "hypergov.usage.budget", "team": "alpha", "account": PROD, "month": "2026-03", "percent": 80,
        "budget": "10000.00", "cost": "8250.00", "currency": "USD"}


@pytest.mark.parametrize(("error", "typed", "reason"), [
    (client_error("Throttling", 400), TemporaryError, "throttled"),
    (client_error("InternalError", 500), TemporaryError, "server-error"),
    (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), TemporaryError, "connection"),
    (client_error("NotFound", 404), PermanentError, "unknown-topic"),
    (client_error("AuthorizationError", 403), PermanentError, "access-denied"),
])
def test_errors_are_typed_temporary_or_permanent(error: Exception, typed: type[HypergovError], reason: str) -> None:
    with pytest.raises(typed) as raised:
        publish_alert(FakeSns({"alpha": error}), alert("alpha", 80))
    assert raised.value.failure.reason == reason
    assert "team alpha" in str(raised.value) and TOPIC in str(raised.value)


def test_a_failure_in_the_middle_loses_nothing_and_a_rerun_sends_nothing_twice(tmp_path: Path) -> None:
    ledger = SentAlerts(ledger_path(tmp_path))
    alerts = [alert("alpha", 80), alert("beta", 80), alert("gamma", 80)]
    first = publish_all(alerts, lambda *_: FakeSns({"beta": client_error("Throttling", 400)}), ledger, clock=lambda: AT)

    assert [s.alert.team for s in first.sent] == ["alpha", "gamma"]
    assert [(f.alert.team, f.failure.kind) for f in first.failed] == [("beta", "temporary")]
    assert ledger.sent_keys() == {("2026-03", "alpha", PROD, 80), ("2026-03", "gamma", PROD, 80)}
    recorded = json.loads(ledger.path.read_text())
    assert recorded["sent"][0] == {"month": "2026-03", "team": "alpha", "account": PROD, "percent": 80,
                                   "message_id": "m-1", "sent_at": "2026-03-20T08:00:00Z"}
    assert [p.name for p in ledger.path.parent.iterdir()] == ["budget-alerts.json"]  # no temporary file left

    sns = FakeSns()
    unsent = [a for a in alerts if a.key not in ledger.sent_keys()]
    second = publish_all(unsent, lambda *_: sns, ledger, clock=lambda: AT)
    assert [s.alert.team for s in second.sent] == ["beta"] and len(sns.published) == 1
    assert len(ledger.sent_keys()) == 3


def test_the_client_is_asked_for_the_topics_account_and_region(tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    def client_for(account: str, region: str) -> FakeSns:
        asked.append((account, region))
        return FakeSns()

    publish_all([alert("alpha", 80)], client_for, SentAlerts(ledger_path(tmp_path)))
    assert asked == [(PROD, "us-west-2")] and topic_region(TOPIC) == "us-west-2"


def test_an_unreadable_record_is_a_permanent_error_naming_the_file(tmp_path: Path) -> None:
    ledger = SentAlerts(ledger_path(tmp_path))
    ledger.path.parent.mkdir(parents=True)
    ledger.path.write_text('{"sent": [{"month": "2026-03"}]}')
    with pytest.raises(PermanentError, match=r"budget-alerts\.json is not a record of budget alerts"):
        ledger.sent_keys()
