"""The reconciler's notifications sent (`reconciler.notify` decides what): to Slack-compatible
incoming webhooks and generic JSON webhooks over HTTPS POST, and to SNS topics with Publish.

A temporary failure (HTTP 429 or 5xx, a connection error, SNS throttling) is tried again with the
reconciler's backoff, up to `attempts`; a permanent one (another 4xx, access denied) is not. A
notification that could not be sent is logged and counted, never raised: the daemon goes on. What
was said is kept in `<state_dir>/notifications.json` (atomically), so a restart says nothing
twice. A webhook URL is read when a message is sent (from its variable or file) and never appears
in a log line, an error or a metric label: sinks are named by `NotificationSink.label`, and the URL
is registered with the process's redactor when it is read, first when the notifier is made (whole,
and its token-like path and query parts: Slack's token is in the path). What is sent is redacted too.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.live.items import LiveScan
from engines.outcomes import Backoff, Failure, classify, permanent, temporary
from engines.settings import NotificationSettings, NotificationSink
from hypergov.redaction import redacted, register_url
from reconciler.drift_schedule import write_atomically
from reconciler.notify import (
    Event,
    NotifyState,
    decide,
    failure_events,
    json_payload,
    pass_events,
    scan_events,
    slack_payload,
    sns_message,
)
from reconciler.pass_result import PassResult

STATE_FILE = "notifications.json"
HTTP_TIMEOUT_S = 10.0

Post = Callable[[str, bytes], int]  # (url, JSON body) -> HTTP status; raises OSError when unreachable
SnsFor = Callable[[str], Any]  # topic ARN -> a boto3 SNS client in the topic's account and region


def http_post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "hypergov"})
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


@dataclass(frozen=True)
class Delivery:
    event: Event
    sink: str  # the sink's label, never its URL
    failure: Failure | None = None  # None: delivered


def _url(sink: NotificationSink) -> str | Failure:
    """The sink's URL, read now (a rotated Secret is picked up) and registered as a secret, or why
    it cannot be."""
    if sink.url_env is not None:
        value = os.environ.get(sink.url_env, "").strip()
        if not value:
            return permanent(f"{sink.label()}: the environment variable is not set", "notify-config")
    else:
        assert sink.url_file is not None
        try:
            value = sink.url_file.read_text().strip()
        except OSError as exc:
            return permanent(f"{sink.label()}: cannot read the file ({exc.strerror})", "notify-config")
        if not value:
            return permanent(f"{sink.label()}: the file is empty", "notify-config")
    register_url(value)
    return value


def _http_status(label: str, status: int) -> Failure | None:
    if 200 <= status < 300:
        return None
    if status == 429 or status >= 500:
        return temporary(f"{label}: HTTP {status}", "notify-http")
    return permanent(f"{label}: HTTP {status}", "notify-http")


@dataclass
class Notifier:
    settings: NotificationSettings
    state_path: Path
    post: Post = http_post
    sns_for: SnsFor | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    log: Callable[[Delivery], None] = lambda _: None
    backoff: Callable[[], Backoff] = Backoff
    deliveries: list[Delivery] = field(default_factory=list)

    def __post_init__(self) -> None:
        """The sinks' URLs read once now, so that the redactor masks them from the first line on
        (they are read again at each send: a rotated Secret is picked up, and learned too)."""
        for sink in self.settings.sinks:
            if sink.kind != "sns":
                _url(sink)

    @classmethod
    def for_state_dir(cls, settings: NotificationSettings, state_dir: Path, **kwargs: Any) -> Notifier:
        return cls(settings, Path(state_dir) / STATE_FILE, **kwargs)

    def after_pass(self, outcome: PassResult, *, branch: str) -> list[Delivery]:
        events, ok = pass_events(outcome, branch=branch)
        return self._round(events, self._state(), pass_succeeded=ok)

    def after_failure(self, failure: Failure, *, branch: str) -> list[Delivery]:
        return self._round(failure_events(failure, branch=branch), self._state())

    def after_scan(self, scan: LiveScan, *, branch: str, commit: str | None) -> list[Delivery]:
        events, state = scan_events(scan, self._state(), branch=branch, commit=commit)
        return self._round(events, state)

    def _state(self) -> NotifyState:
        try:
            return NotifyState.from_dict(json.loads(self.state_path.read_text()))
        except FileNotFoundError:
            return NotifyState()
        except (OSError, ValueError, TypeError):
            return NotifyState()  # unreadable: start over (at worst something is said again)

    def _round(self, events: Iterable[Event], state: NotifyState, *,
               pass_succeeded: bool | None = None) -> list[Delivery]:
        if not self.settings.sinks:
            return []
        decision = decide(events, state, now=self.clock(), wanted=self.settings.events,
                          max_per_hour=self.settings.max_per_hour, pass_succeeded=pass_succeeded)
        # What is decided is remembered before it is sent: a crash mid-send loses a message rather
        # than repeating it forever.
        write_atomically(self.state_path, json.dumps(decision.state.as_dict(), sort_keys=True))
        done: list[Delivery] = []
        held = decision.report_held_back
        for event in decision.send:
            for sink in self.settings.sinks:
                done.append(self._deliver(event, sink, held))
            held = 0
        for delivery in done:
            self.log(delivery)
        self.deliveries += done
        return done

    def _deliver(self, event: Event, sink: NotificationSink, held_back: int) -> Delivery:
        backoff = self.backoff()
        failure: Failure | None = None
        for attempt in range(self.settings.attempts):
            if attempt:
                self.sleep(backoff.next_delay(failure))
            failure = self._send_once(event, sink, held_back)
            if failure is None or not failure.temporary:
                break
        return Delivery(event, sink.label(), failure)

    def _send_once(self, event: Event, sink: NotificationSink, held_back: int) -> Failure | None:
        try:
            if sink.kind == "sns":
                assert self.sns_for is not None and sink.topic_arn is not None, "an SNS sink needs an SNS client"
                self.sns_for(sink.topic_arn).publish(TopicArn=sink.topic_arn,
                                                     **redacted(sns_message(event, held_back=held_back)))
                return None
            url = _url(sink)
            if isinstance(url, Failure):
                return url
            payload = redacted(slack_payload(event, held_back=held_back) if sink.kind == "slack" else
                               json_payload(event, held_back=held_back))
            return _http_status(sink.label(), self.post(url, json.dumps(payload).encode()))
        except OSError as exc:  # unreachable: never the URL in the message
            return temporary(f"{sink.label()}: {type(exc).__name__}", "notify-connection")
        except Exception as exc:  # SNS: botocore's errors, classified as everywhere else
            found = classify(exc)
            return found if sink.kind == "sns" else permanent(f"{sink.label()}: {type(exc).__name__}", "notify")
