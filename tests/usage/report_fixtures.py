"""A period built by hand for the report and chart tests and the golden report
(`python -m tests.usage.regen_report_golden`): 2026-03-02 and 2026-03-03 (48 hours, 576 five-minute
intervals per cluster). The figures keep SEMANTICS.md's invariants: own + borrowed = used;
own + lent + idle guarantee = the guarantee's hours; the pool's used = the teams' sum;
Σ borrowed = Σ lent + borrowed from nobody.

east, 16 ml.p5.48xlarge GPUs; east was not collected on 2026-03-03 10:00-12:00 (24 intervals), so
46 hours are covered: capacity 16 x 46 = 736 GPU-hours.
- alpha, guaranteed 8 GPUs (368 h), borrows: own 276, borrowed 100, idle 92; lost 20.5.
- beta, guaranteed 4 (184 h), lends: own 46, lent 60, idle 78.
- gamma, guaranteed 2 (92 h), idle all along.
- delta: no figure and no guarantee (left out of the Markdown).
Guaranteed 14 x 46 = 644; borrowed 100 = lent 60 + 40 from nobody; used 376 + 46 = 422.

west, 720 vCPUs of ml.c5.18xlarge, fully collected: capacity 720 x 48 = 34,560 vCPU-hours.
- alpha, guaranteed 288 vCPUs (13,824 h): own 10,368, lent 1,152, idle 2,304.
- beta, guaranteed 144 (6,912 h): own 6,912, borrowed 3,152 (1,152 lent by alpha, 2,000 from
  nobody); lost 500.5.
Guaranteed 432 x 48 = 20,736; used 10,368 + 10,064 = 20,432.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from usage.resources import ResourceKind
from usage.summary import MissingPeriod, PoolUsage, TeamDay, TeamUsage, UsagePeriod

GPU, VCPU = ResourceKind.GPU, ResourceKind.VCPU
P5, C5 = "ml.p5.48xlarge", "ml.c5.18xlarge"
DAY = 86400
START: Final = int(datetime(2026, 3, 2, tzinfo=UTC).timestamp())
END: Final = START + 2 * DAY
GAP_START: Final = START + DAY + 10 * 3600  # 2026-03-03 10:00
GAP_END: Final = GAP_START + 2 * 3600
TITLE = "GPU and vCPU usage, early March"
GOLDEN: Final = Path(__file__).resolve().parent / "golden" / "usage-report.md"


def period() -> UsagePeriod:
    teams = [
        TeamUsage("alpha", "east", P5, GPU, 376.0, 276.0, 100.0, 0.0, 92.0, 20.5),
        TeamUsage("beta", "east", P5, GPU, 46.0, 46.0, 0.0, 60.0, 78.0, 0.0),
        TeamUsage("gamma", "east", P5, GPU, 0.0, 0.0, 0.0, 0.0, 92.0, 0.0),
        TeamUsage("delta", "east", P5, GPU, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        TeamUsage("alpha", "west", C5, VCPU, 10368.0, 10368.0, 0.0, 1152.0, 2304.0, 0.0),
        TeamUsage("beta", "west", C5, VCPU, 10064.0, 6912.0, 3152.0, 0.0, 0.0, 500.5),
    ]
    pools = [
        PoolUsage("west", C5, VCPU, 34560.0, 20736.0, 20432.0, 2000.0, 576, 0),
        PoolUsage("east", P5, GPU, 736.0, 644.0, 422.0, 40.0, 576, 24),
    ]
    # (team, cluster, type, kind): per day (used, own, borrowed, lent, idle, guarantee); day 2 of east
    # has the 24 missing intervals, so its guarantees are of 22 hours.
    series: dict[tuple[str, str, str, ResourceKind], list[tuple[int, ...]]] = {
        ("alpha", "east", P5, GPU): [(210, 150, 60, 0, 42, 192), (166, 126, 40, 0, 50, 176)],
        ("beta", "east", P5, GPU): [(20, 20, 0, 30, 46, 96), (26, 26, 0, 30, 32, 88)],
        ("gamma", "east", P5, GPU): [(0, 0, 0, 0, 48, 48), (0, 0, 0, 0, 44, 44)],
        ("delta", "east", P5, GPU): [(0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0)],
        ("alpha", "west", C5, VCPU): [(5184, 5184, 0, 576, 1152, 6912)] * 2,
        ("beta", "west", C5, VCPU): [(5032, 3456, 1576, 0, 0, 3456)] * 2,
    }
    days = [_day(key, n, figures) for key, per_day in series.items() for n, figures in enumerate(per_day)]
    return UsagePeriod(START, END, teams, pools, days, [MissingPeriod("east", GAP_START, GAP_END)])


def _day(key: tuple[str, str, str, ResourceKind], n: int, figures: tuple[int, ...]) -> TeamDay:
    """Day n of the period; the hours as floats, as the warehouse gives them."""
    team, cluster, instance_type, kind = key
    used, own, borrowed, lent, idle, guarantee = (float(f) for f in figures)
    return TeamDay(team, cluster, instance_type, kind, START + n * DAY, used, own, borrowed, lent, idle, guarantee,
                   24 if (cluster, n) == ("east", 1) else 0)
