"""deploy/: what can be checked without a Docker engine (none runs on the build machines): the
Dockerfile's build context paths exist and cover every package the project installs, and the
image holds the provider hypergov pins; the systemd unit passes `systemd-analyze verify` (else its
keys are read with configparser); every option the Dockerfile and the unit pass to `hypergov
reconcile` is one it has. The Helm chart (deploy/chart/) is rendered and checked by test_chart.py."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from cli.reconcile import reconcile_cmd
from engines.settings import Settings
from engines.terraform.workspace import PROVIDER_ADDR

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def _dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text()


def test_the_dockerfile_copies_what_exists_and_every_package() -> None:
    text = _dockerfile().replace("\\\n", " ")
    sources = [line.split()[1:-1] for line in text.splitlines()
               if line.startswith("COPY ") and "--from=" not in line]
    copied = [s for group in sources for s in group]
    missing = [s for s in copied if not (REPO / s).exists()]
    assert not missing, f"the Dockerfile copies paths the build context lacks: {missing}"
    include = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {p.removesuffix("*") for p in include}
    assert packages <= set(copied), f"packages pip would install but the image lacks: {packages - set(copied)}"
    assert {"requirements.lock", "pyproject.toml", "README.md"} <= set(copied)
    assert "--constraint requirements.lock" in text  # hypergov installed at the lock's versions


def test_the_image_holds_the_provider_hypergov_pins_in_the_mirror_layout_it_reads() -> None:
    text = _dockerfile()
    version = re.search(r"^ARG AWS_PROVIDER_VERSION=(\S+)$", text, re.M)
    assert version and version.group(1) == Settings().terraform.provider_version
    mirror = re.search(r"HYPERGOV_TERRAFORM_PLUGIN_MIRROR=(\S+)", text)
    assert mirror
    assert f'dest="{mirror.group(1)}/{"/".join(PROVIDER_ADDR)}/${{AWS_PROVIDER_VERSION}}/linux_${{TARGETARCH}}"' in text
    assert "HYPERGOV_TERRAFORM_PROVIDER_SOURCE=mirror" in text


def _unit(path: Path) -> configparser.ConfigParser:
    """A unit file's keys (systemd's are case-sensitive; a repeated key such as Environment= keeps
    its last value here, which is enough for these checks)."""
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(path.read_text())
    return unit


def _reconcile_args() -> dict[str, list[str]]:
    """The command line each deployment runs, after `hypergov`."""
    cmd = re.search(r"^CMD (\[.*?\])", _dockerfile().replace("\\\n", ""), re.M | re.S)
    assert cmd
    unit = _unit(DEPLOY / "hypergov-reconciler.service")
    exec_start = shlex.split(unit["Service"]["ExecStart"])
    assert exec_start[0].endswith("/hypergov")
    return {"Dockerfile": yaml.safe_load(cmd.group(1)), "systemd": exec_start[1:]}


def test_every_option_given_is_one_reconcile_has() -> None:
    known = {opt for param in reconcile_cmd.params for opt in param.opts}
    for where, args in _reconcile_args().items():
        assert args[0] == "reconcile", where
        given = {a.split("=", 1)[0] for a in args if a.startswith("--")}
        assert given <= known, f"{where}: unknown options {given - known}"
        assert {"--watch", "--metrics-port", "--log-format"} <= given, where


def test_the_systemd_unit() -> None:
    path = DEPLOY / "hypergov-reconciler.service"
    unit = _unit(path)
    service = unit["Service"]
    assert {"ExecStart", "User", "KillSignal", "TimeoutStopSec", "Restart"} <= set(service)
    assert service["KillSignal"] == "SIGTERM"  # lets the running stacks finish and records them
    assert int(service["TimeoutStopSec"]) >= 300
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    if shutil.which("systemd-analyze") is None:
        return
    # verify checks ExecStart's binary exists: point it at this environment's hypergov.
    here = Path(sys.executable).parent / "hypergov"
    assert here.exists()
    copy = path.read_text().replace(shlex.split(service["ExecStart"])[0], str(here))
    checked = Path(f"/tmp/hypergov-verify-{id(copy)}") / path.name
    checked.parent.mkdir(exist_ok=True)
    checked.write_text(copy)
    result = subprocess.run(["systemd-analyze", "verify", str(checked)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and path.name not in result.stderr, result.stderr
