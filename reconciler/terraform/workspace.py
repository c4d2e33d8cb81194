"""Where terraform runs: the provider mirror, the CLI configuration, the shared plugin cache,
and the environment of every terraform process.

The Terraform registry is not reachable from every machine (nor should production depend on
it), so hypergov installs the AWS provider only from a filesystem mirror: the one configured, or
one discovered in Terraform's documented implied-mirror directories and a few common roots.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from reconciler.outcomes import PermanentError

PROVIDER_ADDR = ("registry.terraform.io", "hashicorp", "aws")
_SEARCH_ROOTS = ("/opt", "/usr/local/share", "/usr/share", "/usr/local/lib", "/var/lib")
_MAX_DEPTH = 5


class MirrorNotFoundError(PermanentError):
    """No provider mirror where one is required; the message says where to point hypergov."""

    reason = "missing-provider"


def os_arch() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"{platform.system().lower()}_{arch}"


def _implied_mirrors(home: Path) -> list[Path]:
    """Terraform's own implied local mirror directories (CLI configuration docs)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    dirs = [home / ".terraform.d" / "plugins"]
    if xdg:
        dirs.append(Path(xdg) / "terraform" / "plugins")
    dirs += [home / ".local" / "share" / "terraform" / "plugins",
             Path("/usr/local/share/terraform/plugins"), Path("/usr/share/terraform/plugins")]
    return dirs


def _has_provider(mirror: Path, version: str) -> bool:
    return (mirror.joinpath(*PROVIDER_ADDR) / version / os_arch()).is_dir()


def _walk(root: Path, depth: int) -> Iterator[Path]:
    if depth > _MAX_DEPTH:
        return
    try:
        entries = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for entry in entries:
        if entry.name == PROVIDER_ADDR[0]:
            yield entry.parent
        else:
            yield from _walk(entry, depth + 1)


def find_mirror(version: str, *, configured: Path | None = None, home: Path | None = None) -> Path:
    """The filesystem mirror holding hashicorp/aws `version` for this OS/arch."""
    if configured is not None:
        if _has_provider(configured, version):
            return configured
        raise MirrorNotFoundError(
            f"{configured} has no {'/'.join(PROVIDER_ADDR)}/{version}/{os_arch()}; "
            "fix terraform.plugin_mirror in hypergov.yaml (or HYPERGOV_TERRAFORM_PLUGIN_MIRROR)")
    for candidate in _implied_mirrors(home or Path.home()):
        if _has_provider(candidate, version):
            return candidate
    for root in _SEARCH_ROOTS:
        for candidate in _walk(Path(root), 0):
            if _has_provider(candidate, version):
                return candidate
    raise MirrorNotFoundError(
        f"no filesystem mirror with the Terraform AWS provider {version} for {os_arch()} was found; "
        "set terraform.plugin_mirror in hypergov.yaml (or HYPERGOV_TERRAFORM_PLUGIN_MIRROR) to a directory "
        f"containing {'/'.join(PROVIDER_ADDR)}/{version}/{os_arch()}/")


@dataclass(frozen=True)
class Workspace:
    """Shared files for every terraform process of one hypergov run."""

    root: Path  # state dir: <root>/<stack>/ holds each stack's config, state and plan files
    cli_config: Path
    plugin_cache: Path

    def stack_dir(self, stack: str) -> Path:
        path = self.root / "stacks" / stack
        path.mkdir(parents=True, exist_ok=True)
        return path

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if not k.startswith("TF_")}
        env.update({"TF_CLI_CONFIG_FILE": str(self.cli_config), "TF_PLUGIN_CACHE_DIR": str(self.plugin_cache),
                    "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"})
        return env


def prepare_workspace(root: Path, mirror: Path) -> Workspace:
    root.mkdir(parents=True, exist_ok=True)
    cache = root / "plugin-cache"
    cache.mkdir(exist_ok=True)
    cli_config = root / "terraform.tfrc"
    text = (
        "# written by hypergov: providers only from the local filesystem mirror\n"
        "provider_installation {\n"
        f"  filesystem_mirror {{\n    path = {_hcl_string(str(mirror))}\n  }}\n"
        '  direct {\n    exclude = ["*/*"]\n  }\n'
        "}\n"
        f"plugin_cache_dir = {_hcl_string(str(cache))}\n"
    )
    if not cli_config.exists() or cli_config.read_text() != text:
        cli_config.write_text(text)
    return Workspace(root=root, cli_config=cli_config, plugin_cache=cache)


def _hcl_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
