"""The chargeback on hand-computed examples (SEMANTICS.md C1-C7). Every expected amount is worked
out in the docstring from the stated price and hours; none is copied from what the code returns.

The main example, over 10 hours on cluster `west` (T = 2026-03-02T10:00:00Z):

- ml.p5.48xlarge at 55.04 per instance-hour, 8 GPUs each: 55.04 / 8 = 6.88 per GPU-hour (C1).
  4 instances = 32 GPUs; the cluster's idle-resource sharing is off (nothing unguaranteed is lent).
  Guarantees: vision 8 GPUs (LendAndBorrow), nlp 8 (Lend), speech 8 (DontLend); 24 guaranteed.
  - vision runs 6 GPUs for the 10 hours and 4 more for the first 3 (10 at once, 2 beyond its 8):
    own 8*3 + 6*7 = 66, borrowed 2*3 = 6 GPU-hours, idle guarantee 80 - 66 = 14.
  - nlp runs 2 GPUs for 10 hours: own 20. It is the only lender with idle guarantee while vision
    borrows (speech does not lend), so it lent vision's 2*3 = 6; idle guarantee 80 - 20 - 6 = 54.
  - speech runs nothing: idle guarantee 8*10 = 80.
  - capacity 32*10 = 320 GPU-hours; guaranteed 240; borrowed from nobody 0; unguaranteed idle
    320 - 240 - 0 = 80.
- ml.m5.12xlarge (CPU-only, 48 vCPUs) at 2.88 per instance-hour: 2.88 / 48 = 0.06 per vCPU-hour.
  1 instance, nobody guaranteed, sharing on: nlp runs 24 vCPUs for 10 hours, all borrowed from
  nobody: 240 vCPU-hours. Capacity 480; unguaranteed idle 480 - 0 - 240 = 240.
- ml.g5.12xlarge has no price: speech runs 4 GPUs for 2 hours there (8 GPU-hours), unpriced.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from tests.usage.collector_fixtures import T0
from usage.accounting import Pool, account
from usage.chargeback import Chargeback, ChargebackError, Money, chargeback
from usage.prices import InstanceRate, NoPrice, PoolPrices, UnitPrice, round_half_even, unit_price
from usage.resources import GPU_UNITS, MILLICORES, ResourceKind
from usage.spans import Span
from usage.summary import PoolUsage, TeamUsage
from usage.warehouse import Warehouse, month_of

GPU, VCPU = ResourceKind.GPU, ResourceKind.VCPU
P5, M5, G5 = "ml.p5.48xlarge", "ml.m5.12xlarge", "ml.g5.12xlarge"
T = int(T0.timestamp())
HOUR = 3600


def usd(text: str) -> Money:
    return Money(Decimal(text), "USD")


def example_prices() -> PoolPrices:
    """p5 at 55.04 (8 GPUs, 192 vCPUs), m5.12xlarge at 2.88 (48 vCPUs), g5.12xlarge unpriced."""
    p5, m5 = InstanceRate(Decimal("55.04"), "on-demand"), InstanceRate(Decimal("2.88"), "reserved")
    keys = {("west", P5, GPU): (p5, 8, 192), ("west", P5, VCPU): (p5, 8, 192),
            ("west", M5, VCPU): (m5, 0, 48), ("west", G5, GPU): (None, 4, 48)}
    return PoolPrices("USD", {key: unit_price(key, rate, currency="USD", accelerators=acc, vcpus=vcpus)
                              for key, (rate, acc, vcpus) in keys.items()})


def team(name: str, itype: str, kind: ResourceKind, *, own: float = 0, borrowed: float = 0, lent: float = 0,
         idle: float = 0, lost: float = 0) -> TeamUsage:
    return TeamUsage(name, "west", itype, kind, own + borrowed, own, borrowed, lent, idle, lost)


def example_rows() -> tuple[list[TeamUsage], list[PoolUsage]]:
    """The hours of the module docstring, as the warehouse sums them (120 intervals of 5 minutes)."""
    teams = [team("vision", P5, GPU, own=66, borrowed=6, idle=14, lost=6),
             team("nlp", P5, GPU, own=20, lent=6, idle=54),
             team("speech", P5, GPU, idle=80),
             team("vision", P5, VCPU, own=0, borrowed=960),
             team("nlp", M5, VCPU, borrowed=240),
             team("speech", G5, GPU, borrowed=8)]
    pools = [PoolUsage("west", P5, GPU, 320, 240, 92, 0, 120, 0),
             PoolUsage("west", P5, VCPU, 1920, 0, 960, 960, 120, 0),
             PoolUsage("west", M5, VCPU, 480, 0, 240, 240, 120, 0),
             PoolUsage("west", G5, GPU, 40, 0, 8, 8, 120, 0)]
    return teams, pools


def test_unit_prices_split_the_instance_price() -> None:
    """C1: 55.04 / 8 GPUs = 6.88 per GPU-hour; 2.88 / 48 vCPUs = 0.06 per vCPU-hour. C2: the p5's
    vCPUs are carried by its GPUs; g5.12xlarge has no price; a NeuronCore pool none either."""
    prices = example_prices()
    p5, m5 = prices.of(("west", P5, GPU)), prices.of(("west", M5, VCPU))
    assert isinstance(p5, UnitPrice) and isinstance(m5, UnitPrice)
    assert (p5.per_unit_hour, p5.units_per_instance) == (Fraction("6.88"), 8)
    assert (m5.per_unit_hour, m5.units_per_instance, m5.purchase_option) == (Fraction("0.06"), 48, "reserved")
    assert prices.of(("west", P5, VCPU)) is NoPrice.CARRIED_BY_ACCELERATORS
    assert prices.of(("west", G5, GPU)) is NoPrice.NOT_PRICED
    assert prices.of(("west", "ml.trn1.32xlarge", ResourceKind.NEURONCORE)) is NoPrice.NEURONCORES
    assert prices.of(("east", P5, GPU)) is NoPrice.NOT_IN_TREE


def test_a_borrowing_team_pays_own_borrowed_and_idle_guarantee() -> None:
    """vision on p5 at 6.88: own 66 * 6.88 = 454.08, borrowed 6 * 6.88 = 41.28, idle guarantee
    14 * 6.88 = 96.32, total (66 + 6 + 14) * 6.88 = 86 * 6.88 = 591.68; it lent nothing; its 6 lost
    hours are worth 6 * 6.88 = 41.28 (already in own and borrowed). Its 960 vCPU-hours on the p5
    cost nothing more: the GPUs carry the instance (C2)."""
    result = chargeback(*example_rows(), example_prices())
    vision = next(t for t in result.teams if t.team == "vision")

    assert (vision.own, vision.borrowed, vision.idle_guarantee) == (usd("454.08"), usd("41.28"), usd("96.32"))
    assert (vision.lent, vision.lost_to_preemption, vision.total) == (usd("0.00"), usd("41.28"), usd("591.68"))
    assert [(line.instance_type, line.kind) for line in vision.pools] == [(P5, GPU)]
    assert vision.unpriced == ()  # its p5 vCPUs are carried, not unpriced


def test_a_lender_does_not_pay_for_what_it_lent() -> None:
    """nlp on p5 at 6.88: own 20 * 6.88 = 137.60, idle guarantee 54 * 6.88 = 371.52, lent 6 * 6.88 =
    41.28 (shown, paid by vision as its borrowing); p5 total (20 + 54) * 6.88 = 509.12. On the
    CPU-only m5 at 0.06 per vCPU-hour: 240 * 0.06 = 14.40 borrowed. nlp's total: 509.12 + 14.40 = 523.52."""
    nlp = next(t for t in chargeback(*example_rows(), example_prices()).teams if t.team == "nlp")
    p5, m5 = (next(line for line in nlp.pools if line.instance_type == itype) for itype in (P5, M5))

    assert (p5.own, p5.idle_guarantee, p5.lent, p5.total) == (usd("137.60"), usd("371.52"), usd("41.28"),
                                                              usd("509.12"))
    assert (m5.borrowed, m5.total, m5.kind) == (usd("14.40"), usd("14.40"), VCPU)
    assert (nlp.lent, nlp.total) == (usd("41.28"), usd("523.52"))


