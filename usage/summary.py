"""A period's usage summed per team and per pool: what the warehouse's queries answer
(`usage.warehouse`) and what the chargeback and the reports read. Hours of the pool's kind
(GPU-, Neuron-device-, NeuronCore- or vCPU-hours) over the period's covered intervals only: a
missing interval adds nothing here and is counted in `missing_intervals`, never read as zero use.
"""

from __future__ import annotations

from typing import NamedTuple

from usage.resources import ResourceKind


class TeamUsage(NamedTuple):
    """One team's hours on one pool (cluster x instance type x kind) over a period.
    Per SEMANTICS.md: own + borrowed = used; own + lent + idle_guarantee = the guarantee's hours."""

    team: str
    cluster: str
    instance_type: str
    kind: ResourceKind
    used: float
    own: float
    borrowed: float
    lent: float
    idle_guarantee: float
    lost_to_preemption: float


class PoolUsage(NamedTuple):
    """One pool over a period: its capacity's hours in covered intervals, what all teams used, what
    was borrowed from capacity nobody is guaranteed, and how many intervals were (not) covered.
    The capacity's hours nobody used nor was guaranteed: `unguaranteed_idle`."""

    cluster: str
    instance_type: str
    kind: ResourceKind
    capacity_hours: float
    guaranteed_hours: float
    used: float
    from_nobody: float
    intervals: int
    missing_intervals: int

    @property
    def unguaranteed_idle(self) -> float:
        return max(0.0, self.capacity_hours - self.guaranteed_hours - self.from_nobody)


class MissingPeriod(NamedTuple):
    """A run of consecutive intervals of a cluster whose usage was not collected completely
    (epoch seconds, [start, end))."""

    cluster: str
    start: int
    end: int


class TeamDay(NamedTuple):
    """One team's hours on one pool during one UTC day (`day_start`, epoch seconds), for charts:
    `guarantee` is the guarantee's hours in the day's covered intervals; figures cover only those."""

    team: str
    cluster: str
    instance_type: str
    kind: ResourceKind
    day_start: int
    used: float
    own: float
    borrowed: float
    lent: float
    idle_guarantee: float
    guarantee: float
    missing_intervals: int


class UsagePeriod(NamedTuple):
    """Everything a report of [start, end) shows: per team and pool sums, per team and day series,
    and the missing periods of each cluster. Filters (team, cluster) were applied by the query."""

    start: int
    end: int
    teams: list[TeamUsage]
    pools: list[PoolUsage]
    days: list[TeamDay]
    missing: list[MissingPeriod]
