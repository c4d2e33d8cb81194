"""The example tree in `config/` is the base of every corpus case, so it must be clean: zero
errors and zero warnings. And the JSON Schemas in `schema/` (what editors check against) must be
exactly what the models generate today."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_overlay import EXAMPLE_DIR

from hypergov.schema import schema_documents
from hypergov.validate import validate_dir

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"
REGENERATE = "run '.venv/bin/hypergov schema --out schema' and commit the result"


def test_example_tree_has_no_errors_and_no_warnings() -> None:
    report = validate_dir(EXAMPLE_DIR)
    assert report.ok
    assert report.problems == [], "\n".join(f"{p.pos} {p.rule} {p.message}" for p in report.problems)


def test_example_tree_is_complete() -> None:
    tree = validate_dir(EXAMPLE_DIR).tree
    assert tree.complete
    assert sorted(tree.projects) == ["nlp", "recsys", "research", "speech", "vision"]
    assert sorted(tree.clusters) == ["gpu-west", "trn-east"]
    assert len(tree.workloads) == 5


def test_schema_directory_holds_exactly_the_generated_schemas() -> None:
    on_disk = {p.name for p in SCHEMA_DIR.glob("*.json")}
    assert on_disk == set(schema_documents()), REGENERATE


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in sorted(schema_documents())])
def test_schema_file_is_up_to_date(name: str) -> None:
    path = SCHEMA_DIR / name
    assert path.exists(), REGENERATE
    assert path.read_text(encoding="utf-8") == schema_documents()[name], f"{name} is stale; {REGENERATE}"
