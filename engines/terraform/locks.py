"""One provider build for every stack: the workspace's shared dependency lock file.

Each stack is its own terraform working directory with its own `.terraform.lock.hcl`, so left
alone two stacks could lock different builds of hashicorp/aws (one installed from a mirror, one
from the registry, or a mirror replaced in between). The workspace keeps one shared lock file
(`state_dir/providers.lock.hcl`): a stack without a lock file starts from a copy of it, so
terraform itself verifies the package it installs against the pinned checksums; the first stack
initialised pins it; a stack whose lock disagrees (another version, or no checksum in common) is
refused with both files named. Lock files are never deleted here: which one is right is a
person's call.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from engines.terraform.errors import ProviderLockError

AWS_PROVIDER = "registry.terraform.io/hashicorp/aws"
STACK_LOCK = ".terraform.lock.hcl"

# The lock file is HCL that terraform writes in one shape: `provider "<addr>" { version = "..."
# constraints = "..." hashes = [ "...", ] }` with no nested blocks, so a focused parser will do.
_COMMENT = re.compile(r"^\s*(#|//).*$", re.MULTILINE)
_PROVIDER = re.compile(r'provider\s+"([^"]+)"\s*\{([^{}]*)\}')
_VERSION = re.compile(r'\bversion\s*=\s*"([^"]*)"')
_HASHES = re.compile(r"\bhashes\s*=\s*\[([^\]]*)\]")
_STRING = re.compile(r'"([^"]*)"')
_CHECKSUM_MISMATCH = re.compile(r"doesn't\s+match\s+any\s+of\s+the\s+checksums\s+previously\s+recorded")


@dataclass(frozen=True)
class LockEntry:
    version: str
    hashes: frozenset[str]


def parse_lock(text: str) -> dict[str, LockEntry]:
    """Provider address -> its locked version and checksums."""
    entries: dict[str, LockEntry] = {}
    for match in _PROVIDER.finditer(_COMMENT.sub("", text)):
        body = match.group(2)
        version = _VERSION.search(body)
        hashes = _HASHES.search(body)
        entries[match.group(1)] = LockEntry(
            version=version.group(1) if version else "",
            hashes=frozenset(_STRING.findall(hashes.group(1))) if hashes else frozenset())
    return entries


@dataclass(frozen=True)
class ProviderLock:
    """The workspace's shared lock file and the exact version every stack must lock."""

    path: Path
    version: str

    def seed(self, stack_dir: Path) -> bool:
        """Before a stack's first init: start it from the shared lock, so terraform installs
        exactly the pinned build (and says so when the package at hand is another one). True
        when a copy was written (the runner takes it back if that init fails)."""
        stack_lock = stack_dir / STACK_LOCK
        if not self.path.exists() or stack_lock.exists():
            return False
        stack_lock.write_text(self.path.read_text())
        return True

    def verify(self, stack_dir: Path) -> None:
        """Refuse a stack whose lock disagrees with the shared one; pin the shared one from
        this stack when there is none yet. A stack not initialised yet has nothing to check."""
        stack_lock = stack_dir / STACK_LOCK
        stack = _aws_entry(stack_lock)
        if stack is None:
            return
        if not self.path.exists() and stack.version == self.version:
            self._publish(stack_lock)
        if not self.path.exists():
            raise ProviderLockError(
                f"{stack_lock} locks hashicorp/aws {stack.version}, but terraform.provider_version is "
                f"{self.version}; delete {stack_lock} to initialise the stack again with {self.version}")
        shared = _aws_entry(self.path)
        if shared is None or shared.version != self.version:
            raise ProviderLockError(
                f"the shared lock {self.path} pins hashicorp/aws {shared.version if shared else 'nothing'}, but "
                f"terraform.provider_version is {self.version}; to pin {self.version}, delete {self.path} "
                f"and the stacks' {STACK_LOCK} files that lock another version")
        if stack.version != shared.version or not stack.hashes & shared.hashes:
            raise ProviderLockError(
                f"{stack_lock} locks hashicorp/aws {stack.version} {_short(stack.hashes)}, which is not the build "
                f"pinned by the shared lock {self.path} ({shared.version} {_short(shared.hashes)}); every stack "
                f"runs the same provider build. Delete {stack_lock} to initialise the stack again from the "
                f"shared lock, or delete {self.path} to pin this stack's build instead")

    def explain(self, stderr: str) -> str | None:
        """Terraform's own checksum refusal, said in terms of hypergov's files (None: another error)."""
        if not _CHECKSUM_MISMATCH.search(stderr):
            return None
        return (f"the hashicorp/aws {self.version} package terraform found is not the build pinned by the "
                f"shared lock {self.path} (terraform checked its checksums); provide the pinned build, or "
                f"delete {self.path} and the stacks' {STACK_LOCK} files to pin the build at hand")

    def _publish(self, stack_lock: Path) -> None:
        """Make `stack_lock` the shared lock unless another stack (thread or process) did first:
        a hard link of a complete temporary file either creates the shared lock or fails."""
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        temporary.write_text(stack_lock.read_text())
        try:
            os.link(temporary, self.path)
        except FileExistsError:
            pass  # pinned by someone else meanwhile: this stack is checked against theirs
        finally:
            temporary.unlink()


def _aws_entry(lock_file: Path) -> LockEntry | None:
    try:
        text = lock_file.read_text()
    except FileNotFoundError:
        return None
    return parse_lock(text).get(AWS_PROVIDER)


def _short(hashes: frozenset[str]) -> str:
    listed = sorted(hashes)
    shown = ", ".join(listed[:2]) + (f" and {len(listed) - 2} more" if len(listed) > 2 else "")
    return f"[{shown or 'no checksums'}]"
