"""Run work per stack in dependency order: a stack starts once every stack it depends on (among
those being run) has finished well; independent stacks run side by side, at most `parallelism`
at once; a stack whose dependency failed is not run at all (its dependents neither).

Pure scheduling: what "run" and "finished well" mean is passed in, so the engine uses it for
applies and the tests use it with plain functions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TypeVar

from engines.outcomes import Failure, Refusal, guarded
from engines.plan import ApplyResult, Plan, StackName

R = TypeVar("R")


@dataclass(frozen=True)
class Blocked:
    """Not run: `dependency` (run in the same batch) did not finish well."""

    stack: str
    dependency: str


def run_in_dependency_order(stacks: Sequence[str], depends_on: Mapping[str, Sequence[str]], run: Callable[[str], R],
                            *, succeeded: Callable[[R], bool], parallelism: int,
                            on_start: Callable[[str], None] | None = None,
                            on_done: Callable[[str, R | Blocked], None] | None = None) -> dict[str, R | Blocked]:
    """Outcome per stack. Dependencies outside `stacks` count as satisfied (nothing to do there).
    Callbacks run on the calling thread."""
    batch = set(stacks)
    deps = {s: [d for d in depends_on.get(s, ()) if d in batch and d != s] for s in stacks}
    waiting = list(stacks)
    outcomes: dict[str, R | Blocked] = {}
    running: dict[Future[R], str] = {}
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        while waiting or running:
            progressed = False
            for stack in list(waiting):
                failed = next((d for d in deps[stack] if d in outcomes and not _ok(outcomes[d], succeeded)), None)
                if failed is not None:
                    waiting.remove(stack)
                    progressed = True
                    outcomes[stack] = Blocked(stack, failed)
                    if on_done:
                        on_done(stack, outcomes[stack])
                elif all(d in outcomes for d in deps[stack]) and len(running) < max(1, parallelism):
                    waiting.remove(stack)
                    progressed = True
                    if on_start:
                        on_start(stack)
                    running[pool.submit(run, stack)] = stack
            if not running:
                if not progressed:
                    raise ValueError(f"dependency cycle among {sorted(waiting)}")
                continue
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                stack = running.pop(future)
                outcomes[stack] = future.result()
                if on_done:
                    on_done(stack, outcomes[stack])
    return {s: outcomes[s] for s in stacks}


def _ok(outcome: object, succeeded: Callable[[R], bool]) -> bool:
    return not isinstance(outcome, Blocked) and succeeded(outcome)  # type: ignore[arg-type]


T = TypeVar("T")


def run_in_parallel(stacks: Sequence[StackName], work: Callable[[StackName], T], *, parallelism: int,
                    progress: Callable[[StackName, T | Failure], None] | None = None) -> dict[StackName, T | Failure]:
    """`work` per stack on `parallelism` threads; whatever one stack raises is that stack's
    classified outcome, never the end of the others. Progress on the calling thread, in input order."""
    results: dict[StackName, T | Failure] = {}
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        for stack, outcome in zip(stacks, pool.map(lambda s: guarded(work, s), stacks), strict=True):
            results[stack] = outcome
            if progress:
                progress(stack, outcome)
    return results


STOPPING = Refusal("stopping", "not applied: the reconciler is stopping (SIGTERM); the next pass plans it again")


def apply_in_dependency_order(plans: Sequence[Plan], *, depends_on: Mapping[str, Sequence[str]],
                              apply_one: Callable[[Plan], ApplyResult], parallelism: int,
                              on_start: Callable[[StackName], None] | None = None,
                              on_done: Callable[[ApplyResult], None] | None = None,
                              stop: threading.Event | None = None) -> list[ApplyResult]:
    """Every engine's `apply_many`: each plan once the stacks it depends on are applied,
    independent ones side by side; a stack whose dependency failed is refused ("not applied: X
    failed"); whatever one apply raises is its classified error; once `stop` is set no further
    stack starts. Results in the order of `plans`."""
    by_stack = {p.stack: p for p in plans}

    def run(stack: str) -> ApplyResult:
        if stop is not None and stop.is_set():
            return ApplyResult(stack=StackName(stack), refusal=STOPPING)
        outcome = guarded(apply_one, by_stack[StackName(stack)])
        return ApplyResult(stack=StackName(stack), error=outcome) if isinstance(outcome, Failure) else outcome

    def result_of(stack: str, outcome: ApplyResult | Blocked) -> ApplyResult:
        if isinstance(outcome, Blocked):
            return ApplyResult(stack=StackName(stack), refusal=Refusal(
                "dependency failed", f"not applied: {outcome.dependency} failed"))
        return outcome

    outcomes = run_in_dependency_order(
        list(by_stack), depends_on, run, succeeded=lambda r: r.ok, parallelism=parallelism,
        on_start=(lambda s: on_start(StackName(s))) if on_start else None,
        on_done=(lambda s, o: on_done(result_of(s, o))) if on_done else None)
    return [result_of(s, o) for s, o in outcomes.items()]
