"""Regenerate the golden resource graph the tests compare with: `make golden`
(= `python -m stacks.golden`). Review the diff before committing it: it is the reviewed picture of
what one project stack declares."""

from __future__ import annotations

import sys
from pathlib import Path

from stacks.graph import capture_graph

GOLDEN_STACK = "project-vision"
GOLDEN_FILE = Path(__file__).resolve().parent.parent / "tests" / "stacks" / "golden" / f"{GOLDEN_STACK}.json"
CONFIG = Path(__file__).resolve().parent.parent / "config"


def render() -> str:
    return capture_graph(CONFIG, GOLDEN_STACK).to_json(readable=True)


def main() -> None:
    GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN_FILE.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {GOLDEN_FILE}\n")


if __name__ == "__main__":
    main()
