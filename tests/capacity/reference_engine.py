"""The simulator as it was before its indexes (issue 15): every scheduling pass scans every pending
queue of a touched instance type, the top borrowers are found by a scan, and fair-share victim
selection builds every borrower's candidates before it picks. Slow, plainly right; the tests
compare the indexed engine with it."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from capacity.engine import _Engine
from capacity.ledger import Ledger
from capacity.preemption import (
    Request,
    RunningJobs,
    VictimKey,
    _borrowing_queues,
    _classical_victims,
    _fill_back,
    _first_passing,
    _Removal,
    _target_key,
)
from capacity.results import ClusterResult
from capacity.spec import ClusterCapacity, Job, SimulationSettings


def reference_simulate(capacity: ClusterCapacity, jobs: Sequence[Job],
                       settings: SimulationSettings | None = None) -> ClusterResult:
    return _ScanningEngine(capacity, jobs, settings or SimulationSettings()).run()


def _eager_select_victims(*, ledger: Ledger, request: Request, fair_sharing: bool, running: RunningJobs,
                          victim_key: VictimKey, gpus_of: Sequence[int], rank_of: Sequence[int],
                          settled: Callable[[int], bool]) -> list[int] | None:
    own: list[int] = []
    if ledger.preempt_own[request.q // ledger.types]:
        own = [job for job in running(request.q) if rank_of[job] < request.rank]
    if fair_sharing:
        return _eager_fair_victims(ledger, request, own=own, running=running, victim_key=victim_key,
                                   gpus_of=gpus_of, settled=settled)
    return _classical_victims(ledger, request, own=own, running=running, victim_key=victim_key, gpus_of=gpus_of)


def _eager_fair_victims(led: Ledger, request: Request, *, own: list[int], running: RunningJobs,
                        victim_key: VictimKey, gpus_of: Sequence[int],
                        settled: Callable[[int], bool]) -> list[int] | None:
    """Kueue's fairPreemptions with every target ranked up front (no bound, no shortcut)."""
    own_team, r = divmod(request.q, led.types)
    removal = _Removal(led, request, {})
    within_nominal = led.usage[request.q] + request.gpus <= led.nominal[request.q]
    targets: dict[int, list[int]] = {request.q: list(own)} if own else {}
    for qk in _borrowing_queues(led, own_team, r):
        jobs = [job for job in running(qk) if within_nominal or settled(job)]
        if jobs:
            targets[qk] = jobs
    victims: list[tuple[int, int]] = []
    retry: dict[int, list[int]] = {}
    heap = [(_target_key(removal, qk, jobs, victim_key=victim_key), qk) for qk, jobs in targets.items()]
    heapq.heapify(heap)
    while heap and not removal.fits():
        _, target = heapq.heappop(heap)
        if target != request.q and removal.usage(target) <= led.nominal[target]:
            continue
        jobs = targets[target]
        if target == request.q or within_nominal:
            victim: int | None = jobs.pop(0)
        else:
            own_share = removal.share(request.q, minus=-request.gpus)
            victim = _first_passing(removal, target, own_share=own_share, jobs=jobs, gpus_of=gpus_of)
            failed = jobs[:] if victim is None else jobs[:jobs.index(victim)]
            if failed:
                retry.setdefault(target, []).extend(failed)
            del jobs[:len(failed) + (victim is not None)]
        if victim is not None:
            victims.append((target, victim))
            removal.take(target, gpus_of[victim])
        if jobs:
            heapq.heappush(heap, (_target_key(removal, target, jobs, victim_key=victim_key), target))
    if retry and not removal.fits():
        for _, target in sorted((_target_key(removal, qk, jobs, victim_key=victim_key), qk)
                                for qk, jobs in retry.items()):
            if removal.fits():
                break
            if removal.usage(target) <= led.nominal[target]:
                continue
            if removal.share(request.q, minus=-request.gpus) < removal.share(target):
                victims.append((target, retry[target][0]))
                removal.take(target, gpus_of[retry[target][0]])
    if not removal.fits():
        return None
    return _fill_back(removal, victims, gpus_of=gpus_of)


class _ScanningEngine(_Engine):
    select_victims = staticmethod(_eager_select_victims)

    def _admissible(self, r: int) -> list[int]:
        led = self.led
        free = led.phys_cap[r] - led.phys_used[r]
        pool_free = min(free, led.pool_cap[r] - led.pool_used[r])
        return [q for q in self.pending_by_type[r]
                if self.pending[q].sizes[0] <= min(led.limit[q] - led.usage[q],
                                                   pool_free if led.lends[q // led.types] else free)]

    def _to_look_at(self, r: int, *, free: int, pool_free: int, top_share: float) -> list[int]:
        return list(self.pending_by_type[r])

    def _top_borrower_shares(self, r: int) -> tuple[tuple[float, int], tuple[float, int]]:
        led = self.led
        first = second = (-1.0, -1)
        for q in led.borrowers[r]:
            entry = (led.type_share(q, led.usage[q]), q // led.types)
            if entry[0] > first[0] or (entry[0] == first[0] and entry[1] < first[1]):
                first, second = entry, first
            elif entry[0] > second[0] or (entry[0] == second[0] and entry[1] < second[1]):
                second = entry
        return first, second
