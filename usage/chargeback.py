"""A period's (a month's) charge per team, from its hours (`usage.summary`) and each pool's price
per unit-hour (`usage.prices`): what its own use, its borrowing and its idle guarantee cost, and
what the hours it lent were worth (the borrower pays for those); per pool, what the capacity cost
and what of it nobody used nor was guaranteed. Rules C1-C7 of SEMANTICS.md, "Chargeback".

Conservation (C6). For one priced pool at price p per unit-hour, over the covered intervals:

- A1: a team's used hours are own + borrowed.
- A3: a team's guarantee hours G_t are own_t + lent_t + idle_t (what it did not use, it lent or
  left idle).
- A2: all borrowing is lent by some team or drawn from capacity nobody is guaranteed:
  Σ borrowed_t = Σ lent_t + N (N: `from_nobody`).
- The capacity C splits into the guarantees, what was borrowed from nobody, and the rest, which
  nobody used nor was guaranteed: U = C − Σ G_t − N (`PoolUsage.unguaranteed_idle`).

A team's total is p·(own_t + borrowed_t + idle_t), so

    Σ_t total_t = p·(Σ own_t + Σ lent_t + N + Σ idle_t)        (A2 for Σ borrowed_t)
                = p·(Σ G_t + N)                                  (A3)
                = p·(C − U)

hence Σ_t total_t + p·U = p·C: every hour of capacity is charged exactly once, to a team or to
nobody. The sums are exact (hours and prices as fractions); each figure is rounded once, to the
currency's minor unit, so the rounded figures balance within one minor unit per pool (C7).

Pure: usage rows and prices in, typed charges out; nothing printed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from usage.prices import NoPrice, PoolKey, PoolPrices, UnitPrice, minor_unit, round_half_even
from usage.resources import ResourceKind
from usage.summary import PoolUsage, TeamUsage

_TEAM_FIGURES = ("own", "borrowed", "idle_guarantee", "lent", "lost_to_preemption")


class ChargebackError(ValueError):
    """The usage rows cannot be charged as given (the message names the team and the pool)."""


@dataclass(frozen=True)
class Money:
    """An amount in a currency, rounded to the currency's minor unit."""

    amount: Decimal
    currency: str

    def __str__(self) -> str:
        return f"{self.amount} {self.currency}"


@dataclass(frozen=True)
class TeamPoolCharge:
    """One team's charge on one priced pool. `total` = own + borrowed + idle_guarantee; `lent`
    (paid by the borrowers) and `lost_to_preemption` (part of own and borrowed) are informative."""

    team: str
    cluster: str
    instance_type: str
    kind: ResourceKind
    unit_price: UnitPrice
    own: Money
    borrowed: Money
    idle_guarantee: Money
    lent: Money
    lost_to_preemption: Money
    total: Money


@dataclass(frozen=True)
class TeamCharge:
    """One team's charge over every priced pool, each figure summed exactly and rounded once.
    `unpriced`: the pools the team has hours on that carry no price (`Chargeback.unpriced` says why;
    the vCPUs of instances with accelerators are not among them: the accelerators carry them, C2)."""

    team: str
    own: Money
    borrowed: Money
    idle_guarantee: Money
    lent: Money
    lost_to_preemption: Money
    total: Money
    pools: tuple[TeamPoolCharge, ...]
    unpriced: tuple[PoolKey, ...]


@dataclass(frozen=True)
class PoolCharge:
    """One priced pool: its capacity's cost over the covered intervals, what its teams are charged
    (Σ of their totals) and the cost of the capacity nobody used nor was guaranteed, charged to
    nobody. `missing_intervals` were not collected: neither costed nor charged (C5)."""

    cluster: str
    instance_type: str
    kind: ResourceKind
    unit_price: UnitPrice
    capacity_hours: float
    capacity_cost: Money
    charged: Money
    unguaranteed_idle_hours: float
    unguaranteed_idle_cost: Money
    missing_intervals: int


@dataclass(frozen=True)
class UnpricedPool:
    """A pool with hours but no price per unit-hour: listed, never charged zero (C2)."""

    cluster: str
    instance_type: str
    kind: ResourceKind
    reason: NoPrice
    used_hours: float
    capacity_hours: float


@dataclass(frozen=True)
class Chargeback:
    """The period's charges in one currency: per team, per priced pool, the unpriced pools, and
    the vCPU pools whose instances their accelerators pay for (`carried`, C2: not a gap)."""

    currency: str
    teams: tuple[TeamCharge, ...]
    pools: tuple[PoolCharge, ...]
    unpriced: tuple[UnpricedPool, ...]
    carried: tuple[PoolKey, ...] = ()


