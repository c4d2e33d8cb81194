"""Invariants over random pools and spans (hypothesis), and agreement with a second-by-second
reference that applies SEMANTICS.md A1-A5 literally at every instant (integer times, so every
second is one constant piece)."""

from __future__ import annotations

import math
from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from usage.accounting import INTERVAL_SECONDS, LENDING, AccountingError, Pool, PoolAccount, account
from usage.resources import GPU_UNITS, ResourceKind
from usage.spans import Span

T0 = 1772445600
WINDOW = 3 * INTERVAL_SECONDS
TEAMS = ("a", "b", "c", "d")
HOUR = GPU_UNITS * 3600  # unit-seconds per GPU-hour
TOL = 1e-7


@st.composite
def cases(draw: st.DrawFn) -> tuple[Pool, list[Span]]:
    guarantees = {t: draw(st.integers(0, 16)) for t in TEAMS}
    sharing = {t: draw(st.sampled_from(["Lend", "DontLend", "LendAndBorrow"])) for t in TEAMS}
    capacity = sum(guarantees.values()) + draw(st.integers(0, 16))
    spans = []
    for _ in range(draw(st.integers(0, 12))):
        start = draw(st.integers(-60, WINDOW))
        spans.append(Span(draw(st.sampled_from(TEAMS)), "east", "ml.p5.48xlarge", ResourceKind.GPU,
                          draw(st.sampled_from(["training", "inference", None])), draw(st.integers(1, 12)),
                          T0 + start, T0 + start + draw(st.integers(1, WINDOW)), draw(st.booleans())))
    pool = Pool("east", "ml.p5.48xlarge", ResourceKind.GPU, capacity, guarantees, sharing,  # type: ignore[arg-type]
                draw(st.booleans()))
    return pool, spans


def reference(pool: Pool, spans: list[Span]) -> dict[str, dict[tuple[str, int], float]] | None:
    """Unit-seconds per (team, interval) of every figure, second by second; None when some second
    breaks capacity or borrows more than can be lent (the accounting must refuse those)."""
    out: dict[str, dict[tuple[str, int], float]] = defaultdict(lambda: defaultdict(float))
    for second in range(WINDOW):
        now, interval = T0 + second, second // INTERVAL_SECONDS
        use: dict[str, int] = defaultdict(int)
        for s in spans:
            if s.start <= now < s.end:
                use[s.team] += s.units
        if sum(use.values()) > pool.capacity:
            return None
        teams = set(pool.guarantees) | set(use)
        own = {t: min(use[t], pool.guarantees.get(t, 0)) for t in teams}
        borrowed = sum(use[t] - own[t] for t in teams)
        nobody = min(borrowed, pool.unguaranteed)
        idle = {t: pool.guarantees.get(t, 0) - own[t] for t in teams}
        lendable = sum(idle[t] for t in teams if pool.strategy(t) in LENDING)
        if borrowed - nobody > lendable:
            return None
        for t in teams:
            lent = (borrowed - nobody) * idle[t] / lendable if pool.strategy(t) in LENDING and lendable else 0.0
            for name, value in (("used", use[t]), ("own", own[t]), ("borrowed", use[t] - own[t]), ("lent", lent),
                                ("idle_guarantee", idle[t] - lent)):
                out[name][(t, interval)] += value
        out["from_nobody"][("", interval)] += nobody
    return out


def _run(pool: Pool, spans: list[Span]) -> PoolAccount | None:
    try:
        (result,) = account(spans, [pool], start=T0, end=T0 + WINDOW, coverage={"east": [(T0, T0 + WINDOW)]})
    except AccountingError:
        return None
    return result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_sweep_agrees_with_the_second_by_second_reference(case: tuple[Pool, list[Span]]) -> None:
    pool, spans = case
    expected, result = reference(pool, spans), _run(pool, spans)

    assert (expected is None) == (result is None)  # refused exactly when some instant breaks the rules
    if result is None or expected is None:
        return
    for field in ("used", "own", "borrowed", "lent", "idle_guarantee"):
        for i, t in enumerate(result.teams):
            for j in range(len(result.interval_starts)):
                assert math.isclose(getattr(result, field)[i, j], expected[field][(t, j)] / HOUR, abs_tol=TOL), field
    for j in range(len(result.interval_starts)):
        assert math.isclose(result.from_nobody[j], expected["from_nobody"][("", j)] / HOUR, abs_tol=TOL)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_invariants_per_interval(case: tuple[Pool, list[Span]]) -> None:
    pool, spans = case
    result = _run(pool, spans)
    if result is None:
        return
    seconds = INTERVAL_SECONDS / 3600
    unguaranteed = (pool.capacity - sum(pool.guarantees.values())) / GPU_UNITS * seconds
    for j in range(len(result.interval_starts)):
        used, own, borrowed = result.used[:, j], result.own[:, j], result.borrowed[:, j]
        lent, idle = result.lent[:, j], result.idle_guarantee[:, j]
        assert all(abs(o + b - u) < TOL for o, b, u in zip(own, borrowed, used, strict=True))
        assert used.sum() <= pool.capacity / GPU_UNITS * seconds + TOL
        assert abs(borrowed.sum() - lent.sum() - result.from_nobody[j]) < TOL
        assert result.from_nobody[j] <= (unguaranteed if pool.shares_idle else 0.0) + TOL
        for i, t in enumerate(result.teams):
            guarantee = pool.guarantees.get(t, 0) / GPU_UNITS * seconds
            assert lent[i] <= guarantee - own[i] + TOL
            assert abs(guarantee - own[i] - lent[i] - idle[i]) < TOL
            if pool.strategy(t) == "DontLend":
                assert lent[i] == 0.0
        for figures in (used, own, borrowed, lent, idle, result.class_used[:, j], result.class_own[:, j],
                        result.class_borrowed[:, j], result.class_lost[:, j], result.from_nobody[j:j + 1]):
            assert (figures >= -TOL).all()
        for i, t in enumerate(result.teams):
            mine = [n for n, (owner, _) in enumerate(result.classes) if owner == t]
            assert abs(result.class_used[mine, j].sum() - used[i]) < TOL
            assert abs(result.class_own[mine, j].sum() - own[i]) < TOL
            assert (result.class_lost[mine, j] <= result.class_used[mine, j] + TOL).all()


@settings(max_examples=60, deadline=None)
@given(cases())
def test_lost_hours_are_the_used_hours_of_preempted_attempts(case: tuple[Pool, list[Span]]) -> None:
    """Summed over the window, a class's lost hours are its preempted spans' units x clipped seconds."""
    pool, spans = case
    result = _run(pool, spans)
    if result is None:
        return
    for n, (t, priority) in enumerate(result.classes):
        expected = sum(s.units * (min(s.end, T0 + WINDOW) - max(s.start, T0)) for s in spans
                       if s.team == t and s.priority_class == priority and s.preempted and s.end > T0)
        assert math.isclose(result.class_lost[n].sum(), expected / HOUR, abs_tol=TOL)
