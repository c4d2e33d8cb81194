"""Rewrite tests/core/golden/merge_request/*.md from the cases in tests/core/merge_request_cases.py:
`python -m tests.core.regen_governance_golden` from the repository root (or `make golden`). Review
the diff before committing: the golden test also checks each case's figures by hand."""

from __future__ import annotations

from tests.core.merge_request_cases import CASES, GOLDEN, comment_sections


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        case.golden.write_text(comment_sections(case), encoding="utf-8")
        print(case.golden)


if __name__ == "__main__":
    main()
