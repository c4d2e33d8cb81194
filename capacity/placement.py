"""Where the pods of a job asking for MIG partitions go: each instance of a partitioned resource
has a number of free slices (its GPUs x the profile's partitions per GPU), and every pod's slices
must sit on ONE instance (a pod runs on one node, and MIG devices are a node's devices). So a job
fits only where free slices of its profile exist in pieces large enough for its pods; free slices
scattered over instances may not be usable (fragmentation, SEMANTICS.md R7).

Pure: the decisions (`first_fit`) take the free slices and return the instances to use; the small
`Placement` state only applies them. Pods are placed first-fit (lowest instance index first), the
kube-scheduler's placement is not modelled beyond that (SEMANTICS.md "Simplified")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def first_fit(free: Sequence[int], *, pods: int, per_pod: int) -> list[int] | None:
    """The instance of each pod, first-fit in instance order (several pods may share an instance),
    or None when some pod finds no instance with `per_pod` free slices."""
    left = list(free)
    chosen: list[int] = []
    start = 0
    for _ in range(pods):
        # Earlier instances had less than `per_pod` left for the previous pod: they still have.
        while start < len(left) and left[start] < per_pod:
            start += 1
        if start == len(left):
            return None
        left[start] -= per_pod
        chosen.append(start)
    return chosen


Placed = tuple[int, tuple[int, ...]]
"""A placed job: (slices per pod, the instance of each pod)."""


class Placement:
    """Free slices per instance of one partition resource (one instance type split into one profile)."""

    __slots__ = ("free", "slices_per_instance")

    def __init__(self, *, instances: int, slices_per_instance: int) -> None:
        self.slices_per_instance = slices_per_instance
        self.free = [slices_per_instance] * instances

    def fits(self, *, pods: int, per_pod: int, freeing: Iterable[Placed] = ()) -> bool:
        """Whether the pods could be placed, after releasing the placements in `freeing` (a what-if)."""
        free: Sequence[int] = self.free
        released = list(freeing)
        if released:
            free = _released(self.free, released)
        return first_fit(free, pods=pods, per_pod=per_pod) is not None

    def place(self, *, pods: int, per_pod: int) -> Placed:
        """Take the slices of the pods (the caller checked `fits`)."""
        chosen = first_fit(self.free, pods=pods, per_pod=per_pod)
        if chosen is None:
            raise AssertionError("placement of a job that does not fit")  # a simulator bug
        for instance in chosen:
            self.free[instance] -= per_pod
        return per_pod, tuple(chosen)

    def release(self, placed: Placed) -> None:
        per_pod, instances = placed
        for instance in instances:
            self.free[instance] += per_pod


def _released(free: Sequence[int], placed: Iterable[Placed]) -> list[int]:
    after = list(free)
    for per_pod, instances in placed:
        for instance in instances:
            after[instance] += per_pod
    return after
