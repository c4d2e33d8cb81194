"""The accounting's figures for small, hand-computed cases (SEMANTICS.md A1-A7). Amounts are in
GPUs (56 units each, `usage.resources.GPU_UNITS`); figures are GPU-hours: g GPUs for s seconds are
g * s / 3600 GPU-hours. T0 = 2026-03-02T10:00:00Z, a 5-minute boundary."""

from __future__ import annotations

import math

import pytest

from usage.accounting import INTERVAL_SECONDS, AccountingError, Pool, PoolAccount, account
from usage.resources import GPU_UNITS, ResourceKind, mig_units
from usage.spans import Span

T0 = 1772445600
P5, G5 = "ml.p5.48xlarge", "ml.g5.48xlarge"
GPU = ResourceKind.GPU


def gpus(n: float) -> int:
    return round(n * GPU_UNITS)


def span(team: str, n: float, start: int, end: int, priority: str | None = "training", *, preempted: bool = False,
         itype: str = P5) -> Span:
    return Span(team, "east", itype, GPU, priority, gpus(n), T0 + start, T0 + end, preempted)


def pool(capacity: float, guarantees: dict[str, float], sharing: dict[str, str] | None = None, *,
         shares_idle: bool = True, itype: str = P5) -> Pool:
    return Pool("east", itype, GPU, gpus(capacity), {t: gpus(g) for t, g in guarantees.items()},
                sharing or {}, shares_idle)  # type: ignore[arg-type]


def run(the_pool: Pool, spans: list[Span], *, end: int = 2 * INTERVAL_SECONDS,
        coverage: list[tuple[int, int]] | None = None) -> PoolAccount:
    covered = coverage if coverage is not None else [(T0, T0 + end)]
    (result,) = account(spans, [the_pool], start=T0, end=T0 + end, coverage={"east": covered})
    return result


def team(result: PoolAccount, name: str, field: str) -> list[float]:
    return [float(v) for v in getattr(result, field)[result.teams.index(name)]]


def klass(result: PoolAccount, name: str, priority: str, field: str) -> list[float]:
    return [float(v) for v in getattr(result, f"class_{field}")[result.classes.index((name, priority))]]


def close(actual: list[float], expected: list[float]) -> bool:
    if len(actual) != len(expected):
        return False
    return all(math.isclose(a, e, abs_tol=1e-9) for a, e in zip(actual, expected, strict=True))


def test_a_borrow_inside_one_interval() -> None:
    """16 GPUs; a guarantees 8 (Lend), b 8 (LendAndBorrow). b runs 12 GPUs from +60 s to +240 s.
    Interval 0: b used 12 * 180 / 3600 = 0.6, own 8 * 180 / 3600 = 0.4, borrowed 4 * 180 / 3600 = 0.2;
    nothing is unguaranteed, so a lent the 0.2; a's idle guarantee 8 * 300 / 3600 - 0.2 = 2/3 - 0.2;
    b's idle guarantee 8 * 300 / 3600 - 0.4 = 4/15. Interval 1: nothing used, a and b idle 2/3 each."""
    result = run(pool(16, {"a": 8, "b": 8}, {"a": "Lend"}), [span("b", 12, 60, 240)])

    assert close(team(result, "b", "used"), [0.6, 0.0])
    assert close(team(result, "b", "own"), [0.4, 0.0])
    assert close(team(result, "b", "borrowed"), [0.2, 0.0])
    assert close(team(result, "a", "lent"), [0.2, 0.0])
    assert close(team(result, "b", "lent"), [0.0, 0.0])
    assert close(team(result, "a", "idle_guarantee"), [2 / 3 - 0.2, 2 / 3])
    assert close(team(result, "b", "idle_guarantee"), [4 / 15, 2 / 3])
    assert close([float(v) for v in result.from_nobody], [0.0, 0.0])


def test_a_borrow_over_many_intervals_draws_first_on_capacity_nobody_is_guaranteed() -> None:
    """24 GPUs, a 8 (Lend), b 8 (LendAndBorrow): 8 GPUs are nobody's. b runs 20 GPUs from +150 s
    to +1050 s: it borrows 12, 8 from nobody and 4 lent by a. Intervals 0 and 3 hold 150 s of it,
    1 and 2 all 300 s. Per interval: used 20 * s / 3600 (150 s: 5/6; 300 s: 5/3), own 8 * s / 3600
    (1/3; 2/3), borrowed 12 * s / 3600 (0.5; 1), from nobody 8 * s / 3600 (1/3; 2/3), a lent
    4 * s / 3600 (1/6; 1/3), a idle 8 * 300 / 3600 - lent (1/2; 1/3). In all b borrowed 12 * 900 / 3600 = 3."""
    result = run(pool(24, {"a": 8, "b": 8}, {"a": "Lend"}), [span("b", 20, 150, 1050)], end=4 * INTERVAL_SECONDS)

    assert close(team(result, "b", "used"), [5 / 6, 5 / 3, 5 / 3, 5 / 6])
    assert close(team(result, "b", "own"), [1 / 3, 2 / 3, 2 / 3, 1 / 3])
    assert close(team(result, "b", "borrowed"), [0.5, 1.0, 1.0, 0.5])
    assert close([float(v) for v in result.from_nobody], [1 / 3, 2 / 3, 2 / 3, 1 / 3])
    assert close(team(result, "a", "lent"), [1 / 6, 1 / 3, 1 / 3, 1 / 6])
    assert close(team(result, "a", "idle_guarantee"), [0.5, 1 / 3, 1 / 3, 0.5])
    assert math.isclose(sum(team(result, "b", "borrowed")), 3.0)


