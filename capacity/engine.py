"""The event-driven simulator: jobs arrive, wait in their team's queue, are admitted as whole
gangs when quota allows, may be preempted and requeued, and finish. Deterministic: integer
time and GPUs, every tie broken by job order, no wall clock, no iteration over unordered sets.

Each instant (all events at one time) runs one scheduling pass: admit every job that fits in
queue order (lowest share or non-borrowing first across teams), then let blocked jobs preempt,
and repeat while preemption changed something. Only instance types where something changed are
looked at, so the cost of a pass follows the activity, not the backlog.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence

from capacity.invariants import InvariantViolation, violations
from capacity.ledger import Ledger
from capacity.pending import Entry, PendingQueue
from capacity.placement import Placed, Placement
from capacity.preemption import Request, select_victims
from capacity.queue_index import FitIndex, WakeIndex
from capacity.recorder import Recorder
from capacity.results import ClusterResult
from capacity.spec import ClusterCapacity, Job, SimulationSettings

Candidate = tuple[tuple[int, float, int, int, int], int, int]
"""(order key, queue, gang size): the order key ends with the job's queue entry, so it is unique."""


class SimulationError(Exception):
    """The cluster description cannot be simulated (a user error, with the reasons)."""


def simulate(capacity: ClusterCapacity, jobs: Sequence[Job],
             settings: SimulationSettings | None = None) -> ClusterResult:
    """Replay `jobs` (any order) on `capacity` and measure what every team experienced."""
    problems = capacity.problems()
    if problems:
        raise SimulationError(f"cluster {capacity.name}: " + "; ".join(problems))
    return _Engine(capacity, jobs, settings or SimulationSettings()).run()


def _trace_order(job: Job) -> tuple[int, str, str, str, int, int, str, str]:
    """Submit time, then id; the other fields only matter when a caller reuses ids."""
    return (job.submit, job.id, job.team, job.instance_type, job.gpus, job.duration, job.priority, job.cluster or "")


