"""The simulator core never imports the config models (only `adapter` may; the CLI lives in cli/capacity.py), so it
can be reused, tested and benchmarked without a governance tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import capacity

PACKAGE = Path(capacity.__file__).parent
CORE = ["spec", "ledger", "pending", "queue_index", "preemption", "engine", "placement", "recorder", "results",
        "invariants", "synth", "trace", "philly", "runner", "diff", "render", "plots"]
FORBIDDEN = ("hypergov.model", "hypergov.loader", "hypergov.validate", "hypergov.gitsource", "cli.main",
             "hypergov.rules", "capacity.adapter", "cli.capacity")


def _imports(module: str) -> list[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


@pytest.mark.parametrize("module", [pytest.param(m, id=m) for m in CORE])
def test_core_module_does_not_import_config_models(module: str) -> None:
    bad = [name for name in _imports(module) if name.startswith(FORBIDDEN)]
    assert bad == [], f"capacity.{module} imports {bad}"


def test_every_module_is_classified() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert modules == set(CORE) | {"adapter"}
