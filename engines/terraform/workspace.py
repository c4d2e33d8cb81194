"""Where terraform runs: where the provider comes from, the CLI configuration, the shared
plugin cache and lock file, and the environment of every terraform process.

Not every machine reaches the Terraform registry (this build machine does not; an air-gapped
production runner should not need to), and not every machine has a filesystem mirror (a laptop
or a CI runner usually does not). So the source is a setting (`terraform.provider_source`):
`mirror` requires one (the one configured, or one discovered in Terraform's documented implied
mirror directories and a few common roots), `registry` installs from the registry, `auto` uses a
mirror when there is one and the registry otherwise. Whatever the source, the version is pinned
exactly and every stack's lock file is checked against one shared lock (`locks.py`).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engines.outcomes import PermanentError
from engines.settings import ProviderSourceName
from engines.terraform.locks import ProviderLock

PROVIDER_ADDR = ("registry.terraform.io", "hashicorp", "aws")
# Searched beyond the user's own directories: Terraform's system-wide implied mirrors, then a
# walk of a few roots where images and packages put shared files.
_SEARCH_ROOTS = (Path("/usr/local/share/terraform/plugins"), Path("/usr/share/terraform/plugins"), Path("/opt"),
                 Path("/usr/local/share"), Path("/usr/share"), Path("/usr/local/lib"), Path("/var/lib"))
_MAX_DEPTH = 5
SHARED_LOCK = "providers.lock.hcl"
PROVIDER_ENGINE_CACHE = "providers"  # the provider engine's per-machine cache (`engines.provider.pool`)
# Every provider process builds the AWS provider's whole schema (~1,500 resource types) again; a
# plan starts three (schema, validate, plan) and `show -json` one more, and with Go's default
# GOGC=100 much of that is garbage collection. 400 measured ~35% less CPU per plan for ~1.5x the
# peak memory of a provider process (~320 -> ~500 MB). A GOGC set in the environment wins.
GO_GC_PERCENT = "400"


class MirrorNotFoundError(PermanentError):
    """No filesystem mirror holds the provider although one is required. Permanent: the fix is a
    setting or an installed mirror, which the message names."""

    reason = "missing-provider"


def os_arch() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"{platform.system().lower()}_{arch}"


def _implied_mirrors(home: Path) -> list[Path]:
    """Terraform's own implied local mirror directories of the user (CLI configuration docs);
    the system-wide ones lead `_SEARCH_ROOTS`."""
    xdg = os.environ.get("XDG_DATA_HOME")
    dirs = [home / ".terraform.d" / "plugins"]
    if xdg:
        dirs.append(Path(xdg) / "terraform" / "plugins")
    dirs.append(home / ".local" / "share" / "terraform" / "plugins")
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


def find_mirror(version: str, *, configured: Path | None = None, home: Path | None = None,
                search_roots: Sequence[Path] | None = None) -> Path:
    """The filesystem mirror holding hashicorp/aws `version` for this OS/arch: `configured`, or
    the first found in the user's implied mirrors (under `home`), then in `search_roots`."""
    if configured is not None:
        if _has_provider(configured, version):
            return configured
        raise MirrorNotFoundError(
            f"{configured} has no {'/'.join(PROVIDER_ADDR)}/{version}/{os_arch()}; "
            "fix terraform.plugin_mirror in hypergov.yaml (or HYPERGOV_TERRAFORM_PLUGIN_MIRROR)")
    for candidate in _implied_mirrors(home or Path.home()):
        if _has_provider(candidate, version):
            return candidate
    for root in _SEARCH_ROOTS if search_roots is None else search_roots:
        for candidate in (root, *_walk(root, 0)):
            if _has_provider(candidate, version):
                return candidate
    raise MirrorNotFoundError(
        f"no filesystem mirror with the Terraform AWS provider {version} for {os_arch()} was found; "
        "set terraform.plugin_mirror in hypergov.yaml (or HYPERGOV_TERRAFORM_PLUGIN_MIRROR) to a directory "
        f"containing {'/'.join(PROVIDER_ADDR)}/{version}/{os_arch()}/, or set terraform.provider_source "
        "to auto or registry (HYPERGOV_TERRAFORM_PROVIDER_SOURCE) to install it from the Terraform registry")


@dataclass(frozen=True)
class ProviderSource:
    """Where this run's terraform installs hashicorp/aws from (`resolve_provider_source`)."""

    version: str
    mirror: Path | None = None  # None: the Terraform registry

    @property
    def kind(self) -> Literal["mirror", "registry"]:
        return "registry" if self.mirror is None else "mirror"


