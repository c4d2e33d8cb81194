"""The project-vision stack's graph equals the reviewed golden file. After an intended change,
regenerate it with `make golden` and review the diff."""

from __future__ import annotations

from stacks.golden import GOLDEN_FILE, render


def test_project_vision_graph_matches_golden_file() -> None:
    assert render() == GOLDEN_FILE.read_text(encoding="utf-8"), "graph changed: run 'make golden' and review the diff"
