"""Indexes that let each scheduling pass find the few queues worth looking at without a scan of
every pending queue: with 500 teams and long queues, those scans were most of the simulator's
cost, and they grew with the backlog rather than with the events (issue 15).

Both indexes answer exactly the question the full scans answered, so the admissions and
preemptions are the same (tests/capacity/test_engine_reference.py compares them with the scans).
"""

from __future__ import annotations

import heapq
from bisect import insort
from collections.abc import Iterator

from capacity.ledger import Ledger
from capacity.pending import PendingQueue


class FitIndex:
    """Queues whose smallest queued gang fits in their own quota (guarantee + borrow limit - usage),
    per instance type and lending class, bucketed by that gang size. A queue can admit a job now
    exactly when it is here with a size within the free room of its class (the lendable pool for
    lending teams, the free hardware for the others)."""

    __slots__ = ("buckets", "key", "led", "sizes")

    def __init__(self, led: Ledger) -> None:
        self.led = led
        self.key = [0] * len(led.nominal)
        """Each queue's size bucket, 0 when it is in none."""
        self.buckets: list[tuple[dict[int, dict[int, None]], dict[int, dict[int, None]]]] = [
            ({}, {}) for _ in range(led.types)]
        """Per type: (not lending, lending) -> size -> queues (insertion-ordered)."""
        self.sizes: list[tuple[list[int], list[int]]] = [([], []) for _ in range(led.types)]
        """Per type and class: the sizes with a bucket, ascending."""

    def update(self, q: int, queue: PendingQueue) -> None:
        """Re-file queue `q` after its queued jobs or its usage changed."""
        led = self.led
        key = queue.sizes[0] if queue.count and queue.sizes[0] <= led.limit[q] - led.usage[q] else 0
        old = self.key[q]
        if key == old:
            return
        r, lends = q % led.types, led.lends[q // led.types]
        buckets, sizes = self.buckets[r][lends], self.sizes[r][lends]
        if old:
            bucket = buckets[old]
            del bucket[q]
            if not bucket:
                del buckets[old]
                sizes.remove(old)
        if key:
            if key not in buckets:
                buckets[key] = {}
                insort(sizes, key)
            buckets[key][q] = None
        self.key[q] = key

    def fitting(self, r: int, *, room: int, lends: bool) -> Iterator[int]:
        """Queues of type `r` and the lending class `lends` that have a job of at most `room` GPUs
        their quota allows."""
        buckets = self.buckets[r][lends]
        for size in self.sizes[r][lends]:
            if size > room:
                return
            yield from buckets[size]


class WakeIndex:
    """Which queues of an instance type the preemption step must look at: those whose memo (the
    engine's "found nothing to propose with these jobs, this free room and this top borrower
    share") is missing or out of date, and those whose memo the type's free room or top borrower
    share now exceeds. Memoised queues wait in two heaps by the room and the share they saw."""

    __slots__ = ("gen", "led", "room", "stale", "top")

    def __init__(self, led: Ledger) -> None:
        self.led = led
        self.stale: list[dict[int, None]] = [{} for _ in range(led.types)]
        """Queues whose own jobs changed since their memo (or that have none)."""
        self.room: list[tuple[list[tuple[float, int, int]], list[tuple[float, int, int]]]] = [
            ([], []) for _ in range(led.types)]
        """Per type and lending class: heap of (room seen, generation, queue)."""
        self.top: list[list[tuple[float, int, int]]] = [[] for _ in range(led.types)]
        """Per type: heap of (top borrower share seen, generation, queue)."""
        self.gen = [0] * len(led.nominal)
        """A queue's heap entries are live while they carry its current generation."""

    def changed(self, q: int) -> None:
        """Queue `q`'s own jobs changed: its memo no longer holds."""
        self.stale[q % self.led.types][q] = None

    def drop(self, q: int) -> None:
        """Queue `q` has nothing queued: nothing to look at until a job is queued (which marks it
        changed again)."""
        self.stale[q % self.led.types].pop(q, None)

    def arm(self, q: int, *, room: int, top_share: float) -> None:
        """Queue `q` holds a memo of `room` and `top_share` for its current jobs: look at it again
        only when one of them is exceeded. Room above its own quota's slack cannot be reached
        while its jobs stay the same, so such a memo waits on the share alone."""
        led = self.led
        r = q % led.types
        self.stale[r].pop(q, None)
        gen = self.gen[q] = self.gen[q] + 1
        if room < led.limit[q] - led.usage[q]:
            heap = self.room[r][led.lends[q // led.types]]
            heapq.heappush(heap, (room, gen, q))
            if len(heap) > 4 * len(led.team_names) + 64:
                self._compact(heap)
        tops = self.top[r]
        heapq.heappush(tops, (top_share, gen, q))
        if len(tops) > 4 * len(led.team_names) + 64:
            self._compact(tops)

    def woken(self, r: int, *, free: int, pool_free: int, top_share: float) -> list[int]:
        """The queues of type `r` to look at now: the changed ones and the memoised ones whose room
        (`pool_free` for lending teams, `free` for the others) or top share (the type's highest
        borrower share; the engine applies the exact test, excluding the queue's own team) was
        exceeded. The memoised ones leave their heaps: the caller re-arms what it keeps."""
        stale, (plain, lending), tops = self.stale[r], self.room[r], self.top[r]
        if not stale and not (plain and plain[0][0] < free) and not (lending and lending[0][0] < pool_free) and not (
                tops and tops[0][0] < top_share):
            return []
        found = dict(stale)
        for heap, seen_room in ((plain, free), (lending, pool_free)):
            while heap and heap[0][0] < seen_room:
                _, gen, q = heapq.heappop(heap)
                if gen == self.gen[q] and q not in found:
                    found[q] = None
        while tops and tops[0][0] < top_share:
            _, gen, q = heapq.heappop(tops)
            if gen == self.gen[q] and q not in found:
                found[q] = None
        return list(found)

    def _compact(self, heap: list[tuple[float, int, int]]) -> None:
        stale, types, gen = self.stale, self.led.types, self.gen
        heap[:] = [e for e in heap if e[1] == gen[e[2]] and e[2] not in stale[e[2] % types]]
        heapq.heapify(heap)
