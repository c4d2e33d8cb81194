"""The `Engine` Protocol: what the CLI, the reconciler and the demo need from an engine.

Two engines implement it (`engines.terraform.engine.TerraformEngine`, the real `terraform`
plus the HyperPod and Kubernetes executors; `engines.pulumi.engine.PulumiEngine`, Pulumi's
Automation API), and `engines.factory.build_engine` picks one from the `engine:` setting.
Every method works on many stacks and returns one outcome per stack as a value (a `Plan`,
`Drift` or `ApplyResult`, or a classified `Failure`): nothing raised inside one stack's work
escapes it, so a multi-stack run always reports every stack.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from engines.plan import ApplyResult, DriftOutcome, Plan, PlanOutcome, ResourceChange, StackName

OutcomeT = TypeVar("OutcomeT")
Progress = Callable[[StackName, OutcomeT], None]  # called on the caller's thread as each stack finishes


class Engine(Protocol):
    name: str  # "terraform" | "pulumi": recorded in plans and audit records

    def plan_many(self, stacks: Sequence[StackName], *, destroy: Sequence[StackName] = (),
                  progress: Progress[PlanOutcome] | None = None) -> dict[StackName, PlanOutcome]:
        """Plan `stacks` against live state, and the removal of everything each of `destroy` (stacks
        whose source left the tree) still owns. Outcomes in input order, `stacks` then `destroy`."""
        ...

    def apply_many(self, plans: Sequence[Plan], *, on_start: Callable[[StackName], None] | None = None,
                   on_done: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None) -> list[ApplyResult]:
        """Apply exactly these plans (made by this engine's `plan_many`) in dependency order; a plan
        that changed since it was made is refused. Once `stop` is set no further stack starts (the
        ones running finish) and the rest are refused as not applied. Results in `plans` order."""
        ...

    def refresh_many(self, stacks: Sequence[StackName], *,
                     progress: Progress[DriftOutcome] | None = None) -> dict[StackName, DriftOutcome]:
        """Live state vs each stack's last applied state."""
        ...

    def known_stacks(self) -> list[StackName]:
        """Stacks this engine has state for (applied at some point), to find those that left the tree."""
        ...


@runtime_checkable
class TakesScannedChanges(Protocol):
    """An engine that can show a stack's changes as the live scan decided them
    (`engines.live.scan_plan`, in terraform's addresses) instead of planning the stack: a merge
    request affecting many stacks is planned from one scan. Those plans are for review only."""

    def plan_scanned(self, stacks: Sequence[StackName], *, scanned: Mapping[str, Sequence[ResourceChange]],
                     destroy: Sequence[StackName] = (),
                     progress: Progress[PlanOutcome] | None = None) -> dict[StackName, PlanOutcome]:
        """As `plan_many`, with `scanned`'s stacks taken from the scan (their plans apply refuses)."""
        ...
