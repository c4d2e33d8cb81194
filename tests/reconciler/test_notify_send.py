"""Notifications sent for real: to a local HTTP receiver standing for a Slack incoming webhook and
a generic JSON webhook (http.server in a thread), and to an SNS topic of the embedded endpoint with
an SQS queue subscribed (SNS delivers each message to it). Each event once, nothing again after a
restart, temporary failures retried and permanent ones not, and the webhook URL (a secret: Slack's
carries its token) in no log line, error or payload."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from embedded_aws import EmbeddedAws
from engines.live.items import DriftItem, LiveScan
from engines.outcomes import Backoff, permanent
from engines.settings import NotificationSettings
from reconciler.notify_send import Notifier
from reconciler.pass_result import PassResult

TOKEN = "T000/B000/XXXXSECRETXXXX"  # the path part of a Slack webhook URL: the secret


class Receiver:
    """Answers each POST with the next status of `statuses` (then 200) and keeps what it got."""

    def __init__(self) -> None:
        self.bodies: list[tuple[str, dict[str, Any]]] = []
        self.statuses: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                length = int(self.headers["Content-Length"])
                receiver.bodies.append((self.path, json.loads(self.rfile.read(length))))
                self.send_response(receiver.statuses.pop(0) if receiver.statuses else 200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.server.shutdown()


def _drift(*addresses: str) -> LiveScan:
    items = tuple(DriftItem("missing", "project-vision", a, "aws_iam_role", "111122223333", "us-west-2", "apply it")
                  for a in addresses)
    return LiveScan(items, (), api_calls=1, seconds=0.1, scanned_at="2026-12-05T00:00:00Z", stacks=("project-vision",))


def _notifier(tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> Notifier:
    monkeypatch.setenv("SLACK_URL", f"{receiver.url}/services/{TOKEN}")
    (tmp_path / "webhook-url").write_text(f"{receiver.url}/hooks/hypergov?token={TOKEN}\n")
    settings = NotificationSettings(sinks=[{"kind": "slack", "url_env": "SLACK_URL"},  # type: ignore[list-item]
                                           {"kind": "webhook", "url_file": tmp_path / "webhook-url"}])
    return Notifier.for_state_dir(settings, tmp_path / "state", sleep=lambda _: None, **kwargs)


def test_each_event_once_to_every_sink_and_nothing_again_after_a_restart(
        tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    notifier = _notifier(tmp_path, receiver, monkeypatch)
    sent = notifier.after_scan(_drift("role-a", "role-b"), branch="main", commit="c" * 40)
    assert [(d.sink, d.failure) for d in sent] == [("slack:$SLACK_URL", None), (f"webhook:{tmp_path / 'webhook-url'}",
                                                                               None)]
    (slack_path, slack), (hook_path, hook) = receiver.bodies
    assert slack_path == f"/services/{TOKEN}" and slack["text"].startswith("*hypergov: 2 new drift item(s) on main")
    assert hook_path.startswith("/hooks/hypergov") and hook["type"] == "hypergov.drift"
    assert hook["lines"] == ["missing aws_iam_role role-a (111122223333 us-west-2, stack project-vision)",
                             "missing aws_iam_role role-b (111122223333 us-west-2, stack project-vision)"]
    restarted = _notifier(tmp_path, receiver, monkeypatch)  # a new process, the same state directory
    assert restarted.after_scan(_drift("role-a", "role-b"), branch="main", commit="c" * 40) == []
    failed = PassResult(head="a" * 40, base=None, status="invalid")
    assert len(restarted.after_pass(failed, branch="main")) == 2
    assert restarted.after_pass(failed, branch="main") == []
    assert len(receiver.bodies) == 4


def test_a_temporary_failure_is_retried_a_permanent_one_is_not_and_the_url_is_never_said(
        tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    notifier = _notifier(tmp_path, receiver, monkeypatch, backoff=lambda: Backoff(base_s=1.0, cap_s=4.0))
    notifier.sleep = waits.append
    receiver.statuses = [503, 429, 200, 404]  # slack: 503, 429, then delivered; the webhook: 404, not retried
    slack, hook = notifier.after_failure(permanent("no such branch", "git"), branch="main")
    assert slack.failure is None and len(waits) == 2
    assert hook.failure is not None and hook.failure.kind == "permanent" and hook.failure.reason == "notify-http"
    assert len(receiver.bodies) == 4
    monkeypatch.setenv("SLACK_URL", f"http://127.0.0.1:9/services/{TOKEN}")  # nothing listens on the discard port
    unreachable, delivered = notifier.after_failure(permanent("x", "other"), branch="main")
    assert delivered.failure is None  # the webhook is still there
    for failure in (hook.failure, unreachable.failure):
        assert failure is not None and TOKEN not in failure.message and "127.0.0.1" not in failure.message
    assert unreachable.failure is not None and unreachable.failure.reason == "notify-connection"
    assert unreachable.failure.kind == "temporary" and len(waits) == 4  # tried 3 times


def test_an_unset_url_is_a_permanent_failure_named_by_its_variable(
        tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    notifier = _notifier(tmp_path, receiver, monkeypatch)
    monkeypatch.delenv("SLACK_URL")
    slack, _ = notifier.after_failure(permanent("x", "git"), branch="main")
    assert slack.failure is not None
    assert slack.failure.message == "slack:$SLACK_URL: the environment variable is not set"


def test_an_sns_topic_gets_the_event_as_json_with_its_type(tmp_path: Path) -> None:
    """The topic and queue are made in the endpoint's SNS and SQS; the message SQS receives is SNS's
    JSON envelope (Type Notification, Subject, Message, MessageAttributes)."""
    account, region = "111122223333", "us-west-2"
    with EmbeddedAws() as aws:
        sns, sqs = aws.client("sns", account=account, region=region), aws.client("sqs", account=account, region=region)
        topic = sns.create_topic(Name="hypergov-notifications")["TopicArn"]
        queue = sqs.create_queue(QueueName="notifications")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
        settings = NotificationSettings(sinks=[{"kind": "sns", "topic_arn": topic}])  # type: ignore[list-item]
        notifier = Notifier.for_state_dir(settings, tmp_path, sns_for=lambda _arn: sns)
        (delivery,) = notifier.after_scan(_drift("role-a"), branch="main", commit="c" * 40)
        assert delivery.failure is None and delivery.sink == f"sns:{topic}"
        (message,) = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1)["Messages"]
        envelope = json.loads(message["Body"])
        body = json.loads(envelope["Message"])
        assert envelope["Type"] == "Notification" and envelope["Subject"].startswith("hypergov: 1 new drift item")
        assert envelope["MessageAttributes"]["type"]["Value"] == "hypergov.drift"
        assert body["type"] == "hypergov.drift" and body["details"]["new_items"] == {"missing": 1}
        assert notifier.after_scan(_drift("role-a"), branch="main", commit="c" * 40) == []


def test_the_daemon_tells_its_passes_and_failures_and_logs_each_delivery_without_the_url(
        tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cli.watch.Daemon` wired with a notifier, as `hypergov reconcile --watch` wires it from the
    settings: a failed pass and a failure before a pass are told, each delivery is a JSON log line
    that names the sink by its variable, never by its URL."""
    import io
    import threading

    from cli.watch import Daemon
    from engines.settings import Settings
    from reconciler.logs import EventLog, configure
    from reconciler.metrics import ReconcilerMetrics

    err = io.StringIO()
    log = EventLog(configure("json", environ={}, out=io.StringIO(), err=err), branch="main")
    daemon = Daemon(settings=Settings(state_dir=tmp_path / "state"), repo=tmp_path, subdir="config", branch="main",
                    stop=threading.Event(), log=log, metrics=ReconcilerMetrics(),
                    notifier=_notifier(tmp_path, receiver, monkeypatch))
    daemon.passed(PassResult(head="a" * 40, base=None, status="invalid"))
    daemon.failed(permanent("fetch failed", "git"))
    events = [json.loads(line) for line in err.getvalue().splitlines()]
    told = [e for e in events if e["event"] == "notify.sent"]
    assert [(e["sink"], e["notification"]) for e in told] == [
        ("slack:$SLACK_URL", "tree-rejected"), (f"webhook:{tmp_path / 'webhook-url'}", "tree-rejected"),
        ("slack:$SLACK_URL", "pass-failed"), (f"webhook:{tmp_path / 'webhook-url'}", "pass-failed")]
    assert TOKEN not in err.getvalue() and len(receiver.bodies) == 4
