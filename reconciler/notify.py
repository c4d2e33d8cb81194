"""What the reconciler tells people, decided purely: the events a pass, a failure or a drift scan
gives, which of them are new (`decide`: deduplicated against what was already said, rate-limited),
and each event's payload for a Slack-compatible incoming webhook, a generic JSON webhook and an
SNS topic. `reconciler.notify_send` sends them and keeps the state.

Events and when each is said (once per occurrence, never again while it lasts):
- `drift`: a scan's items not in the previous scan (new items only; an item that went away and
  comes back is new again; an incomplete scan forgets nothing it could not read);
- `pass-failed`: a pass that failed to plan or apply, or whose history was rewritten (refused), or
  that could not start (a Git or engine failure; "busy" is no failure): once per head and status,
  open until a pass succeeds;
- `tree-rejected`: the head's tree fails validation: once per head;
- `audit-push`: audit records that could not be pushed to the remote: once, open until none is left.

What a payload never carries: a secret or a live attribute value. Drift items are named by kind,
type, address, account, region and stack only (not their attribute values, expected or live, nor
who changed them); failures by stack, kind and reason (not their messages, which can quote API
answers); tree problems by position, rule and message (the tree is the repository's own text).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from engines.live.items import LiveScan
from engines.outcomes import Failure
from engines.settings import NotifyEventName
from reconciler.pass_result import PassResult

EventKind = NotifyEventName  # one list of event names: the settings' (engines.settings.NOTIFY_EVENTS)
LISTED: Final = 20  # lines an event lists; the rest are counted ("and 12 more")
HOUR: Final = 3600.0
SNS_SUBJECT_MAX: Final = 100  # SNS Publish: Subject is at most 100 ASCII characters


@dataclass(frozen=True)
class Event:
    """One thing to tell: `key` identifies its occurrence (for deduplication), `lines` say it."""

    kind: EventKind
    key: str
    title: str
    branch: str
    commit: str | None
    lines: tuple[str, ...]
    total: int  # the lines there are (more than `lines` when cut at LISTED)
    details: dict[str, Any] = field(default_factory=dict)  # for machines: counts, statuses


@dataclass(frozen=True)
class NotifyState:
    """What was already said: the drift items of the last scan, the failure keys still open,
    and when messages went out (for the rate limit), plus events the limit held back."""

    seen_drift: frozenset[str] = frozenset()
    open_keys: frozenset[str] = frozenset()
    sent_at: tuple[float, ...] = ()
    held_back: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"seen_drift": sorted(self.seen_drift), "open_keys": sorted(self.open_keys),
                "sent_at": list(self.sent_at), "held_back": self.held_back}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NotifyState:
        return cls(frozenset(data.get("seen_drift", ())), frozenset(data.get("open_keys", ())),
                   tuple(float(t) for t in data.get("sent_at", ())), int(data.get("held_back", 0)))


def _short(commit: str | None) -> str:
    return commit[:12] if commit else "(unknown)"


def _cut(lines: Sequence[str]) -> tuple[str, ...]:
    return tuple(lines[:LISTED]) + ((f"... and {len(lines) - LISTED} more",) if len(lines) > LISTED else ())


def drift_key(kind: str, account: str, region: str, address: str) -> str:
    return f"drift:{kind}:{account}:{region}:{address}"


def scan_events(scan: LiveScan, state: NotifyState, *, branch: str,
                commit: str | None) -> tuple[list[Event], NotifyState]:
    """The scan's new items as one event, and the items it saw remembered (a complete scan's
    exactly; an incomplete one's added to what was seen)."""
    keyed = {drift_key(i.kind, i.account, i.region, i.address): i for i in scan.items}
    new = [keyed[k] for k in sorted(keyed) if k not in state.seen_drift]
    seen = frozenset(keyed) if scan.complete else state.seen_drift | frozenset(keyed)
    after = replace(state, seen_drift=seen)
    if not new:
        return [], after
    lines = [f"{i.kind} {i.type} {i.address} ({i.account} {i.region}, stack {i.stack})" for i in new]
    counts = {kind: sum(1 for i in new if i.kind == kind) for kind in sorted({i.kind for i in new})}
    event = Event("drift", "drift:" + ",".join(sorted(drift_key(i.kind, i.account, i.region, i.address) for i in new)),
                  f"hypergov: {len(new)} new drift item(s) on {branch} (applied {_short(commit)})", branch, commit,
                  _cut(lines), len(lines), {"new_items": counts, "items_in_scan": len(scan.items),
                                            "complete": scan.complete})
    return [event], after


