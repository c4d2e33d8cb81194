"""Running the real terraform binary against the embedded endpoint, for the integration test.

The provider comes from a filesystem mirror (the registry is unreachable here): the mirror root
is taken from HYPERGOV_TF_PROVIDER_MIRROR when set, else discovered on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIRROR_ENV = "HYPERGOV_TF_PROVIDER_MIRROR"
PROVIDER_DIR = Path("registry.terraform.io") / "hashicorp" / "aws"
# Where machine images usually put a mirror; the full-disk search below is the slow fallback.
CANDIDATE_ROOTS = (Path("/opt"), Path("/usr/local/share"), Path("/usr/share"), Path.home() / ".terraform.d")


def find_provider_mirror() -> Path | None:
    """The root of a filesystem mirror holding hashicorp/aws, or None."""
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        return Path(configured)
    for root in CANDIDATE_ROOTS:
        for dirpath, dirnames, _ in os.walk(root):
            if (Path(dirpath) / PROVIDER_DIR).is_dir():
                return Path(dirpath)
            if Path(dirpath).relative_to(root).parts.__len__() >= 2:
                dirnames.clear()
    found = subprocess.run(["find", "/", "-path", f"*{PROVIDER_DIR}*", "-name", "terraform-provider-aws*"],
                           capture_output=True, text=True, check=False).stdout.split()
    if not found:
        return None
    path = Path(found[0])
    while path != path.parent and not (path / PROVIDER_DIR).is_dir():
        path = path.parent
    return path if (path / PROVIDER_DIR).is_dir() else None


@dataclass(frozen=True)
class Terraform:
    """terraform with a private CLI config (the mirror) and a shared plugin cache."""

    workdir: Path
    env: dict[str, str]

    @classmethod
    def prepare(cls, *, workdir: Path, mirror: Path, plugin_cache: Path) -> Terraform:
        workdir.mkdir(parents=True, exist_ok=True)
        plugin_cache.mkdir(parents=True, exist_ok=True)
        cli_config = workdir.parent / "terraform.rc"
        cli_config.write_text(
            f'provider_installation {{\n  filesystem_mirror {{ path = "{mirror}" }}\n'
            '  direct { exclude = ["*/*"] }\n}\n', encoding="utf-8")
        env = {**os.environ, "TF_CLI_CONFIG_FILE": str(cli_config), "TF_PLUGIN_CACHE_DIR": str(plugin_cache),
               "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"}
        for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            env.pop(name, None)
        return cls(workdir=workdir, env=env)

    def write_config(self, config: dict[str, object]) -> None:
        (self.workdir / "main.tf.json").write_text(json.dumps(config, indent=2), encoding="utf-8")

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        binary = shutil.which("terraform")
        assert binary is not None, "terraform is not on PATH"
        return subprocess.run([binary, *args, "-no-color"], cwd=self.workdir, env=self.env, capture_output=True,
                              text=True, timeout=timeout, check=False)


def module_terraform(tmp_path_factory: Any, name: str) -> Terraform:
    """A prepared terraform working directory of a test module (its own plugin cache), skipped
    where terraform or the provider mirror is missing."""
    import pytest

    if shutil.which("terraform") is None:
        pytest.skip("terraform is not on PATH")
    mirror = find_provider_mirror()
    if mirror is None:
        pytest.skip("no filesystem mirror with hashicorp/aws found (set HYPERGOV_TF_PROVIDER_MIRROR)")
    root = tmp_path_factory.mktemp(name)
    return Terraform.prepare(workdir=root / "stack", mirror=mirror, plugin_cache=root / "plugin-cache")