def test_a_preemption_in_the_middle_of_an_interval() -> None:
    """16 GPUs, a 8 (Lend), b 8 (LendAndBorrow). b runs 8 GPUs of training for the whole interval
    and 8 of experimentation until +130 s, when a's inference job (8 GPUs, to +300 s) reclaims
    them: the experimentation attempt ends Preempted. Interval 0:
    b used 8 * 300 / 3600 + 8 * 130 / 3600 = 2/3 + 0.2888..., own 8 * 300 / 3600 = 2/3, borrowed 8 * 130 / 3600.
    Until +130 s b holds 16 (8 own) split evenly over its two classes: training own
    4 * 130 + 8 * 170 = 1880 GPU-s, borrowed 4 * 130 = 520; experimentation own 520, borrowed 520,
    lost 8 * 130 = 1040 GPU-s (all its hours). a lent 8 * 130 = 1040 GPU-s, used 8 * 170 = 1360,
    so its idle guarantee is 8 * 300 - 1360 - 1040 = 0."""
    result = run(pool(16, {"a": 8, "b": 8}, {"a": "Lend"}), [
        span("b", 8, 0, 300), span("b", 8, 0, 130, "experimentation", preempted=True),
        span("a", 8, 130, 300, "inference")], end=INTERVAL_SECONDS)

    assert close(team(result, "b", "used"), [(2400 + 1040) / 3600])
    assert close(team(result, "b", "own"), [2400 / 3600])
    assert close(team(result, "b", "borrowed"), [1040 / 3600])
    assert close(klass(result, "b", "training", "own"), [1880 / 3600])
    assert close(klass(result, "b", "training", "borrowed"), [520 / 3600])
    assert close(klass(result, "b", "experimentation", "own"), [520 / 3600])
    assert close(klass(result, "b", "experimentation", "borrowed"), [520 / 3600])
    assert close(klass(result, "b", "experimentation", "lost"), [1040 / 3600])
    assert close(klass(result, "b", "training", "lost"), [0.0])
    assert close(klass(result, "a", "inference", "lost"), [0.0])
    assert close(team(result, "a", "lent"), [1040 / 3600])
    assert close(team(result, "a", "used"), [1360 / 3600])
    assert close(team(result, "a", "idle_guarantee"), [0.0])


def test_mig_partitions_count_as_their_share_of_a_gpu() -> None:
    """2 p5 instances = 16 GPUs. A mig-3g.40gb on H100 holds 3 of 7 compute and 4 of 8 memory slices:
    max(3/7, 1/2) = 1/2 GPU (28 of 56 units). a guarantees 4 of them = 2 GPUs; b 8 GPUs;
    16 - 8 - 2 = 6 GPUs are nobody's. a runs 6 of them (6 * 1/2 = 3 GPUs) for interval 0:
    used 3 * 300 / 3600 = 1/4, own 2 * 300 / 3600 = 1/6, borrowed 1 * 300 / 3600 = 1/12, all of
    it from nobody (1 <= 6); b lends nothing."""
    per_partition = mig_units(P5, "mig-3g.40gb") / GPU_UNITS
    result = run(pool(16, {"a": 4 * per_partition, "b": 8}), [span("a", 6 * per_partition, 0, 300)],
                 end=INTERVAL_SECONDS)

    assert per_partition == 1 / 2
    assert close(team(result, "a", "used"), [1 / 4])
    assert close(team(result, "a", "own"), [1 / 6])
    assert close(team(result, "a", "borrowed"), [1 / 12])
    assert close([float(v) for v in result.from_nobody], [1 / 12])
    assert close(team(result, "b", "lent"), [0.0])


