"""What the reconciler tells people, decided purely (`reconciler.notify`): each event once,
duplicates suppressed, new drift items only, the rate limit, and no secret or live attribute value
in any payload."""

from __future__ import annotations

import json

from engines.live.items import AttributeDrift, DriftItem, LiveScan, ScanFailure
from engines.outcomes import Refusal, permanent, temporary
from engines.plan import ApplyResult
from hypergov.problems import Problem, SourcePos
from reconciler.audit_store import PushOutcome
from reconciler.notify import (
    HOUR,
    LISTED,
    SNS_SUBJECT_MAX,
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

ALL = ("drift", "pass-failed", "tree-rejected", "audit-push")
SECRET = "s3cr3t-AKIAIOSFODNN7EXAMPLE"  # what must never leave: a live value, a message quoting one


def item(address: str, kind: str = "changed", *, live: str = SECRET) -> DriftItem:
    return DriftItem(kind, "project-vision", address, "aws_iam_role", "111122223333", "us-west-2",  # type: ignore[arg-type]
                     f"set it back: {live}", attributes=(AttributeDrift("Description", "governed", live),),
                     changed_by=f"arn:aws:iam::111122223333:user/{live}")


def scan(*items: DriftItem, complete: bool = True) -> LiveScan:
    failures = () if complete else (ScanFailure("project-nlp", "role x", permanent("denied", "access")),)
    return LiveScan(items, failures, api_calls=1, seconds=0.1, scanned_at="2026-12-05T00:00:00Z",
                    stacks=("project-vision",))


def test_only_new_drift_items_are_told_and_a_returning_one_is_new_again() -> None:
    state = NotifyState()
    first, state = scan_events(scan(item("role-a"), item("role-b")), state, branch="main", commit="c" * 40)
    assert [e.lines for e in first] == [(
        "changed aws_iam_role role-a (111122223333 us-west-2, stack project-vision)",
        "changed aws_iam_role role-b (111122223333 us-west-2, stack project-vision)")]
    again, state = scan_events(scan(item("role-a"), item("role-b")), state, branch="main", commit="c" * 40)
    assert again == []
    third, state = scan_events(scan(item("role-a"), item("role-b"), item("role-c", "unmanaged")), state,
                               branch="main", commit="c" * 40)
    assert [e.lines for e in third] == [
        ("unmanaged aws_iam_role role-c (111122223333 us-west-2, stack project-vision)",)]
    _, state = scan_events(scan(item("role-a")), state, branch="main", commit="c" * 40)  # b and c repaired
    back, state = scan_events(scan(item("role-a"), item("role-b")), state, branch="main", commit="c" * 40)
    assert [e.details["new_items"] for e in back] == [{"changed": 1}]


def test_an_incomplete_scan_forgets_nothing_it_could_not_read() -> None:
    _, state = scan_events(scan(item("role-a")), NotifyState(), branch="main", commit=None)
    _, state = scan_events(scan(complete=False), state, branch="main", commit=None)
    again, _ = scan_events(scan(item("role-a")), state, branch="main", commit=None)
    assert again == []


def _failed_pass(head: str, status: str = "apply failed", **extra: object) -> PassResult:
    return PassResult(head=head, base=None, status=status,  # type: ignore[arg-type]
                      results=[ApplyResult("project-vision", error=temporary(f"throttled: {SECRET}", "throttling")),
                               ApplyResult("project-nlp", refusal=Refusal("unreviewed", f"no review of {SECRET}"))],
                      **extra)  # type: ignore[arg-type]


def _round(result: PassResult, state: NotifyState, now: float = 0.0) -> tuple[list[Event], NotifyState]:
    events, ok = pass_events(result, branch="main")
    decision = decide(events, state, now=now, wanted=ALL, max_per_hour=30, pass_succeeded=ok)
    return list(decision.send), decision.state


def test_a_failed_pass_is_told_once_per_head_until_a_pass_succeeds() -> None:
    sent, state = _round(_failed_pass("a" * 40), NotifyState())
    assert [(e.kind, e.lines) for e in sent] == [("pass-failed", (
        "project-vision: failed (temporary, throttling)", "project-nlp: refused (unreviewed)"))]
    assert _round(_failed_pass("a" * 40), state)[0] == []  # retried, failing the same way: said already
    assert [e.kind for e in _round(_failed_pass("b" * 40), state)[0]] == ["pass-failed"]  # a new head
    _, state = _round(PassResult(head="a" * 40, base=None, status="applied"), state)
    assert [e.kind for e in _round(_failed_pass("a" * 40), state)[0]] == ["pass-failed"]  # failing again


def test_a_rejected_tree_names_each_problem_once_per_head() -> None:
    problem = Problem(SourcePos("config/projects/vision.yaml", 7, 3), "REF005", "unknown account 'ml-x'", "fix it")
    invalid = PassResult(head="d" * 40, base=None, status="invalid", problems=(problem,))
    sent, state = _round(invalid, NotifyState())
    assert [(e.kind, e.lines) for e in sent] == [
        ("tree-rejected", ("config/projects/vision.yaml:7:3: REF005: unknown account 'ml-x'",))]
    assert _round(invalid, state)[0] == []


def test_the_audit_push_is_told_once_while_it_fails_and_again_after_it_recovered() -> None:
    failing = PassResult(head="e" * 40, base=None, status="up to date",
                         push=PushOutcome(pushed=0, rebased=0, error="denied", remote="https://***@git"), unpushed=3)
    sent, state = _round(failing, NotifyState())
    assert [(e.kind, e.details) for e in sent] == [("audit-push", {"unpushed": 3})]
    assert _round(failing, state)[0] == []
    _, state = _round(PassResult(head="e" * 40, base=None, status="up to date", unpushed=0), state)
    assert [e.kind for e in _round(failing, state)[0]] == ["audit-push"]


def test_a_busy_state_directory_is_no_failure_and_other_failures_are_told_once() -> None:
    assert failure_events(temporary("held", "busy"), branch="main") == []
    events = failure_events(permanent(f"git: {SECRET}", "git"), branch="main")
    first = decide(events, NotifyState(), now=0, wanted=ALL, max_per_hour=30)
    assert len(first.send) == 1
    assert decide(events, first.state, now=1, wanted=ALL, max_per_hour=30).send == ()


def test_the_rate_limit_holds_back_and_the_next_message_says_how_many() -> None:
    events = [failure_events(permanent("x", f"reason-{n}"), branch="main")[0] for n in range(4)]
    first = decide(events, NotifyState(), now=0, wanted=ALL, max_per_hour=2)
    assert (len(first.send), len(first.held_back)) == (2, 2)
    later = decide(failure_events(permanent("x", "other"), branch="main"), first.state, now=HOUR + 1, wanted=ALL,
                   max_per_hour=2)
    assert len(later.send) == 1 and later.report_held_back == 2
    assert "2 earlier notification(s) were held back" in slack_payload(later.send[0], held_back=2)["text"]


def test_unwanted_kinds_are_not_sent() -> None:
    events, _ = scan_events(scan(item("role-a")), NotifyState(), branch="main", commit=None)
    assert decide(events, NotifyState(), now=0, wanted=("pass-failed",), max_per_hour=30).send == ()


def test_no_payload_carries_a_secret_or_a_live_value_and_long_lists_are_cut() -> None:
    items = [item(f"role-{n:03d}") for n in range(LISTED + 5)]
    events, _ = scan_events(scan(*items), NotifyState(), branch="main", commit="f" * 40)
    events += pass_events(_failed_pass("f" * 40), branch="main")[0]
    events += failure_events(permanent(f"git: {SECRET}", "git"), branch="main")
    for event in events:
        for payload in (slack_payload(event), json_payload(event), sns_message(event)):
            text = json.dumps(payload)
            assert SECRET not in text and "s3cr3t" not in text
    drift = events[0]
    assert len(drift.lines) == LISTED + 1 and drift.lines[-1] == "... and 5 more" and drift.total == LISTED + 5
    subject = sns_message(drift)["Subject"]
    assert len(subject) <= SNS_SUBJECT_MAX and subject.isascii() and "\n" not in subject
