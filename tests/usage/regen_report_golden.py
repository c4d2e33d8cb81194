"""Rewrite tests/usage/golden/usage-report.md from the period of tests/usage/report_fixtures.py:
`python -m tests.usage.regen_report_golden` from the repository root (or `make golden`). Review the
diff before committing: tests/usage/test_report.py also checks the figures by hand."""

from __future__ import annotations

from tests.usage.report_fixtures import GOLDEN, TITLE, period
from usage.report import markdown


def main() -> None:
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(markdown(period(), title=TITLE), encoding="utf-8")
    print(GOLDEN)


if __name__ == "__main__":
    main()