def test_an_idle_guarantee_is_charged_and_an_unpriced_pool_is_listed_not_zero() -> None:
    """speech: 80 idle GPU-hours of guarantee on p5: 80 * 6.88 = 550.40. Its 8 GPU-hours on the
    unpriced g5.12xlarge are no amount: the pool is named on speech and listed with its reason
    and hours (used 8, capacity 40). The p5's vCPU pool is listed apart, as carried by its GPUs."""
    result = chargeback(*example_rows(), example_prices())
    speech = next(t for t in result.teams if t.team == "speech")

    assert (speech.idle_guarantee, speech.total) == (usd("550.40"), usd("550.40"))
    assert speech.unpriced == (("west", G5, GPU),)
    g5 = next(p for p in result.unpriced if p.instance_type == G5)
    assert (g5.reason, g5.used_hours, g5.capacity_hours) == (NoPrice.NOT_PRICED, 8, 40)
    assert [(p.instance_type, p.kind) for p in result.unpriced] == [(G5, GPU)]
    assert result.carried == (("west", P5, VCPU),)  # no gap: the p5's GPUs carry its vCPUs
    assert {(p.instance_type, p.kind) for p in result.pools} == {(P5, GPU), (M5, VCPU)}


def test_pool_costs_balance_with_the_teams_and_nobody() -> None:
    """p5: capacity 320 * 6.88 = 2201.60 (= 4 instances * 10 h * 55.04); teams 591.68 + 509.12 +
    550.40 = 1651.20; nobody: 80 * 6.88 = 550.40; 1651.20 + 550.40 = 2201.60.
    m5: capacity 480 * 0.06 = 28.80; nlp 14.40; nobody (480 - 240) * 0.06 = 14.40."""
    result = chargeback(*example_rows(), example_prices())
    p5, m5 = (next(p for p in result.pools if p.instance_type == itype) for itype in (P5, M5))

    assert (p5.capacity_cost, p5.charged, p5.unguaranteed_idle_cost) == (usd("2201.60"), usd("1651.20"),
                                                                          usd("550.40"))
    assert (m5.capacity_cost, m5.charged, m5.unguaranteed_idle_cost) == (usd("28.80"), usd("14.40"), usd("14.40"))
    assert (p5.unguaranteed_idle_hours, p5.missing_intervals, result.currency) == (80, 0, "USD")