def pass_events(outcome: PassResult, *, branch: str) -> tuple[list[Event], bool]:
    """The events of a pass that ran, and whether it succeeded (which closes open failures)."""
    events: list[Event] = []
    if outcome.status == "invalid":
        lines = [f"{p.pos.file}:{p.pos.line}:{p.pos.column}: {p.rule}: {p.message}" for p in outcome.problems]
        events.append(Event("tree-rejected", f"tree:{outcome.head}", f"hypergov: the tree at {_short(outcome.head)} "
                            f"on {branch} fails validation; nothing applied", branch, outcome.head, _cut(lines),
                            len(lines), {"problems": len(lines)}))
    elif outcome.status in ("plan failed", "apply failed", "rewritten"):
        lines = [f"{stack}: failed to plan ({f.kind}, {f.reason})" for stack, f in sorted(outcome.failures.items())]
        lines += [f"{r.stack}: " + (f"refused ({r.refusal.kind})" if r.refusal else "failed") +
                  "".join(f" ({f.kind}, {f.reason})" for f in r.failures[:1])
                  for r in outcome.results if not r.ok and (r.refusal is None or r.refusal.kind != "stopping")]
        if outcome.status == "rewritten":
            lines.insert(0, f"refused: {outcome.refusal.kind if outcome.refusal else 'history rewritten'}")
        if outcome.audit_error:
            lines.append("the audit record could not be written")
        events.append(Event("pass-failed", f"pass:{outcome.head}:{outcome.status}",
                            f"hypergov: pass on {branch} at {_short(outcome.head)}: {outcome.status}", branch,
                            outcome.head, _cut(lines), len(lines), {"status": outcome.status}))
    if outcome.unpushed or (outcome.push is not None and outcome.push.error is not None):
        events.append(Event("audit-push", "audit-push", f"hypergov: {outcome.unpushed} audit record(s) on {branch} "
                            "not pushed to the remote", branch, outcome.head,
                            ("the records stay local and go with the next push; check the remote's credentials "
                             "and that the audit branch accepts pushes",), 1, {"unpushed": outcome.unpushed}))
    return events, outcome.ok


def failure_events(failure: Failure, *, branch: str) -> list[Event]:
    """A pass that could not start (a busy state directory is not a failure: nothing is said)."""
    if failure.reason == "busy":
        return []
    return [Event("pass-failed", f"error:{failure.kind}:{failure.reason}", f"hypergov: pass on {branch} could not "
                  f"run ({failure.kind}: {failure.reason})", branch, None,
                  ("see the reconciler's log for the message",), 1, {"kind": failure.kind, "reason": failure.reason})]


@dataclass(frozen=True)
class Decision:
    send: tuple[Event, ...]
    suppressed: tuple[Event, ...]  # said already (deduplicated), or of a kind not wanted
    held_back: tuple[Event, ...]  # over the rate limit
    state: NotifyState
    report_held_back: int  # events held back earlier, to be mentioned in this round's first message


def decide(events: Iterable[Event], state: NotifyState, *, now: float, wanted: Iterable[EventKind],
           max_per_hour: int, pass_succeeded: bool | None = None) -> Decision:
    """Which events to send: new ones (a key not open), of the wanted kinds, within `max_per_hour`
    messages in any hour. After a pass (`pass_succeeded` not None): a success closes the open pass
    and tree failures (they may be said again), and the audit push closes once a pass no longer
    reports it."""
    events = list(events)
    kinds = set(wanted)
    open_keys = set(state.open_keys)
    if pass_succeeded:
        open_keys = {k for k in open_keys if not k.startswith(("pass:", "error:", "tree:"))}
    if pass_succeeded is not None and not any(e.kind == "audit-push" for e in events):
        open_keys.discard("audit-push")
    recent = [t for t in state.sent_at if now - t < HOUR]
    send: list[Event] = []
    suppressed: list[Event] = []
    held: list[Event] = []
    for event in events:
        if event.kind not in kinds or (event.kind != "drift" and event.key in open_keys):
            suppressed.append(event)
        elif len(recent) >= max_per_hour:
            held.append(event)
        else:
            send.append(event)
            recent.append(now)
            if event.kind != "drift":
                open_keys.add(event.key)
    held_back = len(held) if send else state.held_back + len(held)
    return Decision(tuple(send), tuple(suppressed), tuple(held),
                    NotifyState(state.seen_drift, frozenset(open_keys), tuple(recent), held_back),
                    state.held_back if send else 0)


def _text(event: Event, held_back: int) -> str:
    body = "\n".join(f"- {line}" for line in event.lines)
    note = f"\n({held_back} earlier notification(s) were held back by the rate limit)" if held_back else ""
    return f"*{event.title}*\n{body}{note}"


def slack_payload(event: Event, *, held_back: int = 0) -> dict[str, Any]:
    """A Slack incoming webhook's message: `text` in Slack's mrkdwn (Slack, "Sending messages using
    incoming webhooks"); Mattermost and Rocket.Chat take the same shape."""
    return {"text": _text(event, held_back)}


def json_payload(event: Event, *, held_back: int = 0) -> dict[str, Any]:
    """The generic webhook's body (version 1): the event for machines, and its text."""
    return {"type": f"hypergov.{event.kind}", "version": 1, "branch": event.branch, "commit": event.commit,
            "title": event.title, "lines": list(event.lines), "total": event.total, "details": event.details,
            "held_back": held_back, "text": _text(event, held_back)}


def sns_message(event: Event, *, held_back: int = 0) -> dict[str, Any]:
    """SNS Publish's arguments: Subject (ASCII, at most 100 characters, no line breaks) and the
    JSON body as Message, with the event type as a message attribute subscribers can filter on."""
    subject = event.title.encode("ascii", "replace").decode()[:SNS_SUBJECT_MAX]
    return {"Subject": subject, "Message": json.dumps(json_payload(event, held_back=held_back), sort_keys=True),
            "MessageAttributes": {"type": {"DataType": "String", "StringValue": f"hypergov.{event.kind}"}}}
