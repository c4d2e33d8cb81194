"""`hypergov reconcile --watch`: the loop around reconciler passes, which nothing but Ctrl-C or
SIGTERM ends.

A thin shell in the manner of Flux's controllers: every pass ends as a value (its `PassResult`,
or the classified `Failure` of whatever stopped it before any stack was touched), and one pure
decision (`after_pass`) says what happens next:
- success: back to the steady interval (and the backoff starts over);
- temporary failure (throttling, 5xx, connection errors, a held lock): the same head again after
  an exponential, capped, jittered delay;
- permanent failure (an invalid tree, access denied, a missing provider mirror): reported once,
  then the loop waits for a new commit on the branch instead of failing the same way forever.
SIGTERM sets `stop`: a running apply finishes the stacks it has started, records them in the
audit commit and starts no other; then the loop returns. `wake` (set by the webhook on a push)
cuts any wait short: the next pass starts at once; the periodic pass stays as the safety net.
`between` runs in each gap between passes, never during one (the scheduled drift scan: it must
not see a tree half applied).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from engines.outcomes import Backoff, Failure, FailureKind, classify
from reconciler.pass_result import PassResult

Next = Literal["steady", "retry", "wait-for-commit"]


@dataclass(frozen=True)
class Decision:
    next: Next
    delay_s: float


def after_pass(kind: FailureKind | None, failure: Failure | None, *, interval_s: float, backoff: Backoff,
               head_known: bool) -> Decision:
    """What the loop does after a pass that ended with `kind` (None: it succeeded)."""
    if kind is None:
        backoff.reset()
        return Decision("steady", interval_s)
    if kind == "temporary":
        return Decision("retry", backoff.next_delay(failure))
    backoff.reset()
    # Without a known head there is no "new commit" to wait for: poll at the steady interval.
    return Decision("wait-for-commit" if head_known else "steady", interval_s)


def pause(delay_s: float, *, stop: threading.Event, wake: threading.Event | None) -> None:
    """Wait `delay_s`, or less when `stop` or `wake` is set (a wake is consumed)."""
    if wake is None:
        stop.wait(delay_s)
        return
    deadline = time.monotonic() + delay_s
    while not stop.is_set():
        left = deadline - time.monotonic()
        # Slices of at most a second: `stop` is seen soon even if whoever set it did not set `wake`.
        if left <= 0 or wake.wait(min(left, 1.0)):
            break
    wake.clear()


def watch(*, run_pass: Callable[[], PassResult], head_of: Callable[[], str], interval_s: float, backoff: Backoff,
          stop: threading.Event, on_pass: Callable[[PassResult], None],
          on_failure: Callable[[Failure], None], on_wait: Callable[[Decision], None],
          wake: threading.Event | None = None, between: Callable[[], None] = lambda: None) -> None:
    """Run passes until `stop` is set. Never raises for a pass (KeyboardInterrupt still ends it);
    `between` must not raise either (it is its own boundary). `head_of` runs first in every round
    (for a remote: the fetch), then the pass."""
    blocked_head: str | None = None  # a head that failed permanently: wait for another one
    while not stop.is_set():
        head: str | None = None
        try:
            head = head_of()
            if head == blocked_head:
                between()
                pause(interval_s, stop=stop, wake=wake)
                continue
            blocked_head = None
            outcome = run_pass()
        except Exception as exc:  # the loop's boundary: a failed pass is a value, never the end
            failure = classify(exc)
            on_failure(failure)
            decision = after_pass(failure.kind, failure, interval_s=interval_s, backoff=backoff,
                                  head_known=head is not None)
        else:
            on_pass(outcome)
            kind = outcome.failure_kind
            first = next(iter(outcome.failures.values()), None) or next(
                (f for r in outcome.results for f in r.failures), None)
            decision = after_pass(kind, first, interval_s=interval_s, backoff=backoff, head_known=True)
        if decision.next == "wait-for-commit":
            blocked_head = head
        if stop.is_set():
            return
        between()
        if stop.is_set():
            return
        on_wait(decision)
        pause(decision.delay_s, stop=stop, wake=wake)
