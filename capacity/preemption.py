"""Which running jobs to evict so that one pending job fits (Kueue's preemption, see SEMANTICS.md).

Pure decision over the ledger: it returns the victims and changes nothing. It follows Kueue's
pkg/scheduler/preemption/preemption.go, then reduces the victims to a minimal set as Kueue does:
- fair share off (classicalPreemptions): a team strictly under its guarantee may evict jobs of
  teams borrowing this instance type (reclaimWithinCohort: Any, while they still borrow) together
  with its own lower-priority jobs (PreemptTeamTasks: LowerPriority), as long as it ends within
  its guarantee; otherwise only its own lower-priority jobs;
- fair share on (fairPreemptions): one victim at a time from the queue with the highest share of
  this instance type, the preemptor's own queue included; unconditionally while the preemptor
  stays within its guarantee, else by the strategies LessThanOrEqualToFinalShare, then
  LessThanInitialShare.
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

    def fits(self, *, allow_borrowing: bool = True) -> bool:
        """Whether the request fits once the chosen victims are gone; without `allow_borrowing`
        it must also end within its team's guarantee (Kueue's workloadFits)."""
        led, req = self.ledger, self.request
        r = req.q % led.types
        cap = led.limit[req.q] if allow_borrowing else min(led.limit[req.q], led.nominal[req.q])
        if self.usage(req.q) + req.gpus > cap:
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
    """The jobs to evict so that `request` fits, or None when no allowed set makes it fit:
    Kueue's fairPreemptions with fair sharing on, its classicalPreemptions otherwise
    (pkg/scheduler/preemption/preemption.go). Fair sharing only evicts `settled` jobs of other
    teams for fair share (admitted before this instant): without that, jobs of three or more
    teams can keep trading places within one instant."""
    led = ledger
    own: list[int] = []
    if led.preempt_own[request.q // led.types]:
        own = [job for job in running(request.q) if rank_of[job] < request.rank]
    if fair_sharing:
        return _fair_victims(led, request, own=own, running=running, victim_key=victim_key, gpus_of=gpus_of,
                             settled=settled)
    return _classical_victims(led, request, own=own, running=running, victim_key=victim_key, gpus_of=gpus_of)


def _classical_victims(led: Ledger, request: Request, *, own: list[int], running: RunningJobs,
                       victim_key: VictimKey, gpus_of: Sequence[int]) -> list[int] | None:
    """classicalPreemptions with borrowWithinCohort unset (HyperPod sets none): jobs of other
    teams are candidates only while the preemptor is strictly under its guarantee, and only in an
    attempt where it must end within its guarantee; that attempt (other teams' borrowing jobs
    first, then the team's own lower-priority ones) comes before the one with the team's own
    jobs alone, because a flat cohort has no hierarchical-reclaim candidates."""
    i, r = divmod(request.q, led.types)
    others: list[tuple[int, int]] = []
    if led.usage[request.q] < led.nominal[request.q]:
        others = [(qk, job) for _, qk, job in sorted(
            (victim_key(job), qk, job) for qk in _borrowing_queues(led, i, r) for job in running(qk))]
    own_pairs = [(request.q, job) for job in own]
    attempts = [(own_pairs, True)] if not others else [(others + own_pairs, False), (own_pairs, True)]
    for candidates, allow_borrowing in attempts:
        removal = _Removal(led, request, {})
        victims: list[tuple[int, int]] = []
        for qk, job in candidates:
            if qk != request.q and removal.usage(qk) <= led.nominal[qk]:
                continue  # that team stopped borrowing: the rest of its jobs run on its own quota
            victims.append((qk, job))
            removal.take(qk, gpus_of[job])
            if removal.fits(allow_borrowing=allow_borrowing):
                return _fill_back(removal, victims, gpus_of=gpus_of, allow_borrowing=allow_borrowing)
    return None


def _fill_back(removal: _Removal, victims: list[tuple[int, int]], *, gpus_of: Sequence[int],
               allow_borrowing: bool = True) -> list[int]:
    """Kueue's fillBackWorkloads: from the second-to-last victim backwards, keep every job whose
    return still lets the preemptor fit."""
    for n in range(len(victims) - 2, -1, -1):
        q, job = victims[n]
        removal.give_back(q, gpus_of[job])
        if removal.fits(allow_borrowing=allow_borrowing):
            del victims[n]
        else:
            removal.take(q, gpus_of[job])
    return [job for _, job in victims]


def _borrowing_queues(led: Ledger, own_team: int, r: int) -> list[int]:
    return sorted(q for q in led.borrowers[r] if q // led.types != own_team)


def _fair_victims(led: Ledger, request: Request, *, own: list[int], running: RunningJobs, victim_key: VictimKey,
                  gpus_of: Sequence[int], settled: Callable[[int], bool]) -> list[int] | None:
    """fairPreemptions: candidates are the team's own lower-priority jobs and the jobs of teams
    borrowing this instance type; each pick takes from the queue with the highest share (the
    preemptor's own queue counted with the request added, TargetClusterQueueOrdering). A
    preemptor that stays within its guarantee takes its pick unconditionally (reclaim,
    FairSharingPreemptWithinNominal); otherwise the first job passing LessThanOrEqualToFinalShare,
    and, when that fails, LessThanInitialShare once per remaining team (rule S2-b)."""
    own_team, r = divmod(request.q, led.types)
    removal = _Removal(led, request, {})
    if _only_quota_binds(led, request):
        return _own_victims(removal, own, gpus_of=gpus_of)
    within_nominal = led.usage[request.q] + request.gpus <= led.nominal[request.q]
    if not _fair_bound_allows(led, request, own_gpus=sum(gpus_of[job] for job in own), within_nominal=within_nominal):
        return None
    targets: dict[int, list[int]] = {request.q: list(own)} if own else {}
    victims: list[tuple[int, int]] = []
    retry: dict[int, list[int]] = {}
    # Only the queue a victim was just taken from changes its share, so a heap re-keyed for that
    # queue alone gives the same picks as re-ranking every queue (nextTarget) at each step. The
    # borrowers join the heap lazily, highest share first (`Ledger.by_share`): one whose share is
    # below the heap's top cannot be the next target, and untouched, its share is what the ledger
    # ranked it by.
    heap = [(_target_key(removal, qk, jobs, victim_key=victim_key), qk) for qk, jobs in targets.items()]
    ranked, nxt = led.by_share[r], 0
    while not removal.fits():
        while nxt < len(ranked) and (not heap or ranked[nxt][0] <= heap[0][0][0]):
            _, team, qk = ranked[nxt]
            nxt += 1
            jobs = [] if team == own_team else [job for job in running(qk) if within_nominal or settled(job)]
            if jobs:
                targets[qk] = jobs
                heapq.heappush(heap, (_target_key(removal, qk, jobs, victim_key=victim_key), qk))
        if not heap:
            break
        _, target = heapq.heappop(heap)
        if target != request.q and removal.usage(target) <= led.nominal[target]:
            continue  # that team stopped borrowing: pruned
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
    if retry and not removal.fits():  # rule S2-b: one LessThanInitialShare victim per team
        # Each team is looked at once and a victim changes only its own team's share: one sort.
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


def _fair_bound_allows(led: Ledger, request: Request, *, own_gpus: int, within_nominal: bool) -> bool:
    """Whether fairPreemptions could free enough room at all: an upper bound of what each
    borrowing team can give up under the fair-sharing strategies (it stops borrowing after one
    job at most; with LessThanOrEqualToFinalShare its share never falls below the preemptor's
    lowest possible share; LessThanInitialShare takes at most one more job, only from a team
    whose share is above that), plus the team's own lower-priority jobs. When the bound cannot
    make the request fit in the hardware, the pool or the team's quota, the full search would
    fail too (it is the costly case: it walks every borrower's jobs)."""
    q, gpus = request.q, request.gpus
    own_team, r = divmod(q, led.types)
    if led.usage[q] - own_gpus + gpus > led.limit[q]:
        return False
    need_phys = led.phys_used[r] + gpus - led.phys_cap[r] - own_gpus
    lends = led.lends[own_team]
    need_pool = led.pool_used[r] + gpus - led.pool_cap[r] - (own_gpus if lends else 0)
    if need_phys <= 0 and (not lends or need_pool <= 0):
        return True
    largest = led.largest_gang[r]
    own_min = led.type_share(q, led.usage[q] - own_gpus + gpus)
    by_share = not within_nominal and own_min > 0
    for neg_share, team, qk in led.by_share[r]:
        if by_share and -neg_share < own_min:
            break  # this borrower and every later one (lower shares) can give nothing
        if team == own_team:
            continue
        used, nominal = led.usage[qk], led.nominal[qk]
        if not by_share:
            give = used - nominal + largest - 1
        else:  # S1 keeps its share >= the preemptor's lowest (equal shares can stay equal: weight 0
            # makes every borrowing share infinite); LessThanInitialShare takes one more job only
            # from a share above it
            give = used - _lowest_usage_at_share(led, qk, own_min)
            if -neg_share > own_min:
                give += largest
        give = min(give, used, used - nominal + largest - 1)  # every victim is taken while it borrows
        need_phys -= give
        need_pool -= give  # borrowers lend (LendAndBorrow)
        if need_phys <= 0 and (not lends or need_pool <= 0):
            return True
    return False


def _lowest_usage_at_share(led: Ledger, q: int, share: float) -> int:
    """The lowest usage above its guarantee at which queue `q`'s share is still at least `share`
    (> 0), or its current usage when even that is below. The share grows with usage; the guess from
    the share's formula is checked (and searched around) with `type_share` itself, so float
    rounding cannot move the bound."""
    low, high = led.nominal[q] + 1, led.usage[q]
    if led.type_share(q, high) < share:
        return high
    weight, pool = led.weight[q // led.types], led.pool_cap[q % led.types]
    if weight > 0 and pool > 0:
        guess = min(high, max(low, led.nominal[q] + math.ceil(share * pool * weight)))
        if led.type_share(q, guess) >= share and (guess == low or led.type_share(q, guess - 1) < share):
            return guess
    while low < high:
        mid = (low + high) // 2
        if led.type_share(q, mid) >= share:
            high = mid
        else:
            low = mid + 1
    return low


def _only_quota_binds(led: Ledger, request: Request) -> bool:
    """Whether the hardware and the lendable pool have room for the request as they are: then
    only the team's own quota stands in the way, and only the team's own jobs can make room."""
    r = request.q % led.types
    if led.phys_used[r] + request.gpus > led.phys_cap[r]:
        return False
    return not (led.lends[request.q // led.types] and led.pool_used[r] + request.gpus > led.pool_cap[r])


def _own_victims(removal: _Removal, own: Sequence[int], *, gpus_of: Sequence[int]) -> list[int] | None:
    """The victims fairPreemptions ends with when only the team's own quota binds: other teams'
    jobs it may take on the way free nothing the request needs, so fillBackWorkloads returns every
    one of them; the team's own jobs are taken in their order until the request fits."""
    victims: list[tuple[int, int]] = []
    for job in own:
        if removal.fits():
            break
        victims.append((removal.request.q, job))
        removal.take(removal.request.q, gpus_of[job])
    if not removal.fits():
        return None
    return _fill_back(removal, victims, gpus_of=gpus_of)


def _target_key(removal: _Removal, qk: int, jobs: Sequence[int], *,
                victim_key: VictimKey) -> tuple[float, bool, tuple[int, int, int]]:
    """nextTarget's order: the highest share first (the preemptor's own queue with the request
    added); ties go to the queue whose first candidate Kueue orders first (other teams before
    the preemptor's own, then lower priority, then more recent)."""
    own = qk == removal.request.q
    share = removal.share(qk, minus=-removal.request.gpus) if own else removal.share(qk)
    return -share, own, victim_key(jobs[0])


def _first_passing(removal: _Removal, target: int, *, own_share: float, jobs: Sequence[int],
                   gpus_of: Sequence[int]) -> int | None:
    """The first job whose eviction leaves the target's share at least the preemptor's
    (LessThanOrEqualToFinalShare)."""
    led = removal.ledger
    used, nominal = removal.usage(target), led.nominal[target]
    pool, weight = led.pool_cap[target % led.types], led.weight[target // led.types]
    for job in jobs:  # Ledger.type_share inlined (same arithmetic): this loop is the hot spot
        above = used - gpus_of[job] - nominal
        share = 0.0 if above <= 0 or pool <= 0 else (above / pool / weight if weight > 0 else math.inf)
        if own_share <= share:
            return job
    return None
