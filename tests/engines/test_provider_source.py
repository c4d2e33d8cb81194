"""Where terraform gets hashicorp/aws (`terraform.provider_source`), the CLI configuration each
choice writes, and the shared lock file that keeps every stack on one provider build.

No terraform runs here: a fake mirror is a directory tree, and discovery is pointed at an empty
home and empty search roots so that this machine's real mirror cannot leak into the result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.settings import SettingsError, load_settings
from engines.terraform.errors import ProviderLockError, TerraformError
from engines.terraform.locks import AWS_PROVIDER, STACK_LOCK, LockEntry, ProviderLock, parse_lock
from engines.terraform.workspace import (
    GO_GC_PERCENT,
    MirrorNotFoundError,
    ProviderSource,
    os_arch,
    prepare_workspace,
    resolve_provider_source,
)

VERSION = "5.100.0"
H1 = "h1:edXOJWE4ORX8Fm+dpVpICzMZJat4AX0VRCAy/xkcOc0="
ZH = "zh:0000000000000000000000000000000000000000000000000000000000000000"


def _mirror(root: Path, version: str = VERSION) -> Path:
    (root / "registry.terraform.io" / "hashicorp" / "aws" / version / os_arch()).mkdir(parents=True)
    return root


def _lock_text(version: str = VERSION, *hashes: str) -> str:
    listed = "".join(f'    "{h}",\n' for h in (hashes or (H1,)))
    return ('# This file is maintained automatically by "terraform init".\n'
            "# Manual edits may be lost in future updates.\n\n"
            f'provider "{AWS_PROVIDER}" {{\n  version     = "{version}"\n  constraints = "{version}"\n'
            f"  hashes = [\n{listed}  ]\n}}\n")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home (and no XDG_DATA_HOME): with no search roots, discovery finds no mirror."""
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    path = tmp_path / "home"
    path.mkdir()
    return path


def _cli_config(tmp_path: Path, source: ProviderSource) -> str:
    return prepare_workspace(tmp_path / "state", source).cli_config.read_text()


# --- the CLI configuration of each mode ----------------------------------------------------------
def test_mirror_mode_installs_only_from_the_mirror(tmp_path: Path, home: Path) -> None:
    mirror = _mirror(tmp_path / "mirror")
    source = resolve_provider_source("mirror", version=VERSION, configured=mirror, home=home, search_roots=())
    assert source == ProviderSource(version=VERSION, mirror=mirror) and source.kind == "mirror"
    text = _cli_config(tmp_path, source)
    assert f'filesystem_mirror {{\n    path = "{mirror}"\n  }}' in text
    assert 'direct {\n    exclude = ["*/*"]\n  }' in text  # the registry is never asked
    assert f'plugin_cache_dir = "{tmp_path / "state" / "plugin-cache"}"' in text


def test_mirror_mode_discovers_a_mirror_in_terraforms_implied_directory(home: Path) -> None:
    implied = _mirror(home / ".terraform.d" / "plugins")
    assert resolve_provider_source("mirror", version=VERSION, home=home, search_roots=()).mirror == implied


def test_mirror_mode_without_a_mirror_says_how_to_fix_it(home: Path) -> None:
    with pytest.raises(MirrorNotFoundError) as caught:
        resolve_provider_source("mirror", version=VERSION, home=home, search_roots=())
    message = str(caught.value)
    assert "terraform.plugin_mirror" in message and f"registry.terraform.io/hashicorp/aws/{VERSION}" in message
    assert "terraform.provider_source" in message  # or install from the registry instead


def test_registry_mode_lets_terraform_install_from_the_registry(tmp_path: Path) -> None:
    """The Terraform registry cannot be reached from the build machines, so only the generated
    configuration is checked here, never an install from the registry. A mirror that discovery
    would find is ignored: `registry` means the registry."""
    findable = _mirror(tmp_path / "roots" / "tf")
    source = resolve_provider_source("registry", version=VERSION, search_roots=(tmp_path / "roots",))
    assert source == ProviderSource(version=VERSION) and source.kind == "registry" and source.mirror is None
    text = _cli_config(tmp_path, source)
    assert "filesystem_mirror" not in text and str(findable) not in text
    assert "direct {}" in text and "exclude" not in text
    assert f'plugin_cache_dir = "{tmp_path / "state" / "plugin-cache"}"' in text  # the cache stays shared


