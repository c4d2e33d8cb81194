"""`hypergov usage budgets` through click, against the embedded endpoint's
real SNS: the budget topic created as the org stack names it, an SQS queue subscribed to it (SNS
delivers each message to the queue), and a warehouse filled with `Warehouse.write_month` from
`usage.accounting.account` over the example tree with speech's budget lowered to 2,000 USD.

The month: gpu-west collected all of 2026-03-02 (24 hours), nothing else. speech is guaranteed
8 ml.g5.12xlarge = 32 GPUs there, at 5.67 per instance-hour / 4 GPUs = 1.4175 per GPU-hour (the
example's pricing). It ran 16 GPUs for 2 hours (32 GPU-hours, own); the rest of its guarantee,
32 x 24 - 32 = 736 GPU-hours, sat idle. Its charge: (32 + 736) x 1.4175 = 768 x 1.4175 = 1,088.64
USD, 54.4 % of 2,000 (one account, ml-prod): the 50 % alert (1,000) is due, not 80 % (1,600).
The other teams' charges stay under 10 % of their budgets (vision: 96 GPUs x 24 h x 6.88 =
15,851.52 of 250,000), so speech's is the one alert.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAws
from hypergov.validate import load_valid_tree
from tests.example_tree import CONFIG
from tests.integration.common import CREDENTIALS, PROD, REGION
from usage.accounting import account
from usage.adapter import cluster_pools
from usage.resources import GPU_UNITS, ResourceKind
from usage.spans import Span
from usage.warehouse import Warehouse, warehouse_dir

DAY = int(datetime(2026, 3, 2, tzinfo=UTC).timestamp())
HOUR = 3600
TOPIC = "acme-hypergov-budget-alerts"
TOPIC_ARN = f"arn:aws:sns:{REGION}:{PROD}:{TOPIC}"


@pytest.fixture(scope="module")
def aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws() as endpoint:
        yield endpoint


@pytest.fixture
def settings_file(aws: EmbeddedAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example tree (speech's budget 2,000 USD), a warehouse holding gpu-west's 2026-03-02,
    hypergov's settings for the endpoint, and the credentials it takes."""
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    shutil.copytree(CONFIG, tmp_path / "config")
    speech = tmp_path / "config" / "projects" / "speech.yaml"
    speech.write_text(speech.read_text().replace("monthly_usd: 120000", "monthly_usd: 2000"))
    tree = load_valid_tree(tmp_path / "config")
    spans = [Span("speech", "gpu-west", "ml.g5.12xlarge", ResourceKind.GPU, "training", 16 * GPU_UNITS,
                  DAY + 10 * HOUR, DAY + 12 * HOUR)]
    accounts = account(spans, cluster_pools(tree, "gpu-west"), start=DAY, end=DAY + 24 * HOUR,
                       coverage={"gpu-west": [(DAY, DAY + 24 * HOUR)]})
    Warehouse(warehouse_dir(tmp_path / "state")).write_month("gpu-west", "2026-03", accounts, final=False)
    path = tmp_path / "hypergov.yaml"
    path.write_text(yaml.safe_dump({"config_dir": str(tmp_path / "config"), "state_dir": str(tmp_path / "state"),
                                    "aws": {"endpoint_url": aws.endpoint_url, "max_retries": 1}}))
    return path


@pytest.fixture
def queue(aws: EmbeddedAws) -> Iterator[tuple[Any, str]]:
    """The budget topic of ml-prod (as the org stack names it) with a new SQS queue subscribed."""
    sns, sqs = aws.client("sns", account=PROD, region=REGION), aws.client("sqs", account=PROD, region=REGION)
    arn = sns.create_topic(Name=TOPIC)["TopicArn"]
    url = sqs.create_queue(QueueName="budget-alerts")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    subscription = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn)["SubscriptionArn"]
    yield sqs, url
    sns.unsubscribe(SubscriptionArn=subscription)
    sqs.delete_queue(QueueUrl=url)


def run(settings_file: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["usage", "budgets", "--settings", str(settings_file), "--month", "2026-03", *args])


def received(sqs: Any, url: str) -> list[dict[str, Any]]:
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return [json.loads(m["Body"]) for m in messages]


def test_the_alert_reaches_the_topic_once(settings_file: Path, queue: tuple[Any, str]) -> None:
    sqs, url = queue
    dry = run(settings_file, "--dry-run", "--json")
    assert dry.exit_code == 2, dry.output
    (due,) = json.loads(dry.stdout)["due"]
    assert (due["team"], due["percent"], due["cost"], due["sent"]) == ("speech", 50, "1088.64", False)
    assert received(sqs, url) == [] and not (settings_file.parent / "state" / "usage" / "budget-alerts.json").exists()

    sent = run(settings_file)
    assert sent.exit_code == 2, sent.output
    assert sent.stdout == (f"sent: team speech, account {PROD}, 2026-03: 1088.64 USD reached 50% of 2000.00 USD -> "
                           f"{TOPIC_ARN}\n")
    (notification,) = received(sqs, url)
    assert (notification["TopicArn"], notification["Subject"]) == (
        TOPIC_ARN, "hypergov budget alert: team speech reached 50% in 2026-03")
    body = json.loads(notification["Message"])
    assert body == {"type": "hypergov.usage.budget", "team": "speech", "account": PROD, "month": "2026-03",
                    "percent": 50, "budget": "2000.00", "cost": "1088.64", "currency": "USD",
                    "message": "Team speech's usage chargeback for 2026-03 is 1088.64 USD, 54.4% of its monthly "
                               "budget of 2000.00 USD: it reached the 50% alert."}

    again = run(settings_file)
    assert again.exit_code == 0, again.output
    assert "no budget alert due (1 threshold(s) reached were sent before)" in again.stdout
    assert received(sqs, url) == []


def test_an_unknown_topic_is_a_permanent_error_and_nothing_is_recorded(aws: EmbeddedAws, settings_file: Path) -> None:
    aws.client("sns", account=PROD, region=REGION).delete_topic(TopicArn=TOPIC_ARN)
    result = run(settings_file, "--json")
    assert result.exit_code == 1, result.output
    (failed,) = json.loads(result.stdout)["failed"]
    assert (failed["team"], failed["error"]["kind"], failed["error"]["reason"]) == ("speech", "permanent",
                                                                                   "unknown-topic")
    assert "ERROR team speech" in result.stderr and "no such topic" in result.stderr
    assert not (settings_file.parent / "state" / "usage" / "budget-alerts.json").exists()


def test_throttling_is_a_temporary_error_and_the_next_run_sends(aws: EmbeddedAws, settings_file: Path,
                                                                queue: tuple[Any, str]) -> None:
    aws.inject_fault("sns", "Publish", kind="throttle", times=None)
    try:
        result = run(settings_file)
    finally:
        aws.clear_faults()
    assert result.exit_code == 1 and "temporary error" in result.stderr, result.output
    assert received(*queue) == []
    retried = run(settings_file)
    assert retried.exit_code == 2, retried.output
    assert [json.loads(n["Message"])["percent"] for n in received(*queue)] == [50]


def test_usage_errors_exit_1_not_2(settings_file: Path) -> None:
    result = run(settings_file, "--month", "March")
    assert result.exit_code == 1 and "YYYY-MM" in result.output
