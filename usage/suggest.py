"""Guarantee changes proposed from what teams really used (`hypergov capacity suggest`): raise a
team that borrows nearly every day to what it typically uses; lower one whose guarantee mostly
idles to what covers nine days in ten; never guarantee more than a pool holds. The rules are
SEMANTICS.md's "Suggestions" (S1-S5). Pure: per-day usage rows and the current guarantees in,
proposals out; `usage.suggest_tree` writes them into the tree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Literal

from usage.accounting import INTERVAL_SECONDS, SECONDS_PER_HOUR
from usage.resources import ResourceKind
from usage.summary import TeamDay

Unit = Literal["instances", "accelerators"]
ACCELERATOR_KINDS = (ResourceKind.GPU, ResourceKind.NEURON_DEVICE)
DAY_HOURS = 24.0


@dataclass(frozen=True)
class Guarantee:
    """A team's guarantee of one instance type on one cluster, in the unit its tree file uses."""

    team: str
    cluster: str
    instance_type: str
    unit: Unit
    amount: int
    accelerators_per_instance: int

    @property
    def per_unit(self) -> int:
        """Accelerators one unit of the amount is."""
        return self.accelerators_per_instance if self.unit == "instances" else 1

    @property
    def accelerators(self) -> int:
        return self.amount * self.per_unit

    def amount_for(self, accelerators: float) -> int:
        """The least amount in this unit that guarantees `accelerators` (at least one unit, S4)."""
        return max(1, math.ceil(round(accelerators / self.per_unit, 9)))


@dataclass(frozen=True)
class Thresholds:
    borrow_days: float = 0.8  # S1: borrowed on at least this share of the days
    idle_use: float = 0.5  # S2: median daily use of the guarantee below this
    min_days: int = 7  # S5: fewer collected days say too little


@dataclass(frozen=True)
class Evidence:
    """What a proposal rests on: days with data, days borrowed, the median share of the guarantee
    used, and the daily average accelerators in use (median and 90th percentile)."""

    days: int
    borrow_days: int
    median_guarantee_use: float
    median_in_use: float
    p90_in_use: float


@dataclass(frozen=True)
class Proposal:
    guarantee: Guarantee
    proposed: int
    reason: str
    evidence: Evidence

    @property
    def raises(self) -> bool:
        return self.proposed > self.guarantee.amount


def propose(days: Iterable[TeamDay], guarantees: Sequence[Guarantee], capacity: dict[tuple[str, str], int], *,
            thresholds: Thresholds = Thresholds()) -> tuple[list[Proposal], list[str]]:
    """Proposals (lowers first, then raises by need) and notes on what was not proposed and why.
    `capacity`: accelerators per (cluster, instance type)."""
    by_key: dict[tuple[str, str, str], list[TeamDay]] = {}
    for day in days:
        if day.kind in ACCELERATOR_KINDS:
            by_key.setdefault((day.team, day.cluster, day.instance_type), []).append(day)
    notes: list[str] = []
    lowers: list[Proposal] = []
    raises: list[tuple[float, Proposal]] = []
    for guarantee in guarantees:
        evidence, borrowed = _evidence(by_key.get((guarantee.team, guarantee.cluster, guarantee.instance_type), []),
                                       guarantee)
        if evidence.days < thresholds.min_days:
            notes.append(f"{guarantee.team} on {guarantee.cluster} {guarantee.instance_type}: {evidence.days} day(s) "
                         f"of data, fewer than {thresholds.min_days}: nothing proposed")
            continue
        if evidence.borrow_days >= thresholds.borrow_days * evidence.days:
            target = guarantee.amount_for(evidence.median_in_use)
            if target > guarantee.amount:
                raises.append((borrowed, Proposal(guarantee, target, _raise_reason(evidence), evidence)))
        elif evidence.median_guarantee_use < thresholds.idle_use:
            target = guarantee.amount_for(evidence.p90_in_use)
            if target < guarantee.amount:
                lowers.append(Proposal(guarantee, target, _lower_reason(evidence, thresholds), evidence))
    return _within_capacity(lowers, [p for _, p in sorted(raises, key=lambda r: -r[0])], guarantees, capacity,
                            notes)


def _evidence(rows: Sequence[TeamDay], guarantee: Guarantee) -> tuple[Evidence, float]:
    """Per day with at least half of it collected: accelerators in use on average, the share of the
    guarantee used, whether it borrowed (at least one accelerator-hour, S1)."""
    in_use: list[float] = []
    use_of_guarantee: list[float] = []
    borrow_days = 0
    borrowed = 0.0
    for row in rows:
        covered = DAY_HOURS - row.missing_intervals * INTERVAL_SECONDS / SECONDS_PER_HOUR
        if covered < DAY_HOURS / 2:
            continue
        in_use.append(row.used / covered)
        if row.guarantee > 0:
            use_of_guarantee.append(row.own / row.guarantee)
        borrow_days += row.borrowed >= 1.0
        borrowed += row.borrowed
    ordered = sorted(in_use)
    p90 = ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)] if ordered else 0.0
    return Evidence(days=len(in_use), borrow_days=borrow_days,
                    median_guarantee_use=median(use_of_guarantee) if use_of_guarantee else 0.0,
                    median_in_use=median(in_use) if in_use else 0.0, p90_in_use=p90), borrowed


def _within_capacity(lowers: list[Proposal], raises: list[Proposal], guarantees: Sequence[Guarantee],
                     capacity: dict[tuple[str, str], int], notes: list[str]) -> tuple[list[Proposal], list[str]]:
    """S3: a pool never guarantees more than it holds: what lowers free and nobody's capacity go
    to raises in order of the hours borrowed; a raise that no longer fits is cut to what does."""
    held: dict[tuple[str, str], int] = {}
    for g in guarantees:
        held[(g.cluster, g.instance_type)] = held.get((g.cluster, g.instance_type), 0) + g.accelerators
    for p in lowers:
        pool = (p.guarantee.cluster, p.guarantee.instance_type)
        held[pool] -= (p.guarantee.amount - p.proposed) * p.guarantee.per_unit
    kept = list(lowers)
    for p in raises:
        g, pool = p.guarantee, (p.guarantee.cluster, p.guarantee.instance_type)
        per = g.per_unit
        free = capacity.get(pool, 0) - held[pool]
        fits = min(p.proposed, g.amount + free // per)
        if fits <= g.amount:
            notes.append(f"{g.team} on {g.cluster} {g.instance_type} borrows nearly every day, but the pool has no "
                         f"guarantee left to give ({capacity.get(pool, 0)} accelerators, {held[pool]} guaranteed)")
            continue
        if fits < p.proposed:
            notes.append(f"{g.team} on {g.cluster} {g.instance_type}: raised to {fits} {g.unit}, not "
                         f"{p.proposed}: the pool holds no more")
        held[pool] += (fits - g.amount) * per
        kept.append(Proposal(g, fits, p.reason, p.evidence))
    return kept, notes


def _raise_reason(e: Evidence) -> str:
    return (f"borrowed on {e.borrow_days} of {e.days} days; typically uses {e.median_in_use:.1f} accelerators "
            f"(median of the daily averages)")


def _lower_reason(e: Evidence, t: Thresholds) -> str:
    return (f"used {e.median_guarantee_use:.0%} of its guarantee on a median day (under {t.idle_use:.0%}); "
            f"{e.p90_in_use:.1f} accelerators in use cover 9 days in 10")
