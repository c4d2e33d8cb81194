"""The accounting's input: admission spans, each an amount of one kind of one instance type that a
team's workload held on a cluster from `start` to `end` (epoch seconds, UTC)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from usage.resources import ResourceKind


class Span(NamedTuple):
    """One admission attempt's hold on one (instance type, kind): `units` of the kind
    (`usage.resources.UNITS`) from `start` to `end`; `preempted`: the attempt ended evicted by
    preemption, so its hours were lost."""

    team: str
    cluster: str
    instance_type: str
    kind: ResourceKind
    priority_class: str | None
    units: int
    start: int
    end: int
    preempted: bool = False


def epoch_seconds(moment: datetime) -> int:
    """Whole seconds since the epoch of a timezone-aware instant (Kubernetes times have seconds)."""
    if moment.tzinfo is None:
        raise ValueError(f"{moment.isoformat()} has no timezone; give UTC instants")
    return int(moment.timestamp() // 1)


def iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
