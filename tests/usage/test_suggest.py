"""Guarantee proposals from per-day use (usage/SEMANTICS.md S1-S5), on hand-made days. A day's
figures are GPU-hours over 24 collected hours: a team using 24 GPUs all day used 576 GPU-hours."""

from __future__ import annotations

from usage.resources import ResourceKind
from usage.suggest import Guarantee, Thresholds, propose
from usage.summary import TeamDay

P5 = "ml.p5.48xlarge"
DAY = 86400


def day(team: str, n: int, *, used: float, guarantee: float, missing: int = 0) -> TeamDay:
    """`used` and `guarantee` in GPUs held all day; own is what the guarantee covers."""
    own = min(used, guarantee)
    return TeamDay(team, "west", P5, ResourceKind.GPU, n * DAY, used * 24, own * 24, (used - own) * 24, 0.0,
                   (guarantee - own) * 24, guarantee * 24, missing)


def guarantee(team: str, instances: int) -> Guarantee:
    return Guarantee(team, "west", P5, "instances", instances, 8)


def test_a_team_borrowing_every_day_is_raised_to_what_it_typically_uses() -> None:
    """a: 2 instances (16 GPUs), uses 20, 21, ... 28, 20 GPUs on ten days (median (23 + 24) / 2 =
    23.5), borrowing every day: raise to 23.5 / 8 = 2.9, so 3 instances.
    The pool has 48 GPUs, 32 guaranteed: 16 free, the extra 8 fit."""
    days = [day("a", n, used=20 + n % 9, guarantee=16) for n in range(10)]
    proposals, notes = propose(days, [guarantee("a", 2), guarantee("b", 2)], {("west", P5): 48})
    assert [(p.guarantee.team, p.guarantee.amount, p.proposed) for p in proposals] == [("a", 2, 3)]
    assert proposals[0].evidence.borrow_days == 10 and proposals[0].evidence.median_in_use == 23.5
    assert any("b on west" in n and "0 day(s)" in n for n in notes)


def test_a_team_whose_guarantee_idles_is_lowered_to_what_covers_nine_days_in_ten() -> None:
    """b: 3 instances (24 GPUs), uses 1, 2, ... 10 GPUs on ten days: its median day uses 5.5 of 24
    (23 %, under 50 %); the 90th percentile of the daily use is 9 GPUs: 2 instances."""
    days = [day("b", n, used=n + 1, guarantee=24) for n in range(10)]
    proposals, _ = propose(days, [guarantee("b", 3)], {("west", P5): 48})
    (lowered,) = proposals
    assert (lowered.guarantee.amount, lowered.proposed) == (3, 2) and not lowered.raises
    assert lowered.evidence.p90_in_use == 9 and round(lowered.evidence.median_guarantee_use, 4) == round(5.5 / 24, 4)


def test_raises_share_what_the_pool_holds_in_order_of_the_hours_borrowed() -> None:
    """Pool 40 GPUs; a and c hold 2 instances each, b 1 (40 guaranteed: nothing free). b idles
    (uses 1 GPU of 8: lowered to 1 instance, no change: the floor is one unit) so nothing frees;
    a (borrows 12 a day) and c (borrows 4) cannot be raised: noted, not proposed."""
    days = [day("a", n, used=28, guarantee=16) for n in range(8)] + \
           [day("c", n, used=20, guarantee=16) for n in range(8)] + [day("b", n, used=1, guarantee=8) for n in range(8)]
    proposals, notes = propose(days, [guarantee("a", 2), guarantee("b", 1), guarantee("c", 2)], {("west", P5): 40})
    assert proposals == []
    assert sum("no guarantee left to give" in n for n in notes) == 2


def test_a_lowered_team_frees_room_for_a_raise_and_a_raise_is_cut_to_what_fits() -> None:
    """Pool 40 GPUs: a 2 instances (borrows, uses 36: wants 5), b 3 instances idle (uses 2: down to 1).
    b's lowering frees 16 GPUs: a may grow to 40 - 8 = 32 GPUs = 4 instances, not 5."""
    days = [day("a", n, used=36, guarantee=16) for n in range(7)] + \
        [day("b", n, used=2, guarantee=24) for n in range(7)]
    proposals, notes = propose(days, [guarantee("a", 2), guarantee("b", 3)], {("west", P5): 40})
    assert [(p.guarantee.team, p.proposed) for p in proposals] == [("b", 1), ("a", 4)]
    assert any("raised to 4 instances, not 5" in n for n in notes)


def test_days_mostly_missing_do_not_count_and_too_few_days_propose_nothing() -> None:
    """Seven days borrowed, but three of them with 13 of 24 hours missing (156 intervals): four
    days count, fewer than the seven needed."""
    days = [day("a", n, used=30, guarantee=16, missing=156 if n < 3 else 0) for n in range(7)]
    proposals, notes = propose(days, [guarantee("a", 2)], {("west", P5): 64}, thresholds=Thresholds(min_days=7))
    assert proposals == [] and "4 day(s) of data" in notes[0]
