"""The provider processes of a run: one configured `hashicorp/aws` process per distinct provider
block (an account, region and role), started on first use and kept for every stack after it
(issue 34). A stack's provider blocks differ from another's only where their accounts or roles
do, so an org of a thousand projects in a handful of accounts needs a handful of processes, each
reading the provider's schema once, where terraform starts three or four per stack.

One process per block because the AWS provider refuses a second ConfigureProvider where
AWS_CA_BUNDLE is set ("unable to add custom RootCAs"), and because a configured provider holds
its credentials. gRPC channels are safe to share between threads: stacks planned in parallel
call one process at once, as terraform's own walk does.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from engines.outcomes import PermanentError
from engines.provider.client import ProviderClient, ProviderSchemas, has_errors
from engines.provider.config import block_value, unknown_references
from engines.provider.plugin import ProviderProcess
from engines.provider.walk import Clients

PROVIDER_GLOB = "terraform-provider-aws_*"


class ProviderUnavailableError(PermanentError):
    """The provider binary is not where the workspace's provider source puts it, or a provider
    block is refused; the message says which and how to fix it."""

    reason = "missing-provider"


def provider_binary(directories: list[Path]) -> Path:
    """The AWS provider's executable in the first of `directories` (a filesystem mirror's or the
    plugin cache's `registry.terraform.io/hashicorp/aws/<version>/<os_arch>`) that holds one."""
    for directory in directories:
        found = sorted(p for p in directory.glob(PROVIDER_GLOB) if p.is_file() and not p.name.endswith(".zip"))
        if found:
            return found[0]
    where = ", ".join(str(d) for d in directories) or "nowhere"
    raise ProviderUnavailableError(
        f"the provider engine found no unpacked AWS provider in {where}; configure an unpacked filesystem mirror "
        "(terraform.plugin_mirror), or run one plan with `engine: terraform` so that terraform fills the plugin cache")


