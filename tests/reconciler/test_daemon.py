"""The watch loop's decisions: nothing a pass does ends it; temporary failures back off (jittered,
capped), permanent ones wait for a new commit, success returns to the steady interval, and the
stop event (SIGTERM) ends it. The passes here are plain functions returning `PassResult`s; the
real pass runs in tests/integration/test_reconcile_faults.py."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from botocore.exceptions import ClientError, NoCredentialsError

from engines.outcomes import Backoff, Failure, Refusal, classify, permanent, temporary
from engines.plan import ApplyResult, StackName
from reconciler.daemon import Decision, watch
from reconciler.pass_result import PassResult

THROTTLED = classify(ClientError({"Error": {"Code": "ThrottlingException"}, "ResponseMetadata": {
    "HTTPStatusCode": 400}}, "ListComputeQuotas"))


def _plan_failed(failure: Failure, head: str = "a" * 40) -> PassResult:
    return PassResult(head=head, base=None, status="plan failed", failures={StackName("cluster-gpu-west"): failure})


def _applied(head: str = "a" * 40) -> PassResult:
    return PassResult(head=head, base=None, status="applied")


@dataclass
class Loop:
    """Runs `watch` over scripted passes; the stop event is set when the script runs out."""

    script: list[Callable[[], PassResult]]
    heads: list[str] = field(default_factory=lambda: ["a" * 40])
    waits: list[Decision] = field(default_factory=list)
    passes: list[PassResult] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    head_calls: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run_pass(self) -> PassResult:
        step = self.script.pop(0)
        if not self.script:
            self.stop.set()
        return step()

    def head_of(self) -> str:
        self.head_calls += 1
        return self.heads[min(self.head_calls, len(self.heads)) - 1]

    def go(self, *, interval: float = 0.001, cap: float = 0.004) -> Loop:
        watch(run_pass=self.run_pass, head_of=self.head_of, interval_s=interval,
              backoff=Backoff(base_s=0.001, cap_s=cap), stop=self.stop, on_pass=self.passes.append,
              on_failure=self.failures.append, on_wait=self.waits.append)
        return self


def test_temporary_failures_back_off_then_the_loop_applies() -> None:
    loop = Loop(script=[lambda: _plan_failed(THROTTLED)] * 4 + [_applied]).go()
    assert [p.status for p in loop.passes] == ["plan failed"] * 4 + ["applied"]
    assert [w.next for w in loop.waits] == ["retry"] * 4
    assert all(0 <= w.delay_s <= 0.004 for w in loop.waits)  # capped


def test_a_permanent_failure_waits_for_a_new_commit() -> None:
    denied = permanent("AWS CreateComputeQuota: AccessDeniedException", "access-denied")
    heads = ["a" * 40, "a" * 40, "a" * 40, "b" * 40]  # a new commit arrives at the fourth look
    loop = Loop(script=[lambda: _plan_failed(denied), lambda: _applied("b" * 40)], heads=heads).go()
    assert [p.status for p in loop.passes] == ["plan failed", "applied"]  # the same head was not retried
    assert loop.waits[0].next == "wait-for-commit" and loop.head_calls == 4


def test_an_invalid_tree_is_permanent() -> None:
    invalid = PassResult(head="a" * 40, base=None, status="invalid")
    assert invalid.failure_kind == "permanent"
    assert _plan_failed(THROTTLED).failure_kind == "temporary"
    mixed = PassResult(head="a" * 40, base=None, status="plan failed", failures={
        StackName("org"): THROTTLED, StackName("cluster-x"): permanent("denied", "access-denied")})
    assert mixed.failure_kind == "permanent"  # retrying cannot fix the permanent half
    blocked = PassResult(head="a" * 40, base=None, status="apply failed", results=[
        ApplyResult(StackName("cluster-x"), error=temporary("503", "server-error")),
        ApplyResult(StackName("project-y"), refusal=Refusal("dependency failed", "not applied: cluster-x failed"))])
    assert blocked.failure_kind == "temporary"  # a dependency's refusal follows its cause


def test_whatever_a_pass_raises_is_classified_and_the_loop_goes_on() -> None:
    def no_credentials() -> PassResult:
        raise NoCredentialsError()

    def git_down() -> PassResult:
        raise ConnectionResetError("reset by peer")

    heads = ["a" * 40, "a" * 40, "b" * 40, "b" * 40]
    loop = Loop(script=[git_down, no_credentials, lambda: _applied("b" * 40)], heads=heads).go()
    assert [f.kind for f in loop.failures] == ["temporary", "permanent"]
    assert [w.next for w in loop.waits][:2] == ["retry", "wait-for-commit"]
    assert [p.status for p in loop.passes] == ["applied"]


def test_stop_ends_the_loop_without_another_pass() -> None:
    loop = Loop(script=[_applied, _applied])
    loop.stop.set()
    loop.go()
    assert loop.passes == [] and loop.waits == []


def test_a_rewritten_history_is_permanent_and_waits_for_a_new_commit() -> None:
    rewritten = PassResult(head="a" * 40, base="c" * 40, status="rewritten",
                           refusal=Refusal("history rewritten", "history rewritten"))
    assert rewritten.failure_kind == "permanent" and not rewritten.ok
    loop = Loop(script=[lambda: rewritten, lambda: _applied("b" * 40)], heads=["a" * 40, "a" * 40, "b" * 40]).go()
    assert [p.status for p in loop.passes] == ["rewritten", "applied"] and loop.waits[0].next == "wait-for-commit"


def test_a_fetch_that_cannot_reach_the_remote_backs_off_then_the_pass_applies() -> None:
    """`head_of` is the remote's fetch: when it fails temporarily the loop retries it with backoff."""
    from reconciler.remote import RemoteGitError

    down = RemoteGitError("git fetch from git://127.0.0.1:9418/gov.git failed: Connection refused",
                          temporary("git fetch failed: Connection refused", "remote"))
    loop = Loop(script=[_applied])
    looks = iter([down, down, "a" * 40])

    def fetch() -> str:
        look = next(looks)
        if isinstance(look, Exception):
            raise look
        return look

    watch(run_pass=loop.run_pass, head_of=fetch, interval_s=0.001, backoff=Backoff(base_s=0.001, cap_s=0.004),
          stop=loop.stop, on_pass=loop.passes.append, on_failure=loop.failures.append, on_wait=loop.waits.append)
    assert [(f.kind, f.reason) for f in loop.failures] == [("temporary", "remote")] * 2
    assert [w.next for w in loop.waits] == ["retry", "retry"] and [p.status for p in loop.passes] == ["applied"]


