"""The example org's example month (`tests/usage/example_month.py`: March 2026 on gpu-west, five
jobs) reported by `hypergov usage report --month 2026-03`, its hours and chargeback derived here
by hand from the jobs, the example tree and org.yaml's prices.

The tree (config/): gpu-west has 32 ml.p5.48xlarge (8 GPUs each: 256) and 16 ml.g5.12xlarge (4
GPUs each: 64), idle-resource sharing on. p5 guarantees: nlp 12 instances = 96 GPUs (Lend), recsys
4 = 32 (LendAndBorrow, may borrow 25 % = 8), vision 12 = 96 (LendAndBorrow, 50 % = 48): 224, so
32 GPUs are nobody's. g5: recsys 4 = 16, speech 8 = 32 (DontLend): 48 of 64. March has 744 hours.

Hours (GPU-hours, usage/SEMANTICS.md A1-A6):
- vision: train-base 96 GPUs x 100 h = 9,600 own. train-burst 48 GPUs x 10 h on top of it: 144 in
  use, 96 own, 48 borrowed: 480 borrowed. Those 48 are drawn first from the 32 nobody's GPUs (320
  GPU-h from nobody), the other 16 from the lenders' idle guarantees in proportion: nlp idle 96
  (nothing running), recsys idle 32: nlp lends 16 x 96/128 = 12 GPUs (120 GPU-h), recsys 4 (40).
  vision used 10,080, own 9,600, borrowed 480, lent 0, idle 96 x 744 - 9,600 = 61,824.
- nlp: pretrain 48 x 200 h = 9,600 own; lent 120; idle 71,424 - 9,600 - 120 = 61,704.
- recsys p5: ranker 40 GPUs x 5 h: 32 own (160), 8 borrowed (40, all from nobody's 32), preempted:
  200 lost; lent 40; idle 23,808 - 160 - 40 = 23,608. recsys g5: 16 x 744 = 11,904 idle.
- speech g5: asr 16 x 48 h = 768 own; idle 23,808 - 768 = 23,040.
- p5 pool: borrowed from nobody 320 + 40 = 360.

Chargeback (C1-C7): p5 55.04 / 8 = 6.88 per GPU-hour, g5 5.67 / 4 = 1.4175; a team pays own +
borrowed + idle guarantee.
- vision: (9,600 + 480 + 61,824) x 6.88 = 71,904 x 6.88 = 494,699.52 (own 66,048.00, borrowed
  3,302.40, idle 425,349.12).
- nlp: (9,600 + 61,704) x 6.88 = 71,304 x 6.88 = 490,571.52; lent 120 x 6.88 = 825.60.
- recsys: p5 (160 + 40 + 23,608) x 6.88 = 23,808 x 6.88 = 163,799.04, lent 275.20, lost 200 x 6.88
  = 1,376.00; g5 11,904 x 1.4175 = 16,873.92; total 180,672.96.
- speech: (768 + 23,040) x 1.4175 = 23,808 x 1.4175 = 33,747.84.
- p5 pool: 256 x 744 = 190,464 GPU-h x 6.88 = 1,310,392.32; nobody used nor was guaranteed
  190,464 - 166,656 - 360 = 23,448 GPU-h = 161,322.24; charged to teams 494,699.52 + 490,571.52 +
  163,799.04 = 1,149,070.08, and 1,149,070.08 + 161,322.24 = 1,310,392.32.
- g5 pool: 64 x 744 = 47,616 x 1.4175 = 67,495.68; charged 16,873.92 + 33,747.84 = 50,621.76;
  nobody's 16 x 744 = 11,904 x 1.4175 = 16,873.92.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.usage.example_month import GOLDEN, report

GPU_HOURS = {  # (team, instance type): used, own, borrowed, lent, idle guarantee, lost to preemption
    ("vision", "ml.p5.48xlarge"): (10_080, 9_600, 480, 0, 61_824, 0),
    ("nlp", "ml.p5.48xlarge"): (9_600, 9_600, 0, 120, 61_704, 0),
    ("recsys", "ml.p5.48xlarge"): (200, 160, 40, 40, 23_608, 200),
    ("recsys", "ml.g5.12xlarge"): (0, 0, 0, 0, 11_904, 0),
    ("speech", "ml.g5.12xlarge"): (768, 768, 0, 0, 23_040, 0),
}
CHARGES = {  # team: own, borrowed, idle guarantee, total, lent, lost to preemption
    "vision": ("66048.00", "3302.40", "425349.12", "494699.52", "0.00", "0.00"),
    "nlp": ("66048.00", "0.00", "424523.52", "490571.52", "825.60", "0.00"),
    "recsys": ("1100.80", "275.20", "179296.96", "180672.96", "275.20", "1376.00"),
    "speech": ("1088.64", "0.00", "32659.20", "33747.84", "0.00", "0.00"),
}


def test_the_months_hours_and_chargeback_are_the_hand_derived_ones(tmp_path: Path) -> None:
    result = report(tmp_path, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    hours = {(t["team"], t["instance_type"]): tuple(t[f] for f in ("used", "own", "borrowed", "lent", "idle_guarantee",
                                                                 "lost_to_preemption"))
             for t in data["teams"] if t["kind"] == "gpu"}
    assert hours.keys() == GPU_HOURS.keys()
    for key, expected in GPU_HOURS.items():
        assert hours[key] == pytest.approx(expected), key
    (p5,) = [p for p in data["pools"] if p["instance_type"] == "ml.p5.48xlarge" and p["kind"] == "gpu"]
    assert (p5["capacity_hours"], p5["from_nobody"], p5["missing_intervals"]) == pytest.approx((190_464, 360, 0))
    charges = {t["team"]: (t["own"], t["borrowed"], t["idle_guarantee"], t["total"], t["lent"],
                           t["lost_to_preemption"]) for t in data["chargeback"]["teams"]}
    assert charges == CHARGES
    pools = {p["instance_type"]: (p["capacity_cost"], p["charged"], p["unguaranteed_idle_cost"])
             for p in data["chargeback"]["pools"]}
    assert pools == {"ml.p5.48xlarge": ("1310392.32", "1149070.08", "161322.24"),
                     "ml.g5.12xlarge": ("67495.68", "50621.76", "16873.92")}


def test_the_markdown_report_is_the_golden_one(tmp_path: Path) -> None:
    """`python -m tests.usage.example_month` rewrites the golden after a deliberate change."""
    result = report(tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout == GOLDEN.read_text(encoding="utf-8")