def resolve_provider_source(mode: ProviderSourceName, *, version: str, configured: Path | None = None,
                            home: Path | None = None, search_roots: Sequence[Path] | None = None) -> ProviderSource:
    """The one place `terraform.provider_source` is decided. A configured mirror must hold the
    provider in every mode that uses mirrors (a typo should not fall back to the registry)."""
    if mode == "registry":
        return ProviderSource(version=version)
    if mode == "mirror" or configured is not None:
        return ProviderSource(version=version, mirror=find_mirror(
            version, configured=configured, home=home, search_roots=search_roots))
    try:  # auto, nothing configured: a mirror found here wins (no network), else the registry
        return ProviderSource(version=version, mirror=find_mirror(version, home=home, search_roots=search_roots))
    except MirrorNotFoundError:
        return ProviderSource(version=version)


@dataclass(frozen=True)
class Workspace:
    """Shared files for every terraform process of one hypergov run."""

    root: Path  # state dir: <root>/stacks/<stack>/ holds each stack's config, state and plan files
    cli_config: Path
    plugin_cache: Path
    source: ProviderSource
    provider_lock: ProviderLock  # the shared lock every stack's .terraform.lock.hcl must agree with

    def stack_dir(self, stack: str) -> Path:
        path = self.root / "stacks" / stack
        path.mkdir(parents=True, exist_ok=True)
        return path

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if not k.startswith("TF_")}
        env.update({"TF_CLI_CONFIG_FILE": str(self.cli_config), "TF_PLUGIN_CACHE_DIR": str(self.plugin_cache),
                    "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"})
        env.setdefault("GOGC", GO_GC_PERCENT)
        return env


def prepare_workspace(root: Path, source: ProviderSource) -> Workspace:
    """The state dir's shared files: the CLI configuration for `source`, the plugin cache, and
    where the shared lock file lives (pinned by the first stack initialised)."""
    root.mkdir(parents=True, exist_ok=True)
    cache = root / "plugin-cache"
    cache.mkdir(exist_ok=True)
    cli_config = root / "terraform.tfrc"
    text = cli_config_text(source, plugin_cache=cache)
    if not cli_config.exists() or cli_config.read_text() != text:
        cli_config.write_text(text)
    return Workspace(root=root, cli_config=cli_config, plugin_cache=cache, source=source,
                     provider_lock=ProviderLock(path=root / SHARED_LOCK, version=source.version))


def cli_config_text(source: ProviderSource, *, plugin_cache: Path) -> str:
    """An explicit `provider_installation`, so Terraform's implied mirrors never add a second
    source: a mirror excludes the registry entirely; the registry mode uses nothing else."""
    if source.mirror is not None:
        header = "# written by hypergov: providers only from the local filesystem mirror\n"
        methods = (f"  filesystem_mirror {{\n    path = {_hcl_string(str(source.mirror))}\n  }}\n"
                   '  direct {\n    exclude = ["*/*"]\n  }\n')
    else:
        header = "# written by hypergov: providers from the Terraform registry (version pinned, lock file checked)\n"
        methods = "  direct {}\n"
    return f"{header}provider_installation {{\n{methods}}}\nplugin_cache_dir = {_hcl_string(str(plugin_cache))}\n"


def _hcl_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def copy_for_planning(root: Path, target: Path, *, attempts: int = 5) -> None:
    """A private copy of the state directory `root` in `target`, for a plan that must not touch
    (nor wait for) the shared one, e.g. a merge request's plan while a reconciler pass applies.
    Each stack's files are copied except saved plans (the copy makes its own); the plugin cache,
    the shared provider lock, the graph cache (`engines.graphs`: entries keyed by stack
    input, written atomically) and the provider engine's prepared provider configurations
    (`providers/`, keyed likewise) are linked, not copied (hundreds of MB; a thousand graphs a
    merge request's plan reuses). A state file caught mid-write is read again."""
    target.mkdir(parents=True, exist_ok=True)
    for cache in ("plugin-cache", "graphs", PROVIDER_ENGINE_CACHE):
        (root / cache).mkdir(parents=True, exist_ok=True)  # shared even on a first plan
    for shared in ("plugin-cache", SHARED_LOCK, "graphs", PROVIDER_ENGINE_CACHE):
        if (root / shared).exists() and not (target / shared).exists():
            (target / shared).symlink_to((root / shared).resolve())
    for stack_dir in sorted((root / "stacks").glob("*")) if (root / "stacks").is_dir() else []:
        into = target / "stacks" / stack_dir.name
        into.mkdir(parents=True, exist_ok=True)
        for source in stack_dir.iterdir():
            if source.is_file() and source.suffix != ".tfplan":
                (into / source.name).write_bytes(_stable_read(source, attempts=attempts))
        providers = stack_dir / ".terraform"
        if providers.is_dir() and not (into / ".terraform").exists():
            shutil.copytree(providers, into / ".terraform", symlinks=True)


def _stable_read(path: Path, *, attempts: int) -> bytes:
    data = path.read_bytes()
    if path.suffix not in (".json", ".tfstate"):
        return data
    for _ in range(attempts):
        try:
            json.loads(data or b"{}")
            return data
        except json.JSONDecodeError:  # being written by an apply at this moment: read it again
            time.sleep(0.2)
            data = path.read_bytes()
    return data
