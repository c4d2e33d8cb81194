"""The chargeback's conservation (SEMANTICS.md C6) over random consistent usage (hypothesis).

Rows are built to satisfy SEMANTICS.md's invariants for a period: per team, own + lent + idle
guarantee = the guarantee's hours (A3) and own + borrowed = used (A1), a DontLend team lends
nothing, lent <= guarantee - own; per pool, Σ borrowed = Σ lent + borrowed from nobody (A2),
borrowed from nobody <= capacity - Σ guarantees (and 0 with sharing off), so Σ used <= capacity.
Hours are whole quarter-hours (exact as floats, so the rows satisfy the invariants exactly);
prices are decimals of up to 8 places over 1 to 192 units per instance (unit prices with no
finite decimal included).

Then, per priced pool: Σ team totals + unguaranteed idle cost = capacity cost within one minor
unit (each of the three is rounded once from exact values that balance); a team's total is its
own + borrowed + idle guarantee within one minor unit; the teams' totals sum to the pools'
charged amounts within half a minor unit per team and pool.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from usage.chargeback import Chargeback, chargeback
from usage.prices import InstanceRate, PoolPrices, minor_unit, round_half_even, unit_price
from usage.resources import ResourceKind
from usage.summary import PoolUsage, TeamUsage

TEAMS = ("a", "b", "c", "d")
QUARTER = 0.25
SHARING = ("Lend", "DontLend", "LendAndBorrow")


def quarters(draw: st.DrawFn, low: int, high: int) -> int:
    return draw(st.integers(low, max(low, high)))


@st.composite
def pool_rows(draw: st.DrawFn, cluster: str) -> tuple[PoolUsage, list[TeamUsage]]:
    """One pool's period, in quarter-hours of its units: guarantees, own use within them, lending
    by lenders, borrowing split over the teams, drawn from lent hours and from nobody."""
    guarantees = {t: quarters(draw, 0, 400) for t in TEAMS}
    sharing = {t: draw(st.sampled_from(SHARING)) for t in TEAMS}
    capacity = sum(guarantees.values()) + quarters(draw, 0, 400)
    own = {t: quarters(draw, 0, g) for t, g in guarantees.items()}
    lent = {t: quarters(draw, 0, guarantees[t] - own[t]) if sharing[t] != "DontLend" else 0 for t in TEAMS}
    shares_idle = draw(st.booleans())
    nobody = quarters(draw, 0, capacity - sum(guarantees.values())) if shares_idle else 0
    borrowed, left = {}, sum(lent.values()) + nobody  # what was lent or drawn from nobody, split over the teams
    for t in TEAMS[:-1]:
        borrowed[t] = quarters(draw, 0, left)
        left -= borrowed[t]
    borrowed[TEAMS[-1]] = left
    kind = draw(st.sampled_from([ResourceKind.GPU, ResourceKind.NEURON_DEVICE, ResourceKind.VCPU]))
    itype = f"ml.type-{kind}"
    teams = [TeamUsage(t, cluster, itype, kind, (own[t] + borrowed[t]) * QUARTER, own[t] * QUARTER,
                       borrowed[t] * QUARTER, lent[t] * QUARTER, (guarantees[t] - own[t] - lent[t]) * QUARTER,
                       quarters(draw, 0, own[t] + borrowed[t]) * QUARTER)
             for t in TEAMS if guarantees[t] or own[t] + borrowed[t]]
    used = sum(own.values()) + sum(borrowed.values())
    pool = PoolUsage(cluster, itype, kind, capacity * QUARTER, sum(guarantees.values()) * QUARTER,
                     used * QUARTER, nobody * QUARTER, 120, draw(st.integers(0, 3)))
    return pool, teams


@st.composite
def periods(draw: st.DrawFn) -> tuple[list[TeamUsage], list[PoolUsage], PoolPrices]:
    currency = draw(st.sampled_from(["USD", "EUR", "JPY", "KWD"]))
    pools, teams, found = [], [], {}
    for cluster in draw(st.lists(st.sampled_from(["east", "west", "north"]), min_size=1, max_size=3, unique=True)):
        pool, rows = draw(pool_rows(cluster))
        pools.append(pool)
        teams += rows
        cents = draw(st.integers(1, 10**10))  # 0.00000001 to 100 per instance-hour
        rate = InstanceRate(Decimal(cents).scaleb(-8), "on-demand")
        units = draw(st.sampled_from([1, 3, 4, 7, 8, 16, 48, 96, 192]))
        key = (pool.cluster, pool.instance_type, pool.kind)
        accelerated = pool.kind is not ResourceKind.VCPU
        found[key] = unit_price(key, rate, currency=currency, accelerators=units if accelerated else 0,
                                vcpus=units)
    return teams, pools, PoolPrices(currency, found)


def minor(result: Chargeback) -> Decimal:
    return Decimal(1).scaleb(-minor_unit(result.currency))


@settings(max_examples=300, deadline=None)
@given(periods())
def test_every_priced_pool_is_charged_once_to_teams_or_nobody(case: tuple[list[TeamUsage], list[PoolUsage],
                                                                           PoolPrices]) -> None:
    teams, pools, prices = case
    result = chargeback(teams, pools, prices)

    assert len(result.pools) == len(pools) and result.unpriced == ()
    for pool in result.pools:
        assert {pool.capacity_cost.currency, pool.charged.currency, pool.unguaranteed_idle_cost.currency} == {
            result.currency}
        balance = pool.capacity_cost.amount - pool.charged.amount - pool.unguaranteed_idle_cost.amount
        assert abs(balance) <= minor(result), pool


@settings(max_examples=200, deadline=None)
@given(periods())
def test_team_totals_add_up(case: tuple[list[TeamUsage], list[PoolUsage], PoolPrices]) -> None:
    teams, pools, prices = case
    result = chargeback(teams, pools, prices)
    one = minor(result)

    for team in result.teams:
        parts = team.own.amount + team.borrowed.amount + team.idle_guarantee.amount
        assert abs(team.total.amount - parts) <= one
        assert abs(team.total.amount - sum(line.total.amount for line in team.pools)) <= one / 2 * len(team.pools)
    lines = [line for team in result.teams for line in team.pools]
    for pool in result.pools:
        mine = [line.total.amount for line in lines if (line.cluster, line.instance_type) == (pool.cluster,
                                                                                              pool.instance_type)]
        assert abs(pool.charged.amount - sum(mine)) <= one / 2 * len(mine)


@settings(max_examples=300, deadline=None)
@given(st.decimals(min_value=-10**6, max_value=10**6, places=6, allow_nan=False, allow_infinity=False),
       st.integers(0, 3))
def test_rounding_agrees_with_decimal_half_even(value: Decimal, places: int) -> None:
    """Where a Decimal can hold the exact value, `round_half_even` is `quantize(ROUND_HALF_EVEN)`."""
    assert round_half_even(Fraction(value), places) == value.quantize(Decimal(1).scaleb(-places), ROUND_HALF_EVEN)