def test_the_accounting_gives_the_hours_worked_out_by_hand(tmp_path: Path) -> None:
    """The example's spans through `account` and the warehouse give the rows above, so the charges
    are the same: vision 591.68, nlp 523.52, speech 550.40; p5 capacity 2201.60."""
    p5 = Pool("west", P5, GPU, 32 * GPU_UNITS, {t: 8 * GPU_UNITS for t in ("vision", "nlp", "speech")},
              {"vision": "LendAndBorrow", "nlp": "Lend", "speech": "DontLend"}, shares_idle=False)
    others = [Pool("west", P5, VCPU, 4 * 192 * MILLICORES), Pool("west", M5, VCPU, 48 * MILLICORES),
              Pool("west", G5, GPU, 4 * GPU_UNITS)]
    spans = [Span("vision", "west", P5, GPU, "training", 6 * GPU_UNITS, T, T + 10 * HOUR, False),
             Span("vision", "west", P5, GPU, "training", 4 * GPU_UNITS, T, T + 3 * HOUR, True),
             Span("vision", "west", P5, VCPU, "training", 96 * MILLICORES, T, T + 10 * HOUR, False),
             Span("nlp", "west", P5, GPU, None, 2 * GPU_UNITS, T, T + 10 * HOUR, False),
             Span("nlp", "west", M5, VCPU, None, 24 * MILLICORES, T, T + 10 * HOUR, False),
             Span("speech", "west", G5, GPU, None, 4 * GPU_UNITS, T, T + 2 * HOUR, False)]
    warehouse = Warehouse(tmp_path)
    accounts = account(spans, [p5, *others], start=T, end=T + 10 * HOUR, coverage={"west": [(T, T + 10 * HOUR)]})
    warehouse.write_month("west", month_of(T), accounts, final=False)
    period = warehouse.period(T, T + 10 * HOUR)

    result = chargeback(period.teams, period.pools, example_prices())

    totals = {t.team: t.total for t in result.teams}
    assert totals == {"vision": usd("591.68"), "nlp": usd("523.52"), "speech": usd("550.40")}
    assert next(p for p in result.pools if p.instance_type == P5).capacity_cost == usd("2201.60")


