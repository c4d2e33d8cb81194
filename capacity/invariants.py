"""Invariants the simulator must keep after every instant, checked when
`SimulationSettings.check_invariants` is on (the property tests turn it on; it costs a scan of
every queue per instant, so it is off otherwise)."""

from __future__ import annotations

from collections.abc import Sequence

from capacity.ledger import Ledger
from capacity.pending import PendingQueue


class InvariantViolation(AssertionError):
    """The simulator broke one of its own rules: a bug in hypergov, never a user error."""


def violations(*, led: Ledger, running: Sequence[dict[int, None]], pending: Sequence[PendingQueue],
               gpus: Sequence[int], now: int, partitioned: Sequence[bool] = ()) -> list[str]:
    """Everything wrong at `now`. On a `partitioned` resource a job may wait with guaranteed slices
    unused: they can be scattered over instances too thinly for its pods (fragmentation)."""
    found: list[str] = []
    for r, name in enumerate(led.type_names):
        if led.phys_used[r] > led.phys_cap[r]:
            found.append(f"t={now}: {name}: {led.phys_used[r]} GPUs allocated of {led.phys_cap[r]}")
        if led.pool_used[r] > led.pool_cap[r]:
            found.append(f"t={now}: {name}: lendable pool over-drawn {led.pool_used[r]}/{led.pool_cap[r]}")
    overcommitted = [sum(led.nominal[i * led.types + r] for i in range(len(led.team_names))) > led.phys_cap[r]
                     for r in range(led.types)]
    for q, jobs in enumerate(running):
        team, itype = led.team_names[q // led.types], led.type_names[q % led.types]
        held = sum(gpus[j] for j in jobs)
        if held != led.usage[q]:
            found.append(f"t={now}: {team}/{itype}: running jobs hold {held} GPUs but {led.usage[q]} are accounted")
        if led.usage[q] > led.limit[q]:
            found.append(f"t={now}: {team}/{itype}: uses {led.usage[q]} GPUs, more than its limit {led.limit[q]}")
        unused_guarantee = led.nominal[q] - led.usage[q]
        queue = pending[q]
        fragmentable = bool(partitioned) and partitioned[q % led.types]
        if queue.count and not overcommitted[q % led.types] and not fragmentable and queue.min_size <= unused_guarantee:
            found.append(f"t={now}: {team}/{itype}: a {queue.min_size}-GPU job waits although {unused_guarantee} "
                         "guaranteed GPUs are unused or lent out")
    return found
