"""The merge-request comment's sections above the resource tables (governance summary and
validation results, or the invalid-tree comment) for representative changes to the example tree,
pinned as golden files. Regenerate with `python -m tests.core.regen_governance_golden` and review the
diff.

Each case's figures are also checked by hand below, independently of the golden files. The
example tree (config/): gpu-west has 32 ml.p5.48xlarge (8 GPUs each: NVIDIA H100, AWS's P5
instance page) and 16 ml.g5.12xlarge (4 GPUs each: NVIDIA A10G, AWS's G5 instance page), so
32 x 8 + 16 x 4 = 320 GPUs. Guarantees there: ml.p5.48xlarge nlp 12 + recsys 4 + vision 12 =
28 instances = 224 GPUs; ml.g5.12xlarge recsys 4 + speech 8 = 12 instances = 48 GPUs; together
272 GPUs, 272 / 320 = 85%.
"""

from __future__ import annotations

import pytest

from tests.core.merge_request_cases import CASES, Case, comment_sections

# Lines each case's comment must hold, and why the numbers are right.
HAND_CHECKED: dict[str, list[str]] = {
    # vision 12 -> 16 p5 = 96 -> 128 GPUs; gpu-west 272 + 4 x 8 = 304 of 320 = 95%
    "quota-increase": ["| `vision` | `gpu-west` | `ml.p5.48xlarge` | 12 → 16 | 96 → 128 |",
                       "| `gpu-west` | 272 → 304 | 320 | 85% → 95% |"],
    "members-added-and-removed": ["  - `+ arn:aws:iam::111122223333:user/dan` (Engineer)",
                                  "  - `- identitycenter:group/finance-analysts` (Viewer)"],
    "permission-added": ["**Project `vision`**", "- **Permissions**", "  - `+ s3:DeleteObject` (Engineer)"],
    "budget-change": ["- **Budget**: $120,000 → $90,000 a month",
                      "- **Budget alerts** at: 50%, 80%, 100% → 80%, 100%"],
    "workload-class-change": ["- **Workload class** `large-training`", "  - `max_gpus_per_job`: 96 → 128",
                              "  - `max_run_time`: 7d → 10d", "- **Workload class** `ranking` (new)",
                              "  - `max_gpus_per_job`: 16"],
    # vision stops borrowing: its written borrow limit 50% goes; recsys 25% -> 100%
    "sharing-and-borrow-limit": ["- **Sharing** on `gpu-west`: LendAndBorrow → Lend, borrow limit 50% → —",
                                 "- **Sharing** on `gpu-west`: LendAndBorrow, borrow limit 25% → 100%",
                                 "- **Fair-share weight**: 40 → 50"],
    # audio: 2 p5 x 8 = 16 GPUs, 4 g5.12xlarge x 4 = 16 GPUs; gpu-west 272 + 32 = 304 (95%);
    # fair-share weight left out: HyperPod's default 0
    "new-project": ["| `audio` | `gpu-west` | `ml.p5.48xlarge` | 0 → 2 | 0 → 16 |",
                    "| `audio` | `gpu-west` | `ml.g5.12xlarge` | 0 → 4 | 0 → 16 |",
                    "| `gpu-west` | 272 → 304 | 320 | 85% → 95% |", "**Project `audio` (new)**",
                    "- **Fair-share weight**: 0", "- **Budget**: $50,000 a month, alerts at 80%, 100%"],
    # speech's 8 g5.12xlarge x 4 = 32 GPUs freed: 272 - 32 = 240 of 320 = 75%
    "removed-project": ["| `speech` | `gpu-west` | `ml.g5.12xlarge` | 8 → 0 | 32 → 0 |",
                        "| `gpu-west` | 272 → 240 | 320 | 85% → 75% |", "**Project `speech` (removed)**",
                        "- **Budget** removed (was $120,000 a month)", "- **Workload class** `serving` (removed)"],
    # 40 p5 x 8 + 16 g5.12xlarge x 4 = 384 GPUs; 272 / 384 = 70.8%
    "cluster-capacity-and-priorities": ["| `gpu-west` | 272 | 320 → 384 | 85% → 71% |",
                                        "- **Capacity** `ml.p5.48xlarge`: 32 → 40 instances (256 → 320 GPUs)",
                                        "- **Priority class** `+ urgent` weight 90",
                                        "- **Priority class** `training` weight 60 → 70",
                                        "- `scheduler.fair_share`: true → false"],
    "org-boundary-and-personas": ["  - `+ logs:StartQuery` (allow)", "  - `+ logs:GetLogEvents` (Viewer)",
                                  "  - `+ identitycenter:user/erin`"],
    # nlp borrows on trn-east (nlp.yaml line 23: `sharing: LendAndBorrow`); research was its only lender
    "lending-stopped-warning": ["The changed tree is valid: no errors, 1 warning(s).",
                                "| `CAP004` | `config/projects/nlp.yaml:23` | team borrows on 'trn-east' but no "
                                "other team there lends its quota | borrowing will never succeed; use 'sharing: Lend' "
                                "or agree on lending with another team |"],
    "comment-only": ["No governance changes."],
    # p5 on gpu-west: vision 20 + nlp 12 + recsys 4 = 36 > 32 (the capacity at gpu-west.yaml line 14)
    "invalid-over-capacity": ["## hypergov plan: the config tree is invalid",
                              "| error | `CAP001` | `config/clusters/gpu-west.yaml:14` | ml.p5.48xlarge: teams "
                              "are guaranteed 36 instances (vision 20, nlp 12, recsys 4) but the cluster has 32 | "
                              "lower the teams' quotas by 4 in projects/\\*.yaml or raise this capacity when "
                              "hardware is added |"],
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_comment_matches_its_golden_file(case: Case) -> None:
    assert case.golden.exists(), "run 'python -m tests.core.regen_governance_golden'"
    assert comment_sections(case) == case.golden.read_text(encoding="utf-8"), (
        f"{case.golden.name} is stale: run 'python -m tests.core.regen_governance_golden' and review the diff")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_comment_holds_the_hand_checked_figures(case: Case) -> None:
    lines = comment_sections(case).splitlines()
    missing = [line for line in HAND_CHECKED[case.name] if line not in lines]
    assert not missing, missing


def test_every_case_is_hand_checked() -> None:
    assert set(HAND_CHECKED) == {c.name for c in CASES}


def test_valid_changes_put_the_summary_first_and_name_only_what_changed() -> None:
    by_name = {c.name: comment_sections(c) for c in CASES}
    for name, text in by_name.items():
        if name != "invalid-over-capacity":
            assert text.index("### Governance summary") < text.index("### Validation"), name
    assert "`nlp`" not in by_name["quota-increase"] and "**Project" not in by_name["quota-increase"]
    assert "Cluster `" not in by_name["new-project"]  # gpu-west itself did not change: its totals are in the table
    assert "### Governance summary" not in by_name["invalid-over-capacity"]
