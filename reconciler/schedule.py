"""Run work per stack in dependency order: a stack starts once every stack it depends on (among
those being run) has finished well; independent stacks run side by side, at most `parallelism`
at once; a stack whose dependency failed is not run at all (its dependents neither).

Pure scheduling: what "run" and "finished well" mean is passed in, so the engine uses it for
applies and the tests use it with plain functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TypeVar

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