@dataclass
class ProviderPool:
    """Configured provider clients by provider block, for as long as the run lasts."""

    binary: Path
    environ: Mapping[str, str]
    # Where each provider block's prepared configuration is kept between runs (`<state_dir>/
    # providers/prepared`; None: not kept): PrepareProviderConfig costs the AWS provider 2-3 s of
    # CPU per process and its answer depends only on the provider build and the block.
    prepared_dir: Path | None = None
    _schema: ProviderSchemas | None = None  # the build's GetSchema answer: the first process's, or kept
    _clients: dict[str, ProviderClient] = field(default_factory=dict)
    _processes: list[ProviderProcess] = field(default_factory=list)
    _starting: dict[str, threading.Lock] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closed: bool = False
    _spares: list[Future[ProviderProcess]] = field(default_factory=list)  # started ahead of use (`start_spares`)

    def __post_init__(self) -> None:
        atexit.register(self.close)  # the processes run in their own sessions: never leave them behind

    def start_spares(self, count: int) -> None:
        """Start up to `count` processes now, in the background, for the first provider blocks
        that need one: their start (~0.3-0.4 s each: the provider's runtime and the plugin
        handshake) and the kept schema's read then overlap what the run does first (a merge
        request's plan checks two trees, ~0.7 s at 1,000 projects) on the other core."""
        def start(spare: Future[ProviderProcess]) -> None:
            try:
                spare.set_result(ProviderProcess.start(self.binary, environ=self.environ))
                self._known_schema()
            except Exception as exc:  # the process is started again where it is taken, which says why
                if not spare.done():
                    spare.set_exception(exc)

        with self._lock:
            if self._closed:
                return
            added = [Future[ProviderProcess]() for _ in range(max(0, count - len(self._spares)))]
            self._spares.extend(added)
        for spare in added:
            threading.Thread(target=start, args=(spare,), name="provider-spare", daemon=True).start()

    def _started_process(self) -> ProviderProcess:
        """A spare when one was started (and started well), else a process started now."""
        with self._lock:
            spare = self._spares.pop(0) if self._spares else None
        if spare is not None and spare.exception() is None:
            return spare.result()
        return ProviderProcess.start(self.binary, environ=self.environ)  # says why, if it fails again

    def clients_for(self, config: Mapping[str, Any]) -> Clients:
        """A configured client for each provider block of a stack's configuration, by alias
        (`aws.<alias>`; None for the default block); blocks not yet started start side by side."""
        blocks = config.get("provider", {}).get("aws", [])
        named = {(f"aws.{body['alias']}" if "alias" in body else None): {k: v for k, v in body.items() if k != "alias"}
                 for body in (blocks if isinstance(blocks, list) else [blocks])}
        if len(named) == 1:
            return {alias: self.client(body, alias or "aws") for alias, body in named.items()}
        with ThreadPoolExecutor(max_workers=len(named)) as starting:
            started = {alias: starting.submit(self.client, body, alias or "aws") for alias, body in named.items()}
            return {alias: future.result() for alias, future in started.items()}

    def client(self, body: Mapping[str, Any], name: str) -> ProviderClient:
        key = json.dumps(body, sort_keys=True)
        with self._lock:
            if self._closed:
                raise RuntimeError("the provider pool is closed")
            if key in self._clients:
                return self._clients[key]
            starting = self._starting.setdefault(key, threading.Lock())
        with starting:  # one start per block; other blocks start meanwhile
            with self._lock:
                if key in self._clients:
                    return self._clients[key]
            process = self._started_process()
            with self._lock:
                self._processes.append(process)
            client = ProviderClient(process.channel, known_schema=self._known_schema())
            value = block_value(client.schema().provider.block, body, unknown_references, f"provider {name}")
            self._remember_schema(client.schema())
            kept = self._kept(key)
            prepared = kept.read_bytes() if kept is not None and kept.is_file() else None
            diagnostics: tuple[Any, ...] = ()
            if prepared is None:
                diagnostics, prepared = client.prepare(value)
                if not has_errors(diagnostics) and kept is not None:
                    _keep(kept, prepared)
            if not has_errors(diagnostics):
                diagnostics = client.configure(value, prepared=prepared)
            if has_errors(diagnostics):
                raise ProviderUnavailableError(f"provider {name}: the AWS provider refused its configuration: "
                                               + "; ".join(str(d) for d in diagnostics if d.severity == "error"))
            with self._lock:
                self._clients[key] = client
            return client

    def _kept(self, block: str, *, suffix: str = ".msgpack") -> Path | None:
        """Where `block`'s prepared configuration is kept: named by the provider build (its path,
        size and modification time) and the block."""
        if self.prepared_dir is None:
            return None
        built = self.binary.stat()
        identity = f"{self.binary.resolve()}\0{built.st_size}\0{built.st_mtime_ns}\0{block}"
        return self.prepared_dir / f"{hashlib.sha256(identity.encode()).hexdigest()}{suffix}"

    def _schema_file(self) -> Path | None:
        """Where the build's GetSchema answer is kept (named as a block's, for no block)."""
        return self._kept("", suffix=".schema")

    def _known_schema(self) -> ProviderSchemas | None:
        """The build's schema from an earlier process of this run, or kept by an earlier run.
        GetSchema costs the AWS provider ~0.6 s per process; a provider whose answer says it needs
        no GetSchema call first (`get_provider_schema_optional`) is then not asked again, as
        terraform's own schema cache does (`ProviderClient(known_schema=)`)."""
        with self._lock:
            if self._schema is not None:
                return self._schema
        kept = self._schema_file()
        if kept is None or not kept.is_file():
            return None
        try:
            schemas = ProviderSchemas.from_bytes(kept.read_bytes())
        except DecodeError:
            return None  # a damaged file: ask the provider (and keep its answer again)
        with self._lock:
            self._schema = self._schema or schemas
            return self._schema

    def _remember_schema(self, schemas: ProviderSchemas) -> None:
        """The first answer of this run is kept for the later processes, and on disk when none was."""
        with self._lock:
            first, self._schema = self._schema is None, self._schema or schemas
        kept = self._schema_file()
        if first and kept is not None and not has_errors(schemas.diagnostics):
            _keep(kept, schemas.serialized())

    @property
    def processes(self) -> int:
        with self._lock:
            return len(self._processes)

    def pids(self) -> list[int]:
        """The process id of each provider process started so far (for a benchmark's CPU accounting)."""
        with self._lock:
            return [process.process.pid for process in self._processes]

    def kill(self) -> None:
        """SIGKILL every process at once (a crash test's node failure: no shutdown, no flush)."""
        with self._lock:
            for process in self._processes:
                process.process.kill()

    def close(self) -> None:
        """Shut every process down (GRPCController.Shutdown, then a signal if one lingers)."""
        with self._lock:
            processes, self._processes, self._closed = self._processes, [], True
            spares, self._spares = self._spares, []
            self._clients.clear()
        processes += [s.result() for s in spares if s.exception() is None]  # waits for starts under way
        for process in processes:
            process.close()


def _keep(path: Path, prepared: bytes) -> None:
    """Written whole or not at all (a rename), readable by its owner only: a provider block may
    hold credentials (the embedded endpoint's keys), as the stack's configuration beside it does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(prepared)
    os.replace(partial, path)
