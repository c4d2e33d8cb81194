"""A team's pending jobs of one instance type, ordered as Kueue's BestEffortFIFO orders them
(priority, then queue time), and bucketed by gang size so that "the best job that fits in N GPUs"
costs one look per distinct size instead of a scan of the whole queue."""

from __future__ import annotations

import heapq
from bisect import insort

Entry = tuple[int, int, int]
"""(-priority weight, queued-at seconds, job index): smaller is served first."""


class PendingQueue:
    __slots__ = ("buckets", "count", "sizes")

    def __init__(self) -> None:
        self.buckets: dict[int, list[Entry]] = {}
        self.sizes: list[int] = []  # ascending sizes with at least one job
        self.count = 0

    def push(self, entry: Entry, size: int) -> None:
        bucket = self.buckets.get(size)
        if bucket is None:
            bucket = self.buckets[size] = []
            insort(self.sizes, size)
        heapq.heappush(bucket, entry)
        self.count += 1

    def pop(self, size: int) -> Entry:
        bucket = self.buckets[size]
        entry = heapq.heappop(bucket)
        if not bucket:
            del self.buckets[size]
            self.sizes.remove(size)
        self.count -= 1
        return entry

    def remove(self, entry: Entry, size: int) -> None:
        """Take `entry` out of the queue wherever it is in its bucket (a linear cost: only partition
        resources, whose placement may pass over the bucket's first job, need it)."""
        bucket = self.buckets[size]
        bucket.remove(entry)
        heapq.heapify(bucket)
        if not bucket:
            del self.buckets[size]
            self.sizes.remove(size)
        self.count -= 1

    @property
    def min_size(self) -> int:
        return self.sizes[0]

    def best_fitting(self, room: int) -> tuple[Entry, int] | None:
        """The first job in queue order whose gang fits in `room` GPUs, with its size."""
        best: Entry | None = None
        best_size = 0
        for size in self.sizes:
            if size > room:
                break
            head = self.buckets[size][0]
            if best is None or head < best:
                best, best_size = head, size
        return None if best is None else (best, best_size)

    def heads(self) -> list[tuple[Entry, int]]:
        """The first job of every size, in queue order (the candidates worth a preemption attempt)."""
        return sorted((self.buckets[size][0], size) for size in self.sizes)

    def head_of(self, size: int) -> Entry | None:
        bucket = self.buckets.get(size)
        return bucket[0] if bucket else None