def test_auto_uses_a_mirror_it_finds(tmp_path: Path, home: Path) -> None:
    mirror = _mirror(tmp_path / "roots" / "images" / "tf-plugins")
    source = resolve_provider_source("auto", version=VERSION, home=home,
                                     search_roots=(tmp_path / "roots",))
    assert source.mirror == mirror
    assert f'path = "{mirror}"' in _cli_config(tmp_path, source)


def test_auto_without_a_mirror_uses_the_registry(tmp_path: Path, home: Path) -> None:
    """As on a laptop or CI runner: no mirror anywhere, so the registry (configuration only: the
    registry cannot be reached from the build machines)."""
    _mirror(tmp_path / "roots" / "tf", version="5.99.0")  # another version is no mirror for this one
    source = resolve_provider_source("auto", version=VERSION, home=home,
                                     search_roots=(tmp_path / "roots",))
    assert source == ProviderSource(version=VERSION)
    text = _cli_config(tmp_path, source)
    assert "filesystem_mirror" not in text and "direct {}" in text


def test_auto_with_a_configured_mirror_lacking_the_provider_refuses(
        tmp_path: Path, home: Path) -> None:
    """A typo in terraform.plugin_mirror must not quietly fall back to the registry."""
    with pytest.raises(MirrorNotFoundError, match="plugin_mirror"):
        resolve_provider_source("auto", version=VERSION, configured=tmp_path, home=home, search_roots=())


def test_the_cli_config_is_rewritten_when_the_source_changes(tmp_path: Path) -> None:
    mirror = _mirror(tmp_path / "mirror")
    assert "filesystem_mirror" in _cli_config(tmp_path, ProviderSource(version=VERSION, mirror=mirror))
    assert "filesystem_mirror" not in _cli_config(tmp_path, ProviderSource(version=VERSION))


# --- settings ------------------------------------------------------------------------------------
def test_provider_source_defaults_to_auto(tmp_path: Path) -> None:
    settings = load_settings(environ={"HYPERGOV_SETTINGS": str(tmp_path / "absent.yaml")})
    assert settings.terraform.provider_source == "auto"


def test_provider_source_from_the_file_and_the_environment(tmp_path: Path) -> None:
    f = tmp_path / "hypergov.yaml"
    f.write_text("terraform:\n  provider_source: mirror\n")
    assert load_settings(f, environ={}).terraform.provider_source == "mirror"
    env = {"HYPERGOV_TERRAFORM_PROVIDER_SOURCE": "registry"}
    assert load_settings(f, environ=env).terraform.provider_source == "registry"  # environment wins


@pytest.mark.parametrize(("content", "env", "message"), [
    pytest.param("terraform: {provider_source: web}\n", {}, "terraform.provider_source", id="bad-yaml-value"),
    pytest.param("", {"HYPERGOV_TERRAFORM_PROVIDER_SOURCE": "Registry"}, "terraform.provider_source",
                 id="bad-env-value"),
    pytest.param("terraform: {provider_source: registry, plugin_mirror: /opt/m}\n", {}, "unset one",
                 id="registry-with-a-mirror"),
    pytest.param("terraform: {provider_version: '~> 5.100'}\n", {}, "exact version", id="version-range"),
])
def test_bad_provider_settings_are_refused(tmp_path: Path, content: str, env: dict[str, str], message: str) -> None:
    f = tmp_path / "hypergov.yaml"
    f.write_text(content)
    with pytest.raises(SettingsError, match=message):
        load_settings(f, environ=env)


# --- the shared lock file ------------------------------------------------------------------------
def test_lock_files_are_parsed_as_terraform_writes_them() -> None:
    text = _lock_text(VERSION, H1, ZH) + '\nprovider "registry.terraform.io/hashicorp/time" {\n  version = "0.9.1"\n}\n'
    entries = parse_lock(text)
    assert entries[AWS_PROVIDER] == LockEntry(version=VERSION, hashes=frozenset({H1, ZH}))
    assert entries["registry.terraform.io/hashicorp/time"] == LockEntry(version="0.9.1", hashes=frozenset())
    assert parse_lock("# nothing locked yet\n") == {}


@pytest.fixture
def lock(tmp_path: Path) -> ProviderLock:
    return ProviderLock(path=tmp_path / "providers.lock.hcl", version=VERSION)


def _stack(tmp_path: Path, name: str, lock_text: str | None = None) -> Path:
    directory = tmp_path / "stacks" / name
    directory.mkdir(parents=True)
    if lock_text is not None:
        (directory / STACK_LOCK).write_text(lock_text)
    return directory