def test_a_team_total_is_rounded_once_from_its_exact_sum() -> None:
    """C7: a CPU-only type at 2.00 per instance-hour with 48 vCPUs costs 2/48 = 1/24 per vCPU-hour.
    A team borrows 100 vCPU-hours on each of 3 clusters: each line is 100/24 = 4.1666... -> 4.17,
    but the team's total is 300/24 = 12.50 exactly, not 3 * 4.17 = 12.51."""
    rate = InstanceRate(Decimal("2.00"), "on-demand")
    keys = [(cluster, M5, VCPU) for cluster in ("a", "b", "c")]
    prices = PoolPrices("USD", {k: unit_price(k, rate, currency="USD", accelerators=0, vcpus=48) for k in keys})
    teams = [TeamUsage("t", k[0], M5, VCPU, 100, 0, 100, 0, 0, 0) for k in keys]
    pools = [PoolUsage(k[0], M5, VCPU, 480, 0, 100, 100, 120, 0) for k in keys]

    (t,) = chargeback(teams, pools, prices).teams

    assert [line.total for line in t.pools] == [usd("4.17")] * 3
    assert t.total == usd("12.50")


def test_currencies_round_to_their_minor_unit() -> None:
    """JPY has no minor unit: 1000.5 yen per GPU-hour (8004 per instance-hour) * 1 GPU-hour rounds
    half to even: 1000. KWD has 3: 8.0004 per instance-hour / 8 = 1.00005 -> 1.000 (tie, even)."""
    for currency, instance_price, expected in (("JPY", "8004", "1000"), ("KWD", "8.0004", "1.000")):
        key = ("west", P5, GPU)
        price = unit_price(key, InstanceRate(Decimal(instance_price), "on-demand"), currency=currency,
                           accelerators=8, vcpus=192)
        result = chargeback([TeamUsage("t", "west", P5, GPU, 1, 1, 0, 0, 0, 0)],
                            [PoolUsage("west", P5, GPU, 1, 1, 1, 0, 12, 0)], PoolPrices(currency, {key: price}))
        assert result.teams[0].total == Money(Decimal(expected), currency)


@pytest.mark.parametrize(("value", "places", "expected"), [
    pytest.param(Fraction("0.125"), 2, "0.12", id="tie-to-even-down"),
    pytest.param(Fraction("0.135"), 2, "0.14", id="tie-to-even-up"),
    pytest.param(Fraction(1, 3), 2, "0.33", id="thirds"),
    pytest.param(Fraction(2, 3), 2, "0.67", id="two-thirds"),
    pytest.param(Fraction(5, 2), 0, "2", id="no-minor-unit"),
    pytest.param(Fraction("12345678901234567890123456789.005"), 2, "12345678901234567890123456789.00",
                 id="beyond-the-decimal-context"),
])
def test_round_half_even(value: Fraction, places: int, expected: str) -> None:
    assert round_half_even(value, places) == Decimal(expected)
    assert str(round_half_even(value, places)) == expected


def test_a_team_row_without_its_pool_is_refused() -> None:
    teams, pools = example_rows()
    with pytest.raises(ChargebackError, match=re.escape("team nlp on vcpu of ml.m5.12xlarge on cluster west: no row")):
        chargeback(teams, [p for p in pools if p.instance_type != M5], example_prices())


@pytest.mark.parametrize("bad", [float("nan"), -1.0, float("inf")])
def test_hours_that_are_not_hours_are_refused(bad: float) -> None:
    teams, pools = example_rows()
    teams[0] = teams[0]._replace(idle_guarantee=bad)
    where = "team vision on gpu of ml.p5.48xlarge on cluster west: idle_guarantee"
    with pytest.raises(ChargebackError, match=re.escape(where)):
        chargeback(teams, pools, example_prices())


def test_duplicate_rows_are_refused() -> None:
    teams, pools = example_rows()
    with pytest.raises(ChargebackError, match="two rows"):
        chargeback([*teams, teams[0]], pools, example_prices())
    with pytest.raises(ChargebackError, match="two pool rows"):
        chargeback(teams, [*pools, pools[0]], example_prices())


def test_no_rows_no_charges() -> None:
    assert chargeback([], [], PoolPrices("EUR")) == Chargeback("EUR", (), (), (), ())
