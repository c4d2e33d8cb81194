"""Run the real `terraform` binary: one call per subcommand, output captured, failures
classified (by `engines.outcomes`) as temporary (retry later: a held state lock, throttling)
or permanent."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engines import failpoints
from engines.file_lock import file_lock
from engines.outcomes import permanent, temporary
from engines.terraform.errors import ProviderLockError, TerraformError
from engines.terraform.locks import ProviderLock

_INIT_LOCK = threading.Lock()
IN_APPLY = "in-terraform-apply"
_MISSING_PLUGIN = re.compile(r"Required plugins are not installed|no package for .* cached in|"
                             r"could not read package directory")


def _initialized(cwd: Path) -> bool:
    """Initialized and its provider package really there (a link into the cache can dangle)."""
    providers = cwd / ".terraform" / "providers"
    return (cwd / ".terraform.lock.hcl").exists() and any(providers.glob("*/*/*/*/*/terraform-provider-*"))


@contextmanager
def _cache_lock(cache_dir: str | None) -> Iterator[None]:
    """Exclusive across threads (a lock) and processes (flock on a file in the cache)."""
    with _INIT_LOCK:
        if not cache_dir:
            yield
            return
        with file_lock(Path(cache_dir) / ".hypergov-init.lock"):
            yield


class Runner(Protocol):
    """What the terraform engine asks of terraform; `TerraformRunner` runs the binary, and
    `engines.terraform.provider_runner.ProviderRunner` speaks to the AWS provider itself."""

    def run(self, args: Sequence[str], *, cwd: Path,
            ok_codes: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]: ...

    def init(self, cwd: Path, *, force: bool = False) -> None: ...

    def plan(self, cwd: Path, *, out: str, refresh_only: bool = False, destroy: bool = False,
             lock: bool = True, refresh: bool = True) -> bool: ...

    def show_json(self, cwd: Path, planfile: str) -> dict[str, Any]: ...

    def apply(self, cwd: Path, planfile: str) -> None: ...

    def force_unlock(self, cwd: Path, lock_id: str) -> None: ...


@dataclass(frozen=True)
class TerraformRunner:
    binary: str
    env: Mapping[str, str]
    timeout_s: float = 1800.0
    provider_lock: ProviderLock | None = None  # keeps every stack on the workspace's one provider build

    def run(self, args: Sequence[str], *, cwd: Path,
            ok_codes: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        command = [self.binary, *args]
        try:
            proc = subprocess.run(command, cwd=cwd, env=dict(self.env), capture_output=True, text=True,
                                  timeout=self.timeout_s, check=False)
        except FileNotFoundError as exc:
            raise TerraformError(args[0], "", failure=permanent(
                f"the terraform binary '{self.binary}' was not found; install Terraform or set terraform.binary "
                "in hypergov.yaml", "terraform-missing")) from exc
        except subprocess.TimeoutExpired as exc:
            raise TerraformError(args[0], "", failure=temporary(
                f"terraform {args[0]} timed out after {self.timeout_s:.0f} s", "timeout")) from exc
        if proc.returncode not in ok_codes:
            raise TerraformError(args[0], proc.stderr or proc.stdout)
        return proc

    def init(self, cwd: Path, *, force: bool = False) -> None:
        lock = self.provider_lock
        if lock is not None:
            lock.verify(cwd)  # also for an initialised stack: its lock may have been edited since
        if not force and _initialized(cwd):
            return
        if force:
            shutil.rmtree(cwd / ".terraform", ignore_errors=True)
        # Terraform's plugin cache is not safe for concurrent `init`s (its documentation says so;
        # seen here as a half-linked provider directory), so inits sharing a cache take turns.
        with _cache_lock(self.env.get("TF_PLUGIN_CACHE_DIR")):
            seeded = lock is not None and lock.seed(cwd)
            try:
                self.run(["init", "-input=false", "-no-color", "-reconfigure"], cwd=cwd)
            except TerraformError as exc:
                shutil.rmtree(cwd / ".terraform", ignore_errors=True)  # let the next run start clean
                if seeded:  # only the copy hypergov just wrote: the stack is left as it was found
                    (cwd / ".terraform.lock.hcl").unlink(missing_ok=True)
                reason = lock.explain(exc.stderr) if lock is not None else None
                if reason:
                    raise ProviderLockError(reason) from exc
                raise
            if lock is not None:
                lock.verify(cwd)  # the first stack pins the shared lock; the others match it

    def plan(self, cwd: Path, *, out: str, refresh_only: bool = False, destroy: bool = False,
             lock: bool = True, refresh: bool = True) -> bool:
        """Write a saved plan; True when it has changes (`-detailed-exitcode` 2). `lock=False`: a
        private plan that must never wait for (nor hold) the shared state's lock. `refresh=False`:
        against the state as last applied (`-refresh=false`)."""
        args = ["plan", "-input=false", "-no-color", "-lock-timeout=60s" if lock else "-lock=false",
                "-detailed-exitcode", f"-out={out}"]
        if refresh_only:
            args.append("-refresh-only")
        if destroy:
            args.append("-destroy")
        if not refresh and not refresh_only:
            args.append("-refresh=false")
        try:
            return self.run(args, cwd=cwd, ok_codes=(0, 2)).returncode == 2
        except TerraformError as exc:
            if not _MISSING_PLUGIN.search(exc.stderr):
                raise
        # The stack's provider link went missing (seen once in 205 stacks planned in parallel on a
        # shared plugin cache): install it again and retry once.
        self.init(cwd, force=True)
        return self.run(args, cwd=cwd, ok_codes=(0, 2)).returncode == 2

    def show_json(self, cwd: Path, planfile: str) -> dict[str, Any]:
        proc = self.run(["show", "-json", "-no-color", planfile], cwd=cwd)
        data: dict[str, Any] = json.loads(proc.stdout)
        return data

    def apply(self, cwd: Path, planfile: str) -> None:
        args = ["apply", "-input=false", "-no-color", "-lock-timeout=60s", "-auto-approve", planfile]
        if failpoints.armed(IN_APPLY):
            self._apply_and_die(args, cwd=cwd)
            return
        self.run(args, cwd=cwd)

    def force_unlock(self, cwd: Path, lock_id: str) -> None:
        """`terraform force-unlock -force <ID>`: the stack's lock, when it still holds that ID."""
        self.run(["force-unlock", "-force", lock_id], cwd=cwd)

    def _apply_and_die(self, args: Sequence[str], *, cwd: Path) -> None:
        """The `in-terraform-apply` failpoint: terraform runs in its own process group; at its
        first "Creation complete" the group (terraform and its provider) and then this process
        are SIGKILLed, as a node failure would end them all mid-apply."""
        proc = subprocess.Popen([self.binary, *args], cwd=cwd, env=dict(self.env), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        assert proc.stdout is not None
        said = []
        for line in proc.stdout:
            said.append(line)
            if "Creation complete" in line:
                os.killpg(proc.pid, signal.SIGKILL)
                sys.stderr.write(f"failpoint {IN_APPLY}: killed after terraform said: {line}")
                sys.stderr.flush()
                failpoints.reached(IN_APPLY)
        if proc.wait() != 0:  # nothing was created: the failpoint did not fire, the apply ended as usual
            raise TerraformError(args[0], "".join(said))

    def providers_schema(self, cwd: Path) -> dict[str, Any]:
        proc = self.run(["providers", "schema", "-json"], cwd=cwd)
        data: dict[str, Any] = json.loads(proc.stdout)
        return data