def chargeback(teams: Iterable[TeamUsage], pools: Iterable[PoolUsage], prices: PoolPrices) -> Chargeback:
    """Each team's charge and each pool's cost over the period the rows sum (C1-C7). Every team
    row needs its pool's row; a figure that is negative or not a number is refused."""
    by_pool = _pools_by_key(pools)
    team_rows = _team_rows(teams, by_pool)
    places = minor_unit(prices.currency)

    def money(exact: Fraction) -> Money:
        return Money(round_half_even(exact, places), prices.currency)

    lines: dict[str, list[TeamPoolCharge]] = defaultdict(list)
    sums: dict[str, _Exact] = defaultdict(_Exact)
    charged: dict[PoolKey, Fraction] = defaultdict(Fraction)
    unpriced: dict[str, list[PoolKey]] = defaultdict(list)
    for row in team_rows:
        key = (row.cluster, row.instance_type, row.kind)
        price = prices.of(key)
        if not isinstance(price, UnitPrice):
            if price is not NoPrice.CARRIED_BY_ACCELERATORS:
                unpriced[row.team].append(key)
            continue
        exact = _Exact.of(row, price.per_unit_hour)
        sums[row.team] = sums[row.team].plus(exact)
        charged[key] += exact.total
        lines[row.team].append(TeamPoolCharge(row.team, *key, price, *exact.rounded(money)))
    team_charges = tuple(TeamCharge(team, *sums[team].rounded(money), tuple(lines[team]), tuple(unpriced[team]))
                         for team in sorted({row.team for row in team_rows}))
    pool_charges, unpriced_pools = _pool_charges(by_pool, prices, charged, money)
    carried = tuple(key for key in sorted(by_pool) if prices.of(key) is NoPrice.CARRIED_BY_ACCELERATORS)
    return Chargeback(prices.currency, team_charges, pool_charges, unpriced_pools, carried)


@dataclass(frozen=True)
class _Exact:
    """A team's figures in money, exact (hours and prices as fractions): summed, then rounded once."""

    own: Fraction = Fraction(0)
    borrowed: Fraction = Fraction(0)
    idle_guarantee: Fraction = Fraction(0)
    lent: Fraction = Fraction(0)
    lost_to_preemption: Fraction = Fraction(0)

    @classmethod
    def of(cls, row: TeamUsage, per_unit_hour: Fraction) -> _Exact:
        return cls(*(Fraction(getattr(row, name)) * per_unit_hour for name in _TEAM_FIGURES))

    @property
    def total(self) -> Fraction:
        """C3: own use, borrowing and the idle guarantee; what was lent is the borrowers'."""
        return self.own + self.borrowed + self.idle_guarantee

    def plus(self, other: _Exact) -> _Exact:
        return _Exact(*(getattr(self, name) + getattr(other, name) for name in _TEAM_FIGURES))

    def rounded(self, money: Callable[[Fraction], Money]) -> tuple[Money, Money, Money, Money, Money, Money]:
        """own, borrowed, idle guarantee, lent, lost to preemption, total: each rounded once."""
        return (money(self.own), money(self.borrowed), money(self.idle_guarantee), money(self.lent),
                money(self.lost_to_preemption), money(self.total))


def _pool_charges(by_pool: dict[PoolKey, PoolUsage], prices: PoolPrices, charged: dict[PoolKey, Fraction],
                  money: Callable[[Fraction], Money]) -> tuple[tuple[PoolCharge, ...], tuple[UnpricedPool, ...]]:
    priced: list[PoolCharge] = []
    unpriced: list[UnpricedPool] = []
    for key, pool in sorted(by_pool.items()):
        price = prices.of(key)
        if price is NoPrice.CARRIED_BY_ACCELERATORS:
            continue
        if not isinstance(price, UnitPrice):
            unpriced.append(UnpricedPool(*key, price, pool.used, pool.capacity_hours))
            continue
        # C4, exactly: the float property would round the subtraction before the price multiplies it
        idle = max(Fraction(0), Fraction(pool.capacity_hours) - Fraction(pool.guaranteed_hours)
                   - Fraction(pool.from_nobody))
        priced.append(PoolCharge(
            *key, price, pool.capacity_hours, money(Fraction(pool.capacity_hours) * price.per_unit_hour),
            money(charged[key]), float(idle), money(idle * price.per_unit_hour), pool.missing_intervals))
    return tuple(priced), tuple(unpriced)


def _pools_by_key(pools: Iterable[PoolUsage]) -> dict[PoolKey, PoolUsage]:
    found: dict[PoolKey, PoolUsage] = {}
    for pool in pools:
        key = (pool.cluster, pool.instance_type, pool.kind)
        if key in found:
            raise ChargebackError(f"{_pool_name(key)}: two pool rows; give one row per pool and period")
        _check_hours(_pool_name(key), pool, ("capacity_hours", "guaranteed_hours", "used", "from_nobody"))
        found[key] = pool
    return found


def _team_rows(teams: Iterable[TeamUsage], by_pool: dict[PoolKey, PoolUsage]) -> list[TeamUsage]:
    rows: list[TeamUsage] = []
    seen: set[tuple[str, PoolKey]] = set()
    for row in teams:
        key = (row.cluster, row.instance_type, row.kind)
        where = f"team {row.team} on {_pool_name(key)}"
        if key not in by_pool:
            raise ChargebackError(f"{where}: no row for the pool; the team rows and the pool rows must come "
                                  "from the same period")
        if (row.team, key) in seen:
            raise ChargebackError(f"{where}: two rows; give one row per team, pool and period")
        seen.add((row.team, key))
        _check_hours(where, row, ("used", *_TEAM_FIGURES))
        rows.append(row)
    return rows


def _check_hours(where: str, row: TeamUsage | PoolUsage, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(row, name)
        if not math.isfinite(value) or value < 0:
            raise ChargebackError(f"{where}: {name} is {value} hours; hours are finite and never negative")


def _pool_name(key: PoolKey) -> str:
    cluster, itype, kind = key
    return f"{kind} of {itype} on cluster {cluster}"
