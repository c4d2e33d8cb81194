"""A production install (`pip install hypergov`) carries no mock AWS: moto is only in the
`embedded` extra, and every command but the embedded endpoint works without it. The endpoint
itself says which extra to install instead of a traceback.

moto cannot be uninstalled from the test environment, so each check runs in a child Python whose
import system refuses `moto` (and werkzeug, which only moto's server brings), as an interpreter
without the extra would."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from embedded_aws.command import MISSING_EXTRA

REPO = Path(__file__).resolve().parents[2]
WITHOUT_MOTO = """
import importlib.abc, sys
class NoMoto(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("moto", "werkzeug"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NoMoto())
"""


def _hypergov_without_moto(*args: str) -> subprocess.CompletedProcess[str]:
    code = WITHOUT_MOTO + f"sys.argv = ['hypergov', *{list(args)!r}]\nfrom cli.main import run\nrun()\n"
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_moto_is_only_in_the_embedded_extra() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("moto")]
    assert any(d.startswith("moto[server]") for d in project["optional-dependencies"]["embedded"])


@pytest.mark.parametrize("args", [("--help",), ("plan", "--help"), ("reconcile", "--help"),
                                  ("validate", "--config", "config"), ("stacks", "list", "--config", "config")])
def test_commands_work_without_moto(args: tuple[str, ...]) -> None:
    result = _hypergov_without_moto(*args)
    assert result.returncode == 0, result.stderr
    assert "moto" not in result.stderr


def test_the_engines_and_the_reconciler_never_load_moto() -> None:
    code = WITHOUT_MOTO + ("import engines.factory, engines.terraform.engine, reconciler.reconcile, cli.plan\n"
                           "print(sorted(m for m in sys.modules if m.startswith('moto')))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_embedded_endpoint_names_the_extra_it_needs() -> None:
    result = _hypergov_without_moto("embedded-aws", "--port", "0")
    assert result.returncode == 1
    assert MISSING_EXTRA in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