def test_with_idle_sharing_off_borrowers_draw_on_lenders_only_in_proportion_to_their_idle_guarantee() -> None:
    """28 GPUs: a 8 (Lend), d 4 (LendAndBorrow), c 8 (DontLend), b 8 (LendAndBorrow); idle-resource
    sharing off. For interval 0, a runs 2 GPUs and b 13: b borrows 5. Lenders' idle guarantees are
    a 8 - 2 = 6 and d 4 (c's is never lent): a lends 5 * 6/10 = 3, d 5 * 4/10 = 2.
    GPU-hours: a lent 3 * 300 / 3600 = 0.25, d 2 * 300 / 3600 = 1/6, c 0, nobody 0;
    idle: a (8 - 2 - 3) * 300 / 3600 = 0.25, d (4 - 2) * 300 / 3600 = 1/6, c 8 * 300 / 3600 = 2/3."""
    result = run(pool(28, {"a": 8, "d": 4, "c": 8, "b": 8}, {"a": "Lend", "c": "DontLend"}, shares_idle=False),
                 [span("a", 2, 0, 300), span("b", 13, 0, 300)], end=INTERVAL_SECONDS)

    assert close(team(result, "b", "borrowed"), [5 * 300 / 3600])
    assert close(team(result, "a", "lent"), [0.25])
    assert close(team(result, "d", "lent"), [1 / 6])
    assert close(team(result, "c", "lent"), [0.0])
    assert close([float(v) for v in result.from_nobody], [0.0])
    assert close(team(result, "a", "idle_guarantee"), [0.25])
    assert close(team(result, "d", "idle_guarantee"), [1 / 6])
    assert close(team(result, "c", "idle_guarantee"), [2 / 3])


def test_with_idle_sharing_off_unguaranteed_capacity_cannot_be_borrowed() -> None:
    """24 GPUs, a 8 (Lend), b 8: 8 are nobody's but sharing is off. b running 20 GPUs borrows 12,
    more than a's 8 idle: an error naming the pool and the instant (+0 s)."""
    with pytest.raises(AccountingError, match=r"gpu of ml.p5.48xlarge on cluster east at 2026-03-02T10:00:00Z"):
        run(pool(24, {"a": 8, "b": 8}, {"a": "Lend"}, shares_idle=False), [span("b", 20, 0, 300)])


def test_a_team_with_no_guarantee_of_a_type_borrows_all_it_uses() -> None:
    """g5: 8 GPUs nobody is guaranteed (a's guarantee is on p5). e runs 4 g5 GPUs for interval 0:
    used 4 * 300 / 3600 = 1/3, own 0, borrowed 1/3, all from nobody; e has no idle guarantee."""
    result = run(pool(8, {}, itype=G5), [span("e", 4, 0, 300, itype=G5)], end=INTERVAL_SECONDS)

    assert result.teams == ("e",)
    assert close(team(result, "e", "used"), [1 / 3])
    assert close(team(result, "e", "own"), [0.0])
    assert close(team(result, "e", "borrowed"), [1 / 3])
    assert close([float(v) for v in result.from_nobody], [1 / 3])
    assert close(team(result, "e", "idle_guarantee"), [0.0])


def test_an_interval_not_fully_collected_is_missing_not_zero() -> None:
    """The collector covered +0 s to +450 s: interval 0 is covered, interval 1 (+300 to +600) is not.
    Interval 0: b used 2 * 300 / 3600 = 1/6; interval 1: missing rows, every figure None."""
    result = run(pool(16, {"a": 8, "b": 8}), [span("b", 2, 0, 600)], coverage=[(T0, T0 + 450)])

    rows = {(r.team, r.interval_start): r for r in result.team_rows()}
    assert not rows[("b", T0)].missing and math.isclose(rows[("b", T0)].used or 0.0, 1 / 6)
    later = rows[("b", T0 + INTERVAL_SECONDS)]
    assert later.missing and (later.used, later.own, later.borrowed, later.lent, later.idle_guarantee) == (
        None, None, None, None, None)
    assert rows[("a", T0 + INTERVAL_SECONDS)].missing
    class_rows = [r for r in result.class_rows() if r.interval_start == T0 + INTERVAL_SECONDS]
    assert [(r.team, r.priority_class, r.missing, r.used) for r in class_rows] == [("b", "training", True, None)]


def test_use_beyond_capacity_is_refused() -> None:
    """16 GPUs; 10 + 8 GPUs from +100 s: 18 > 16, an error at 10:01:40 (18 * 56 = 1008 units, 16 * 56 = 896)."""
    with pytest.raises(AccountingError, match=r"at 2026-03-02T10:01:40Z: 1008 units in use, capacity 896"):
        run(pool(16, {"a": 8, "b": 8}), [span("a", 10, 0, 300), span("b", 8, 100, 200)])


def test_the_window_widens_to_whole_utc_intervals() -> None:
    """A window from +10 s to +310 s covers the intervals starting at +0 s and +300 s."""
    (result,) = account([], [pool(16, {"a": 8})], start=T0 + 10, end=T0 + 310, coverage={})

    assert result.interval_starts.tolist() == [T0, T0 + INTERVAL_SECONDS]
    assert not result.covered.any()