def test_a_wake_cuts_the_steady_wait_short() -> None:
    """The interval is an hour; the webhook's wake (set here after the first pass) starts the next
    pass at once. A watchdog stops the loop if the wake were ignored, and the assertion then fails."""
    wake = threading.Event()
    loop = Loop(script=[_applied, _applied])
    watchdog = threading.Timer(60.0, loop.stop.set)
    watchdog.start()

    def on_pass(result: PassResult) -> None:
        loop.passes.append(result)
        wake.set()

    try:
        watch(run_pass=loop.run_pass, head_of=loop.head_of, interval_s=3600.0, backoff=Backoff(), stop=loop.stop,
              on_pass=on_pass, on_failure=loop.failures.append, on_wait=loop.waits.append, wake=wake)
    finally:
        watchdog.cancel()
    assert [p.status for p in loop.passes] == ["applied", "applied"] and [w.next for w in loop.waits] == ["steady"]


def test_stop_ends_a_wait_even_when_the_wake_is_not_set() -> None:
    """SIGTERM sets `stop` (and the CLI sets `wake` too); a stop alone is seen within a slice."""
    from reconciler.daemon import pause

    stop, wake = threading.Event(), threading.Event()
    threading.Timer(0.05, stop.set).start()
    pause(3600.0, stop=stop, wake=wake)
    assert stop.is_set()