def test_the_first_stack_pins_the_shared_lock_and_the_next_starts_from_it(tmp_path: Path, lock: ProviderLock) -> None:
    first = _stack(tmp_path, "org", _lock_text())
    lock.verify(_stack(tmp_path, "fresh"))  # not initialised yet: nothing to check, nothing pinned
    assert not lock.path.exists()
    lock.verify(first)
    assert lock.path.read_text() == (first / STACK_LOCK).read_text()
    second = _stack(tmp_path, "cluster-a")
    assert lock.seed(second) is True
    assert (second / STACK_LOCK).read_text() == lock.path.read_text()
    lock.verify(second)


def test_a_stack_installed_from_the_registry_agrees_through_a_common_checksum(
        tmp_path: Path, lock: ProviderLock) -> None:
    lock.path.write_text(_lock_text(VERSION, H1))  # pinned from a mirror: this platform's h1 only
    lock.verify(_stack(tmp_path, "s", _lock_text(VERSION, H1, ZH)))  # the registry adds zh: hashes


def test_seeding_never_overwrites_a_stacks_own_lock(tmp_path: Path, lock: ProviderLock) -> None:
    lock.path.write_text(_lock_text(VERSION, H1))
    own = _lock_text(VERSION, H1, ZH)
    stack = _stack(tmp_path, "s", own)
    assert lock.seed(stack) is False
    assert (stack / STACK_LOCK).read_text() == own


@pytest.mark.parametrize("tampered", [
    pytest.param(_lock_text("5.99.0", H1), id="other-version"),
    pytest.param(_lock_text(VERSION, "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="), id="no-common-checksum"),
])
def test_a_stack_locking_another_build_is_refused_and_nothing_is_deleted(
        tmp_path: Path, lock: ProviderLock, tampered: str) -> None:
    shared = _lock_text(VERSION, H1)
    lock.path.write_text(shared)
    stack = _stack(tmp_path, "project-ml", tampered)
    with pytest.raises(ProviderLockError) as caught:
        lock.verify(stack)
    error = caught.value
    assert isinstance(error, TerraformError) and not error.temporary  # a stack's failure, permanent
    message = str(error)
    assert str(stack / STACK_LOCK) in message and str(lock.path) in message
    assert f"Delete {stack / STACK_LOCK}" in message and f"or delete {lock.path}" in message
    assert (stack / STACK_LOCK).read_text() == tampered and lock.path.read_text() == shared


def test_a_stack_locking_another_version_than_the_setting_is_not_pinned(tmp_path: Path, lock: ProviderLock) -> None:
    stack = _stack(tmp_path, "s", _lock_text("5.99.0", H1))
    with pytest.raises(ProviderLockError, match=f"terraform.provider_version is {VERSION}"):
        lock.verify(stack)
    assert not lock.path.exists() and (stack / STACK_LOCK).exists()


def test_a_shared_lock_of_another_version_asks_for_a_re_pin(tmp_path: Path, lock: ProviderLock) -> None:
    """After terraform.provider_version changed: the shared lock is what must go first."""
    lock.path.write_text(_lock_text("5.99.0", H1))
    with pytest.raises(ProviderLockError, match=f"shared lock {lock.path} pins hashicorp/aws 5.99.0"):
        lock.verify(_stack(tmp_path, "s", _lock_text("5.99.0", H1)))


def test_terraforms_own_checksum_refusal_is_explained(lock: ProviderLock) -> None:
    stderr = ("Error: Failed to install provider\n\nError while installing hashicorp/aws v5.100.0: the local "
              "package for\nregistry.terraform.io/hashicorp/aws 5.100.0 doesn't match any of the\nchecksums "
              "previously recorded in the dependency lock file (this might be\n")
    reason = lock.explain(stderr)
    assert reason is not None and str(lock.path) in reason
    assert lock.explain("Error: Failed to query available provider packages") is None


def test_terraform_processes_collect_garbage_less_often_unless_told_otherwise(tmp_path: Path) -> None:
    """The environment of every terraform (and provider) process: GOGC=GO_GC_PERCENT by default,
    a GOGC of the caller's kept; the caller's TF_* variables never pass."""
    workspace = prepare_workspace(tmp_path / "state", ProviderSource(version=VERSION))
    env = workspace.env({"PATH": "/usr/bin", "TF_LOG": "trace"})
    assert env["GOGC"] == GO_GC_PERCENT and env["PATH"] == "/usr/bin" and "TF_LOG" not in env
    assert workspace.env({"GOGC": "100"})["GOGC"] == "100"
