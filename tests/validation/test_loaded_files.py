"""Loading a second tree with the first's `LoadedFiles` (a merge request's base after its head)
gives exactly what loading it alone gives, and parses only the files that differ."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hypergov import loader
from hypergov.loader import LoadedFiles
from hypergov.validate import validate_files
from tests.example_tree import example_files

VISION = "projects/vision.yaml"
BROKEN = "projects/broken.yaml"  # a YAML syntax error, the same in both trees


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The display name of every file parsed, in order."""
    seen: list[str] = []
    real = loader.parse_document

    def counting(text: str | bytes, file: str) -> Any:
        seen.append(file)
        return real(text, file)

    monkeypatch.setattr(loader, "parse_document", counting)
    yield seen


def _trees() -> tuple[dict[str, bytes], dict[str, bytes]]:
    head = {**example_files(), BROKEN: b"description: [unclosed\n"}
    base = dict(head)
    base[VISION] = head[VISION].replace(b"monthly_usd: 250000", b"monthly_usd: 240000")
    assert base[VISION] != head[VISION]
    return head, base


def test_the_second_tree_parses_only_what_differs_and_loads_as_if_alone(parsed: list[str]) -> None:
    head, base = _trees()
    loaded = LoadedFiles()
    validate_files(head, reuse=loaded)
    objects = [rel for rel in head if rel.endswith(".yaml")]
    assert sorted(parsed) == sorted(f"config/{rel}" for rel in objects)
    parsed.clear()
    reused = validate_files(base, reuse=loaded)
    assert parsed == [f"config/{VISION}"]
    alone = validate_files(base)
    assert reused.tree == alone.tree and reused.problems == alone.problems
    budget = reused.tree.projects["vision"].model.budget
    assert budget is not None and budget.monthly_usd == 240000
    # the broken file's problem is reported for the second tree too, from the first's load
    assert [(p.rule, p.pos.file) for p in reused.problems if p.rule.startswith("SYN")] == [
        ("SYN001", f"config/{BROKEN}")]


def test_a_file_shown_under_another_name_is_loaded_again(parsed: list[str]) -> None:
    """Problems name their file: the same bytes under another display root are not reused."""
    head, _ = _trees()
    loaded = LoadedFiles()
    validate_files(head, reuse=loaded)
    parsed.clear()
    elsewhere = validate_files(head, display_root="governance/config", reuse=loaded)
    assert len(parsed) == len([rel for rel in head if rel.endswith(".yaml")])
    assert {p.pos.file for p in elsewhere.problems} == {f"governance/config/{BROKEN}"}
