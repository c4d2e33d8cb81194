"""Dependency-ordered, bounded-parallel runs (the order `hypergov apply` applies stacks in)."""

from __future__ import annotations

import threading

import pytest

from engines.schedule import Blocked, run_in_dependency_order

DEPS = {"org": [], "cluster-a": ["org"], "cluster-b": ["org"],
        "project-x": ["org", "cluster-a"], "project-y": ["org", "cluster-b"], "project-z": ["org"]}


def test_a_stack_starts_only_after_its_dependencies_finished() -> None:
    events: list[str] = []
    lock = threading.Lock()

    def run(stack: str) -> bool:
        with lock:
            events.append(f"start {stack}")
        with lock:
            events.append(f"end {stack}")
        return True

    outcomes = run_in_dependency_order(list(DEPS), DEPS, run, succeeded=bool, parallelism=3)
    assert outcomes == dict.fromkeys(DEPS, True)
    for stack, deps in DEPS.items():
        for dep in deps:
            assert events.index(f"end {dep}") < events.index(f"start {stack}"), (dep, stack, events)


def test_independent_stacks_run_side_by_side() -> None:
    both = threading.Barrier(2, timeout=10)  # breaks (and fails the run) unless two run at once

    def run(stack: str) -> str:
        if stack.startswith("cluster-"):
            both.wait()
        return stack

    outcomes = run_in_dependency_order(["org", "cluster-a", "cluster-b"], DEPS, run, succeeded=bool, parallelism=2)
    assert outcomes == {"org": "org", "cluster-a": "cluster-a", "cluster-b": "cluster-b"}


def test_never_more_than_parallelism_at_once() -> None:
    active, peak = 0, 0
    lock = threading.Lock()

    def run(stack: str) -> bool:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        threading.Event().wait(0.01)
        with lock:
            active -= 1
        return True

    stacks = [f"project-{i}" for i in range(12)]
    run_in_dependency_order(stacks, {}, run, succeeded=bool, parallelism=3)
    assert 1 <= peak <= 3


def test_a_failure_blocks_its_dependents_only() -> None:
    ran: list[str] = []

    def run(stack: str) -> bool:
        ran.append(stack)
        return stack != "cluster-a"

    started: list[str] = []
    finished: dict[str, object] = {}
    outcomes = run_in_dependency_order(list(DEPS), DEPS, run, succeeded=bool, parallelism=1,
                                       on_start=started.append, on_done=finished.__setitem__)
    assert outcomes["cluster-a"] is False
    assert outcomes["project-x"] == Blocked("project-x", "cluster-a")
    assert "project-x" not in ran and started == ran
    assert {s: outcomes[s] for s in ("org", "cluster-b", "project-y", "project-z")} == dict.fromkeys(
        ("org", "cluster-b", "project-y", "project-z"), True)
    assert finished == outcomes


def test_a_failed_root_blocks_everything_below_it_transitively() -> None:
    outcomes = run_in_dependency_order(list(reversed(DEPS)), DEPS, lambda s: s != "org", succeeded=bool,
                                       parallelism=2)
    assert outcomes["org"] is False
    assert outcomes["cluster-a"] == Blocked("cluster-a", "org")
    assert isinstance(outcomes["project-x"], Blocked)


def test_dependencies_outside_the_batch_count_as_done() -> None:
    outcomes = run_in_dependency_order(["project-x"], DEPS, lambda s: True, succeeded=bool, parallelism=1)
    assert outcomes == {"project-x": True}


def test_a_cycle_is_an_error_not_a_hang() -> None:
    with pytest.raises(ValueError, match="dependency cycle"):
        run_in_dependency_order(["a", "b"], {"a": ["b"], "b": ["a"]}, lambda s: True, succeeded=bool, parallelism=2)


def test_an_unexpected_exception_reaches_the_caller() -> None:
    def run(stack: str) -> bool:
        raise RuntimeError(f"crash in {stack}")

    with pytest.raises(RuntimeError, match="crash in org"):
        run_in_dependency_order(["org"], DEPS, run, succeeded=bool, parallelism=2)
