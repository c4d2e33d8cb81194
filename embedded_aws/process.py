"""`EmbeddedAwsProcess`: the endpoint as a child process, for tools that must not share this
process's moto state or that outlive a test (the terraform engine, the demo).

The child (``python -m embedded_aws``) seeds what it was asked to, then prints its URL
as its first stdout line; the parent reads that line, checks ``/_hypergov/health`` and from then
on steers it through the same HTTP control API as an in-process endpoint. Stopping sends SIGTERM
(the child shuts its server down and exits 0) and kills only if it does not exit in time.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from embedded_aws.handle import EndpointError, EndpointHandle


class EmbeddedAwsProcess(EndpointHandle):
    """A child process serving the embedded endpoint. Use as a context manager."""

    def __init__(self, *, port: int = 0, host: str = "127.0.0.1", seed_config: Path | None = None,
                 python: str = sys.executable, startup_timeout_s: float = 60.0, stop_timeout_s: float = 10.0) -> None:
        self.port, self.host, self.seed_config = port, host, seed_config
        self.python, self.startup_timeout_s, self.stop_timeout_s = python, startup_timeout_s, stop_timeout_s
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> EmbeddedAwsProcess:
        if self._process is not None:
            raise EndpointError(f"the embedded AWS endpoint process is already running (pid {self.pid})")
        command = [self.python, "-m", "embedded_aws", "--host", self.host, "--port", str(self.port)]
        if self.seed_config is not None:
            command += ["--seed-config", os.fspath(self.seed_config)]
        # Kept open while the child runs (its stderr), closed by stop(): not a with-block's lifetime.
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        try:
            self._url = self._read_url(self._process)
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> int | None:
        """Stop the child (SIGTERM, then SIGKILL after `stop_timeout_s`); returns its exit code."""
        process, self._process, self._url = self._process, None, None
        code = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=self.stop_timeout_s)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            code = process.returncode
            if process.stdout is not None:
                process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        return code

    def __enter__(self) -> EmbeddedAwsProcess:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _read_url(self, process: subprocess.Popen[str]) -> str:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=self.startup_timeout_s):
                raise EndpointError(f"the embedded AWS endpoint did not start within {self.startup_timeout_s:.0f} s"
                                    f"{self._stderr_tail()}")
        line = process.stdout.readline().strip()
        if not line.startswith("http"):
            process.wait(timeout=self.stop_timeout_s)
            raise EndpointError(f"the embedded AWS endpoint exited with status {process.returncode} before "
                                f"serving{self._stderr_tail()}")
        return line

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while not self.healthy():
            if time.monotonic() > deadline:
                raise EndpointError(f"the embedded AWS endpoint at {self.endpoint_url} is not healthy"
                                    f"{self._stderr_tail()}")
            time.sleep(0.05)

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].strip()
        return f":\n{tail}" if tail else ""
