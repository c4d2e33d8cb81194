"""With the real terraform and this machine's real mirror: every stack locks the same provider
build, pinned once in the workspace's shared lock file, and a stack whose lock file says another
build is refused with both files named, nothing deleted. Terraform itself reads each CLI
configuration hypergov writes (the registry one too: it is parsed, never used, since the
registry cannot be reached from the build machines)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engines.terraform.errors import ProviderLockError
from engines.terraform.locks import AWS_PROVIDER, STACK_LOCK, parse_lock
from engines.terraform.runner import TerraformRunner
from engines.terraform.workspace import ProviderSource, Workspace, prepare_workspace, resolve_provider_source

pytestmark = pytest.mark.integration
PROVIDER = "5.100.0"
REQUIRED = {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": PROVIDER}}}}
FOREIGN_H1 = "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


def _workspace(root: Path) -> tuple[Workspace, TerraformRunner]:
    workspace = prepare_workspace(root, resolve_provider_source("mirror", version=PROVIDER))  # discovered
    runner = TerraformRunner(binary="terraform", env=workspace.env(dict(os.environ)),
                             provider_lock=workspace.provider_lock)
    return workspace, runner


def _stack(workspace: Workspace, name: str) -> Path:
    directory = workspace.stack_dir(name)
    (directory / "main.tf.json").write_text(json.dumps(REQUIRED))
    return directory


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (links into the plugin cache by name only)."""
    return {str(p.relative_to(directory)): b"" if p.is_symlink() or p.stat().st_size > 1 << 20 else p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_stacks_initialised_in_parallel_lock_one_build(tmp_path: Path) -> None:
    workspace, runner = _workspace(tmp_path)
    stacks = [_stack(workspace, f"s{i}") for i in range(3)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(runner.init, stacks))
    shared = workspace.provider_lock.path
    assert shared.exists()
    pinned = parse_lock(shared.read_text())[AWS_PROVIDER]
    assert pinned.version == PROVIDER and pinned.hashes
    assert all(parse_lock((s / STACK_LOCK).read_text())[AWS_PROVIDER] == pinned for s in stacks)


@pytest.mark.parametrize("tamper", [
    pytest.param(lambda text: text.replace(f'"{PROVIDER}"', '"5.99.0"'), id="other-version"),
    pytest.param(lambda text: re.sub(r'"h1:[^"]+"', f'"{FOREIGN_H1}"', text), id="other-hashes"),
])
def test_a_stack_with_a_tampered_lock_is_refused_and_nothing_is_deleted(tmp_path: Path,
                                                                         tamper: Callable[[str], str]) -> None:
    workspace, runner = _workspace(tmp_path)
    good, bad = _stack(workspace, "org"), _stack(workspace, "project-ml")
    runner.init(good)
    runner.init(bad)
    (bad / STACK_LOCK).write_text(tamper((bad / STACK_LOCK).read_text()))
    before = {"shared": workspace.provider_lock.path.read_bytes(), "good": _files(good), "bad": _files(bad)}
    with pytest.raises(ProviderLockError) as caught:
        runner.init(bad)
    message = str(caught.value)
    assert str(bad / STACK_LOCK) in message and str(workspace.provider_lock.path) in message
    assert "same provider build" in message and not caught.value.temporary
    with pytest.raises(ProviderLockError):
        runner.plan(bad, out="p.tfplan")  # a plan goes through the same check (it heals via init)
    after = {"shared": workspace.provider_lock.path.read_bytes(), "good": _files(good), "bad": _files(bad)}
    assert after == before
    # The fix the message gives: delete the stack's lock file; it starts again from the shared one.
    (bad / STACK_LOCK).unlink()
    runner.init(bad)
    assert (bad / STACK_LOCK).read_bytes() == workspace.provider_lock.path.read_bytes()


def test_a_package_that_is_not_the_pinned_build_is_refused_by_terraform(tmp_path: Path) -> None:
    """The shared lock pins a build whose checksum is not the mirror's package: terraform, given
    the shared lock, refuses to install it, and hypergov says which file pinned it."""
    workspace, runner = _workspace(tmp_path)
    pinned = (f'provider "{AWS_PROVIDER}" {{\n  version     = "{PROVIDER}"\n  constraints = "{PROVIDER}"\n'
              f'  hashes = [\n    "{FOREIGN_H1}",\n  ]\n}}\n')
    workspace.provider_lock.path.write_text(pinned)
    stack = _stack(workspace, "s")
    with pytest.raises(ProviderLockError, match="not the build pinned by the shared lock"):
        runner.init(stack)
    assert workspace.provider_lock.path.read_text() == pinned
    assert not (stack / STACK_LOCK).exists()  # the copy hypergov seeded is taken back, nothing else


@pytest.mark.parametrize("source", [
    pytest.param(lambda: resolve_provider_source("mirror", version=PROVIDER), id="mirror"),
    pytest.param(lambda: ProviderSource(version=PROVIDER), id="registry"),
])
def test_terraform_accepts_the_cli_configuration(tmp_path: Path, source: Callable[[], ProviderSource]) -> None:
    """`terraform version` reports CLI-configuration problems without any network; the registry
    cannot be reached from the build machines, so for `registry` this is all that is checked."""
    workspace = prepare_workspace(tmp_path, source())
    proc = subprocess.run(["terraform", "version"], env=workspace.env(dict(os.environ)), capture_output=True,
                          text=True, check=True, timeout=60)
    assert "problems with the CLI configuration" not in proc.stdout + proc.stderr