class _Engine:
    select_victims = staticmethod(select_victims)
    """Kueue's victim selection (a seam for the reference engine of the tests)."""

    def __init__(self, capacity: ClusterCapacity, jobs: Sequence[Job], settings: SimulationSettings) -> None:
        self.settings = settings
        self.fair = capacity.fair_share
        self.led = led = Ledger(capacity)
        self.placements: list[Placement | None] = [
            Placement(instances=led.phys_cap[r] // per, slices_per_instance=per)
            if (per := capacity.slices_per_instance.get(name)) else None
            for r, name in enumerate(led.type_names)]
        """Per resource: the free slices per instance of a partition resource, None for whole GPUs."""
        self.placed: dict[int, Placed] = {}
        weights = sorted({pc.weight for pc in capacity.priority_classes})
        self.rank_of_weight = {w: n for n, w in enumerate(weights)}
        weight_of = {pc.name: pc.weight for pc in capacity.priority_classes}
        lowest = weights[0]
        self.jobs: list[Job] = []
        self.q_of: list[int] = []
        self.gpus: list[int] = []
        self.weight: list[int] = []
        self.rank: list[int] = []
        self.pods: list[int] = []
        unroutable: list[Job] = []
        for job in sorted(jobs, key=_trace_order):
            team = led.team_index.get(job.team)
            itype = led.type_index.get(job.instance_type)
            if team is None or itype is None or job.gpus <= 0 or job.duration <= 0 or (
                    self.placements[itype] is not None and (job.pods <= 0 or job.gpus % job.pods)):
                unroutable.append(job)
                continue
            self.pods.append(job.pods if self.placements[itype] is not None else 1)
            self.jobs.append(job)
            self.q_of.append(team * led.types + itype)
            self.gpus.append(job.gpus)
            w = weight_of.get(job.priority, lowest)
            self.weight.append(w)
            self.rank.append(self.rank_of_weight[w])
        for r in range(led.types):
            led.largest_gang[r] = max((g for g, q in zip(self.gpus, self.q_of, strict=True) if q % led.types == r),
                                      default=0)
        self.rec = Recorder(capacity=capacity, ledger=led, jobs=self.jobs, q_of=self.q_of, settings=settings)
        for job in unroutable:
            self.rec.unroutable(job)
        n = len(self.jobs)
        self.remaining = [j.duration for j in self.jobs]
        self.run_start = [0] * n
        self.admitted_at = [0] * n
        self.epoch = [0] * n
        queues = len(led.nominal)
        self.pending = [PendingQueue() for _ in range(queues)]
        self.pending_by_type: list[dict[int, None]] = [{} for _ in range(led.types)]
        self.pending_rank = [[0] * len(weights) for _ in range(queues)]
        self.running: list[dict[int, None]] = [{} for _ in range(queues)]
        self.running_rank = [[0] * len(weights) for _ in range(queues)]
        self.victim_order_cache: list[list[int] | None] = [None] * queues
        """Each queue's running jobs in victim order, dropped whenever the queue's running jobs change:
        victim selection asks for the same borrowers' order many times while they stay the same."""
        self.finishes: list[tuple[int, int, int]] = []  # (time, job, epoch)
        self.dirty_types = [False] * led.types
        self.dirty_queues: dict[int, None] = {}
        self.version = [0] * queues  # bumped on every change of a queue's own jobs
        self.memo: list[tuple[int, int, float] | None] = [None] * queues
        self.fits = FitIndex(led)
        self.wake = WakeIndex(led)

    # -- the event loop -------------------------------------------------------------------------

    def run(self) -> ClusterResult:
        jobs, finishes, n, epochs = self.jobs, self.finishes, len(self.jobs), self.epoch
        submits = [job.submit for job in jobs]
        advance, settled, finish, submit, schedule = (self.rec.advance, self.rec.settled, self._finish, self._submit,
                                                      self._schedule)
        check = self.settings.check_invariants
        heappop = heapq.heappop
        nxt = 0
        now = 0
        while nxt < n or finishes:
            finishing_first = finishes and (nxt >= n or finishes[0][0] <= submits[nxt])
            now = finishes[0][0] if finishing_first else submits[nxt]
            advance(now)
            while finishes and finishes[0][0] == now:
                _, j, epoch = heappop(finishes)
                if epoch == epochs[j]:
                    finish(j, now)
            while nxt < n and submits[nxt] == now:
                submit(nxt, now)
                nxt += 1
            schedule(now)
            settled(now)
            if check:
                self._check(now)
        return self.rec.result(end=now, pending=[j for q in self.pending for b in q.buckets.values() for _, _, j in b])

    def _check(self, now: int) -> None:
        found = violations(led=self.led, running=self.running, pending=self.pending, gpus=self.gpus, now=now,
                           partitioned=[p is not None for p in self.placements])
        if found:
            raise InvariantViolation("; ".join(found))

    def _submit(self, j: int, now: int) -> None:
        q = self.q_of[j]
        self.rec.submitted(j, q=q, fits_guarantee=self.led.usage[q] + self.gpus[j] <= self.led.nominal[q])
        if self.gpus[j] > min(self.led.limit[q], self.led.phys_cap[q % self.led.types]):
            return  # larger than the team may ever hold: Kueue keeps it inadmissible for good
        placement = self.placements[q % self.led.types]
        if placement is not None and self.gpus[j] // self.pods[j] > placement.slices_per_instance:
            return  # a pod larger than one instance's slices can never be placed
        self._enqueue(j, now)
        self.dirty_queues[q] = None

    def _enqueue(self, j: int, now: int) -> None:
        q = self.q_of[j]
        self._changed(q)
        self.pending[q].push((-self.weight[j], now, j), self.gpus[j])
        self.pending_rank[q][self.rank[j]] += 1
        self.pending_by_type[q % self.led.types][q] = None
        self.fits.update(q, self.pending[q])

    def _dequeue(self, q: int, size: int, entry: Entry | None = None) -> int:
        """Take the first queued job of gang `size` (or `entry`, which a partition resource's
        placement may have chosen over the first)."""
        self._changed(q)
        if entry is not None and self.placements[q % self.led.types] is not None:
            self.pending[q].remove(entry, size)
            j = entry[2]
        else:
            _, _, j = self.pending[q].pop(size)
        self.pending_rank[q][self.rank[j]] -= 1
        if not self.pending[q].count:
            del self.pending_by_type[q % self.led.types][q]
        return j  # the fit index is updated by `_start`, which always follows

    def _changed(self, q: int) -> None:
        """Queue `q`'s own jobs (queued or running) change: its preemption memo no longer holds."""
        self.version[q] += 1
        self.wake.changed(q)

    def _start(self, j: int, now: int) -> None:
        q, g = self.q_of[j], self.gpus[j]
        self.rec.admitted(j, q=q, now=now, within_guarantee=self.led.usage[q] + g <= self.led.nominal[q])
        self.rec.accrue(q, now)
        self.led.add(q, g)
        placement = self.placements[q % self.led.types]
        if placement is not None:
            self.placed[j] = placement.place(pods=self.pods[j], per_pod=g // self.pods[j])
        self.fits.update(q, self.pending[q])
        self.running[q][j] = None
        self.victim_order_cache[q] = None
        self.running_rank[q][self.rank[j]] += g
        self.run_start[j] = self.admitted_at[j] = now
        self.epoch[j] += 1
        heapq.heappush(self.finishes, (now + self.remaining[j], j, self.epoch[j]))

    def _release(self, j: int, now: int) -> None:
        q, g = self.q_of[j], self.gpus[j]
        self.rec.accrue(q, now)
        self.led.add(q, -g)
        placement = self.placements[q % self.led.types]
        if placement is not None:
            placement.release(self.placed.pop(j))
        self._changed(q)
        self.fits.update(q, self.pending[q])
        del self.running[q][j]
        self.victim_order_cache[q] = None
        self.running_rank[q][self.rank[j]] -= g
        self.dirty_types[q % self.led.types] = True

    def _finish(self, j: int, now: int) -> None:
        self._release(j, now)
        self.rec.finished(j, now=now)

    def _evict(self, j: int, now: int, *, by_queue: int) -> None:
        self._release(j, now)
        self.epoch[j] += 1
        ran = now - self.run_start[j]
        if self.settings.progress == "checkpoint" and self.settings.checkpoint_interval > 0:
            kept = ran // self.settings.checkpoint_interval * self.settings.checkpoint_interval
            self.remaining[j] -= kept
        else:
            kept = 0
            self.remaining[j] = self.jobs[j].duration
        self.rec.preempted(j, by_queue=by_queue, lost_gpu_seconds=(ran - kept) * self.gpus[j], now=now)
        self._enqueue(j, now)  # Kueue requeues by eviction time (requeuingStrategy default)

    # -- one scheduling pass per instant ---------------------------------------------------------

    def _schedule(self, now: int) -> None:
        touched = list(self.dirty_types)
        for q in self.dirty_queues:
            touched[q % self.led.types] = True
        for _ in range(self.settings.max_rounds_per_instant):
            self._admit_fitting(now, touched)
            self.dirty_types = [False] * self.led.types
            self.dirty_queues = {}
            if not self._preempt(now, touched):
                return
            touched = list(self.dirty_types)
        # Preemptions kept enabling each other: stop for this instant (counted, so tests and users see it).
        self.rec.cutoff()
        self._admit_fitting(now, touched)
        self.dirty_types = [False] * self.led.types
        self.dirty_queues = {}

    def _admit_fitting(self, now: int, touched: list[bool]) -> None:
        heap: list[Candidate] = []
        types, pending = self.led.types, self.pending
        for r, dirty in enumerate(self.dirty_types):
            if dirty and self.pending_by_type[r]:
                for q in self._admissible(r):
                    self._offer(heap, q)
        for q in self.dirty_queues:
            if not self.dirty_types[q % types] and pending[q].count:
                self._offer(heap, q)
        while heap:
            cand = heapq.heappop(heap)
            q = cand[1]
            now_best = self._candidate(q)
            if now_best is None:
                continue
            if now_best != cand:  # the queue's best fit got worse since it was offered
                heapq.heappush(heap, now_best)
                continue
            key = cand[0]
            self._start(self._dequeue(q, cand[2], (key[2], key[3], key[4])), now)
            touched[q % types] = True
            self._offer(heap, q)

    def _admissible(self, r: int) -> list[int]:
        """The queues of type `r` with a queued job that fits now (any order: the heap orders them)."""
        led = self.led
        free = led.phys_cap[r] - led.phys_used[r]
        pool_free = min(free, led.pool_cap[r] - led.pool_used[r])
        return [*self.fits.fitting(r, room=pool_free, lends=True), *self.fits.fitting(r, room=free, lends=False)]

    def _offer(self, heap: list[Candidate], q: int) -> None:
        cand = self._candidate(q)
        if cand is not None:
            heapq.heappush(heap, cand)

    def _candidate(self, q: int) -> Candidate | None:
        pq = self.pending[q]
        if not pq.count:
            return None
        led = self.led
        r = q % led.types
        room = min(led.limit[q] - led.usage[q], led.phys_cap[r] - led.phys_used[r])
        if led.lends[q // led.types]:
            room = min(room, led.pool_cap[r] - led.pool_used[r])  # Ledger.headroom, inlined (hot)
        if pq.sizes[0] > room:
            return None
        found = pq.best_fitting(room) if self.placements[r] is None else self._best_placeable(q, room)
        if found is None:
            return None
        entry, size = found
        return self._key(q, entry, size), q, size

    def _best_placeable(self, q: int, room: int) -> tuple[Entry, int] | None:
        """On a partition resource: the first queued job in queue order whose gang fits in `room`
        slices AND whose pods find instances with enough free slices (a scan of the queue: partition
        resources are few and their queues short next to the whole-GPU fast path)."""
        placement = self.placements[q % self.led.types]
        assert placement is not None
        pq = self.pending[q]
        fitting = sorted((entry, size) for size in pq.sizes if size <= room for entry in pq.buckets[size])
        for entry, size in fitting:
            pods = self.pods[entry[2]]
            if placement.fits(pods=pods, per_pod=size // pods):
                return entry, size
        return None

    def _key(self, q: int, entry: Entry, size: int) -> tuple[int, float, int, int, int]:
        """Kueue's admission order (scheduler.go): jobs that need no borrowing of the instance type
        they ask for first (classicalIterator; with fair sharing FairSharingPrioritizeNonBorrowing,
        on by default), then, with fair sharing, the lowest dominant share after admission
        (fair_sharing_iterator.go), then priority and queue time (in the entry)."""
        led = self.led
        after = led.usage[q] + size
        borrows = 1 if after > led.nominal[q] else 0
        share = led.share_if(q, after) if self.fair else 0.0
        return borrows, share, entry[0], entry[1], entry[2]

    def _preempt(self, now: int, touched: list[bool]) -> bool:
        proposals: list[Candidate] = []
        led, types, memo, version = self.led, self.led.types, self.memo, self.version
        usage, limit, lends = led.usage, led.limit, led.lends
        for r, is_touched in enumerate(touched):
            if not (is_touched and self.pending_by_type[r]):
                continue
            free = led.phys_cap[r] - led.phys_used[r]
            pool_free = min(free, led.pool_cap[r] - led.pool_used[r])
            ranked = led.by_share[r]
            look_at = self._to_look_at(r, free=free, pool_free=pool_free, top_share=-ranked[0][0] if ranked else -1.0)
            if not look_at:
                continue
            top = self._top_borrower_shares(r)
            for q in look_at:
                if not self.pending[q].count:
                    self.wake.drop(q)
                    continue
                team = q // types
                top_share = top[0][0] if top[0][1] != team else top[1][0]
                room = min(limit[q] - usage[q], pool_free if lends[team] else free)
                seen = memo[q]
                # A queue that found nothing to propose stays so until its own jobs change, or the
                # free room or the top borrower's share grows (the test is monotone in each).
                valid = seen is not None and seen[0] == version[q]
                if valid and room <= seen[1] and top_share <= seen[2]:  # type: ignore[index]
                    self.wake.arm(q, room=seen[1], top_share=seen[2])  # type: ignore[index]
                    continue
                proposal = self._proposal(q, top_share, room)
                if proposal is None:
                    memo[q] = (version[q], room, top_share)
                    self.wake.arm(q, room=room, top_share=top_share)
                else:
                    proposals.append(proposal)
                    if valid:
                        self.wake.arm(q, room=seen[1], top_share=seen[2])  # type: ignore[index]
        progressed = False
        for _, q, _ in sorted(proposals):
            progressed = self._preempt_for(q, now, self._top_share_for(q)) or progressed
        return progressed

    def _to_look_at(self, r: int, *, free: int, pool_free: int, top_share: float) -> list[int]:
        """The queues of type `r` whose memo is missing, out of date or maybe exceeded."""
        return self.wake.woken(r, free=free, pool_free=pool_free, top_share=top_share)

    def _top_share_for(self, q: int) -> float:
        top = self._top_borrower_shares(q % self.led.types)
        return top[0][0] if top[0][1] != q // self.led.types else top[1][0]

    def _preempt_for(self, q: int, now: int, top_share: float) -> bool:
        """Try the queue's jobs in queue order (BestEffortFIFO) until preemption admits one."""
        room = self.led.headroom(q)
        for entry, size in self._preemption_heads(q, top_share, room):
            j = entry[2]
            victims = self.select_victims(ledger=self.led, request=Request(q=q, gpus=size, rank=self.rank[j]),
                                          fair_sharing=self.fair, running=self._victim_order,
                                          victim_key=self._victim_key, gpus_of=self.gpus, rank_of=self.rank,
                                          settled=lambda job: self.admitted_at[job] < now)
            if victims is None:
                continue
            placement = self.placements[q % self.led.types]
            if placement is not None and not placement.fits(
                    pods=self.pods[j], per_pod=size // self.pods[j],
                    freeing=[self.placed[v] for v in victims if self.q_of[v] % self.led.types == q % self.led.types]):
                continue  # enough slices by quota, but the victims' slices would not hold its pods
            chosen = self._dequeue(q, size)  # before the evictions requeue anything into this queue
            for v in victims:
                self._evict(v, now, by_queue=q)
            self._start(chosen, now)
            return True
        return False

    def _top_borrower_shares(self, r: int) -> tuple[tuple[float, int], tuple[float, int]]:
        """The two highest type-`r` shares among borrowing teams, ((-1, -1) when missing): a team
        can only preempt for fair share from a team other than itself."""
        ranked = self.led.by_share[r]
        first = (-ranked[0][0], ranked[0][1]) if ranked else (-1.0, -1)
        second = (-ranked[1][0], ranked[1][1]) if len(ranked) > 1 else (-1.0, -1)
        return first, second

    def _proposal(self, q: int, top_share: float, room: int) -> Candidate | None:
        """The first queued job of `q` that preemption might admit (its order key), or None."""
        for entry, size in self._preemption_heads(q, top_share, room):
            return self._key(q, entry, size), q, size
        return None

    def _preemption_heads(self, q: int, top_share: float, room: int) -> Iterator[tuple[Entry, int]]:
        """The first queued job of every gang size, in queue order, that cheap bounds say
        preemption could admit: within the unused guarantee (reclaim), room after evicting the
        team's lower-priority jobs, or a lower share than a borrowing team's (fair sharing)."""
        led, pq = self.led, self.pending[q]
        if not pq.count:
            return
        i = q // led.types
        nominal_room = led.nominal[q] - led.usage[q]
        lower_usage = self._own_lower_usage(q) if led.preempt_own[i] else 0
        could_fair = self.fair and led.borrows[i] and top_share >= 0
        smallest = pq.min_size
        reclaims = nominal_room > 0
        if smallest > nominal_room + lower_usage and smallest > room + lower_usage and not (
                could_fair and led.usage[q] - lower_usage + smallest <= led.limit[q]):
            return
        for entry, size in pq.heads():
            # The team's own lower-priority jobs count in every bound: Kueue evicts them together
            # with other teams' jobs (reclaim) and its share falls with them (fair sharing).
            lower = sum(self.running_rank[q][:self.rank[entry[2]]]) if lower_usage else 0
            if (reclaims and size <= nominal_room + lower) or (lower and room + lower >= size) or (
                    could_fair and led.usage[q] - lower + size <= led.limit[q]
                    and top_share >= led.type_share(q, led.usage[q] + size - lower)):
                yield entry, size

    def _own_lower_usage(self, q: int) -> int:
        """GPUs of the team's running jobs below the priority of its most urgent queued job."""
        ranks = self.pending_rank[q]
        top = len(ranks) - 1
        while not ranks[top]:
            top -= 1
        return sum(self.running_rank[q][:top])

    def _victim_key(self, j: int) -> tuple[int, int, int]:
        return self.rank[j], -self.admitted_at[j], -j

    def _victim_order(self, q: int) -> list[int]:
        cached = self.victim_order_cache[q]
        if cached is None:
            cached = self.victim_order_cache[q] = sorted(self.running[q], key=self._victim_key)
        return cached
