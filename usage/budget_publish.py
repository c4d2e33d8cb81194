"""Budget alerts out (`usage.budget_alerts` decides them): each published to its account's budget
topic with SNS `Publish`, and recorded as sent in `<state_dir>/usage/budget-alerts.json` right after
its publish succeeded (SEMANTICS.md C12).

The record is rewritten whole after each alert (a temporary file, then a rename: a reader sees the
old record or the new, never half of one), so a rerun sends nothing already recorded and a failure
in the middle loses none of the alerts sent before it. A crash between a publish and its record
sends that one alert again on the next run: at least once, never lost. Runs on one state directory
take turns (`SentAlerts.locked`), so two overlapping runs never send one alert twice.

Errors are typed (`engines.outcomes`): throttling that outlived the SDK's retries, a 5xx or an
endpoint that cannot be reached is a `TemporaryError`; an unknown topic, access denied or any
other refusal a `PermanentError`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from engines.file_lock import file_lock
from engines.outcomes import Failure, HypergovError, PermanentError, TemporaryError, classify
from usage.budget_alerts import AlertKey, BudgetAlert

LEDGER_FILE: Final = "budget-alerts.json"
LEDGER_VERSION: Final = 1
_NOT_FOUND: Final = frozenset({"NotFound", "NotFoundException"})  # SNS: "the requested resource does not exist"

ClientFor = Callable[[str, str], Any]
"""(account id, region) -> an SNS client acting in that account."""


def ledger_path(state_dir: Path) -> Path:
    return Path(state_dir) / "usage" / LEDGER_FILE


@dataclass(frozen=True)
class SentAlert:
    alert: BudgetAlert
    message_id: str


@dataclass(frozen=True)
class FailedAlert:
    alert: BudgetAlert
    failure: Failure


@dataclass(frozen=True)
class Published:
    """What a publishing run did: the alerts sent (and recorded), and those that failed (not
    recorded: the next run sends them)."""

    sent: tuple[SentAlert, ...]
    failed: tuple[FailedAlert, ...]


class SentAlerts:
    """The record of the alerts sent: `{"version": 1, "sent": [{month, team, account, percent,
    message_id, sent_at}, ...]}`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the record for a whole read-decide-publish run (waits for a run holding it)."""
        with file_lock(self.path.with_name(f".{self.path.name}.lock")):
            yield

    def sent_keys(self) -> frozenset[AlertKey]:
        return frozenset((e["month"], e["team"], e["account"], int(e["percent"])) for e in self._entries())

    def record(self, sent: SentAlert, *, at: datetime) -> None:
        month, team, account, percent = sent.alert.key
        entry = {"month": month, "team": team, "account": account, "percent": percent,
                 "message_id": sent.message_id, "sent_at": at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        _write_atomically(self.path, {"version": LEDGER_VERSION, "sent": [*self._entries(), entry]})

    def _entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text())
            entries: list[dict[str, Any]] = data["sent"]
            for e in entries:
                if not (isinstance(e["month"], str) and isinstance(e["team"], str) and isinstance(e["account"], str)
                        and isinstance(e["percent"], int)):
                    raise TypeError(f"entry {e!r}")
        except (ValueError, KeyError, TypeError) as exc:
            raise PermanentError(f"{self.path} is not a record of budget alerts ({type(exc).__name__}: {exc}); "
                                 "repair it, or remove it to send this month's alerts again") from exc
        return entries


def publish_alert(client: Any, alert: BudgetAlert) -> str:
    """Publish `alert` to its topic; its message id. Raises TemporaryError or PermanentError."""
    try:
        answer = client.publish(TopicArn=alert.topic_arn, Subject=alert.subject,
                                Message=json.dumps(alert.body(), sort_keys=True))
    except (BotoCoreError, ClientError) as exc:  # an unreachable endpoint is a BotoCoreError too
        raise _typed(alert, exc) from exc
    return str(answer["MessageId"])


def publish_all(alerts: Iterable[BudgetAlert], client_for: ClientFor, ledger: SentAlerts, *,
                clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Published:
    """Publish every alert (one failing does not hold back the others: each is its own team's
    news), recording each as sent as soon as it is."""
    sent: list[SentAlert] = []
    failed: list[FailedAlert] = []
    for alert in alerts:
        try:
            client = client_for(alert.account, topic_region(alert.topic_arn))
            done = SentAlert(alert, publish_alert(client, alert))
        except HypergovError as exc:
            failed.append(FailedAlert(alert, exc.failure))
            continue
        except (BotoCoreError, ClientError) as exc:  # making the client: assuming the account's role
            failed.append(FailedAlert(alert, _typed(alert, exc).failure))
            continue
        ledger.record(done, at=clock())
        sent.append(done)
    return Published(tuple(sent), tuple(failed))


def topic_region(topic_arn: str) -> str:
    """arn:<partition>:sns:<region>:<account>:<name> -> region."""
    parts = topic_arn.split(":")
    if len(parts) != 6 or parts[2] != "sns":
        raise ValueError(f"'{topic_arn}' is not an SNS topic ARN")
    return parts[3]


def _typed(alert: BudgetAlert, exc: BaseException) -> HypergovError:
    """The failure as a typed error naming the alert (team, account, threshold) and the topic."""
    where = f"budget alert {alert.percent}% of team {alert.team} in account {alert.account} ({alert.topic_arn})"
    code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
    if code in _NOT_FOUND:
        error: HypergovError = PermanentError(f"{where}: no such topic; the org stack declares it "
                                              "(hypergov apply --stack org)")
        error.reason = "unknown-topic"
        return error
    failure = classify(exc)
    error = (TemporaryError if failure.temporary else PermanentError)(f"{where}: {failure.message}")
    error.reason, error.retry_after_s = failure.reason, failure.retry_after_s
    return error


def _write_atomically(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w") as handle:
        handle.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())  # on disk before the rename makes it the record
    os.replace(temporary, path)
