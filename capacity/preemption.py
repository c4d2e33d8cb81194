"""Which running jobs to evict so that one pending job fits (Kueue's preemption, see SEMANTICS.md).

Pure decision over the ledger: it returns the victims and changes nothing. Three sources of
victims, tried in this order, then reduced to a minimal set as Kueue does:
1. reclaim: a job that fits in its team's unused guarantee may evict jobs of teams that are
   borrowing this instance type (reclaimWithinCohort: Any), only while they still borrow;
2. within the team: jobs of the same team with a lower priority (PreemptTeamTasks: LowerPriority);
3. fair sharing: a job that would borrow may evict jobs of teams with a higher share of this
   instance type (strategies LessThanOrEqualToFinalShare, then LessThanInitialShare).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from capacity.ledger import Ledger


@dataclass(frozen=True, slots=True)
class Request:
    """The pending job that wants to run: its queue, gang size and priority rank."""

    q: int
    gpus: int
    rank: int


@dataclass(slots=True)
class _Removal:
    """What-if bookkeeping: GPUs the chosen victims would free, per queue and in total."""

    ledger: Ledger
    request: Request
    per_queue: dict[int, int]
    pool: int = 0
    phys: int = 0

    def take(self, q: int, gpus: int) -> None:
        self.per_queue[q] = self.per_queue.get(q, 0) + gpus
        self.phys += gpus
        if self.ledger.lends[q // self.ledger.types]:
            self.pool += gpus

    def give_back(self, q: int, gpus: int) -> None:
        self.take(q, -gpus)

    def usage(self, q: int) -> int:
        return self.ledger.usage[q] - self.per_queue.get(q, 0)

    def fits(self) -> bool:
        led, req = self.ledger, self.request
        r = req.q % led.types
        if self.usage(req.q) + req.gpus > led.limit[req.q]:
            return False
        if led.phys_used[r] - self.phys + req.gpus > led.phys_cap[r]:
            return False
        return not (led.lends[req.q // led.types] and led.pool_used[r] - self.pool + req.gpus > led.pool_cap[r])

    def share(self, q: int, *, minus: int = 0) -> float:
        return self.ledger.type_share(q, self.usage(q) - minus)


RunningJobs = Callable[[int], Sequence[int]]
"""The running jobs of a queue, most preemptible first (lowest priority, then most recently admitted)."""
VictimKey = Callable[[int], tuple[int, int, int]]
"""The same order as a sort key of one job, to merge the candidates of several queues."""


def select_victims(*, ledger: Ledger, request: Request, fair_sharing: bool, running: RunningJobs,
                   victim_key: VictimKey, gpus_of: Sequence[int], rank_of: Sequence[int],
                   settled: Callable[[int], bool]) -> list[int] | None:
    """The jobs to evict so that `request` fits, or None when no allowed set makes it fit.
    Fair sharing only evicts `settled` jobs (admitted before this instant): without that, jobs
    of three or more teams can keep trading places within one instant."""
    led = ledger
    i, r = divmod(request.q, led.types)
    removal = _Removal(led, request, {})
    victims: list[tuple[int, int]] = []  # (queue, job)
    within_guarantee = led.usage[request.q] + request.gpus <= led.nominal[request.q]
    if within_guarantee:
        candidates = sorted((victim_key(job), qk, job) for qk in _borrowing_queues(led, i, r) for job in running(qk))
        for _, qk, job in candidates:
            if removal.fits():
                break
            if removal.usage(qk) <= led.nominal[qk]:
                continue  # that team stopped borrowing: the rest of its jobs run on its own quota
            victims.append((qk, job))
            removal.take(qk, gpus_of[job])
    if not removal.fits() and led.preempt_own[i]:
        for job in running(request.q):
            if removal.fits():
                break
            if rank_of[job] < request.rank:
                victims.append((request.q, job))
                removal.take(request.q, gpus_of[job])
    if not removal.fits() and fair_sharing and not within_guarantee and led.borrows[i]:
        _fair_share_victims(removal, victims, running=lambda q: [j for j in running(q) if settled(j)],
                            gpus_of=gpus_of)
    if not removal.fits():
        return None
    for q, job in reversed(list(victims)):  # Kueue's last step: drop victims that are not needed
        removal.give_back(q, gpus_of[job])
        if removal.fits():
            victims.remove((q, job))
        else:
            removal.take(q, gpus_of[job])
    return [job for _, job in victims]


def _borrowing_queues(led: Ledger, own_team: int, r: int) -> list[int]:
    return sorted(q for q in led.borrowers[r] if q // led.types != own_team)


def _fair_share_victims(removal: _Removal, victims: list[tuple[int, int]], *, running: RunningJobs,
                        gpus_of: Sequence[int]) -> None:
    """Kueue's FindFairPreemptionTargets: per strategy, repeatedly take one allowed job from the
    borrowing team with the highest share, until the request fits."""
    led, req = removal.ledger, removal.request
    own_team, r = divmod(req.q, led.types)
    own_share = led.type_share(req.q, removal.usage(req.q) + req.gpus)
    chosen = {job for _, job in victims}
    remaining: dict[int, list[int]] = {}
    for strategy in ("LessThanOrEqualToFinalShare", "LessThanInitialShare"):
        heap = [(-removal.share(qk), qk) for qk in sorted(led.borrowers[r])
                if qk // led.types != own_team and removal.usage(qk) > led.nominal[qk]]
        heapq.heapify(heap)  # highest share first, then the lowest team index
        while heap and not removal.fits():
            _, target = heapq.heappop(heap)
            if target not in remaining:
                remaining[target] = [job for job in running(target) if job not in chosen]
            jobs = remaining[target]
            victim = _first_allowed(removal, target, strategy=strategy, own_share=own_share, jobs=jobs,
                                    gpus_of=gpus_of)
            if victim is None:
                continue  # nothing of this team qualifies under this strategy
            victims.append((target, victim))  # one victim per pick, then the highest share again
            chosen.add(victim)
            jobs.remove(victim)
            removal.take(target, gpus_of[victim])
            if removal.usage(target) > led.nominal[target]:
                heapq.heappush(heap, (-removal.share(target), target))


def _first_allowed(removal: _Removal, target: int, *, strategy: str, own_share: float, jobs: Sequence[int],
                   gpus_of: Sequence[int]) -> int | None:
    if strategy == "LessThanInitialShare":
        return jobs[0] if jobs and own_share < removal.share(target) else None
    led = removal.ledger
    used, nominal = removal.usage(target), led.nominal[target]
    pool, weight = led.pool_cap[target % led.types], led.weight[target // led.types]
    for job in jobs:  # Ledger.type_share inlined (same arithmetic): this loop is the hot spot
        above = used - gpus_of[job] - nominal
        share = 0.0 if above <= 0 or pool <= 0 else (above / pool / weight if weight > 0 else math.inf)
        if own_share <= share:
            return job
    return None
