"""`EmbeddedAws`: moto's threaded server, with this package's extensions, on a free local port.

moto's ``ThreadedMotoServer`` builds its WSGI app inside its server thread; the subclass here
builds it from the extended per-service apps, wraps it in the middleware (faults, accounts,
control API), keeps request logging quiet, reports a failed bind instead of hanging, and closes
the socket on stop.

moto's state is process-wide: two endpoints in one process share it (and ``reset`` wipes it for
both); faults and call logs are per endpoint.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler
from werkzeug.serving import make_server

from embedded_aws.faults import FaultRegistry
from embedded_aws.handle import EndpointError, EndpointHandle
from embedded_aws.install import ADDED_HOSTS, create_extended_backend_app, install
from embedded_aws.middleware import CallLog, EmbeddedAwsMiddleware

# Connections the kernel holds for the accept loop. werkzeug listens with 128, and its accept loop
# shares the GIL with every request thread: a provider engine planning 100 stacks at once opens
# ~1,000 connections at a time (one per request: see QuietRequestHandler), the queue overflowed
# (the kernel's ListenOverflows counter) and the AWS provider's reads failed with "connection reset
# by peer" (11 of 103 stacks of a 100-project first apply). Linux caps it at net.core.somaxconn.
LISTEN_BACKLOG = 4096


class QuietRequestHandler(MotoRequestHandler):
    """No access log line per request (the call log keeps them); errors are still logged.

    Each request has its own connection: werkzeug answers every one with `Connection: close`
    whatever the protocol version (it already speaks HTTP/1.1 when threaded), because Python's
    http.server cannot drain a request body before reading the next request line.

    The head and the body of an answer leave in one write (a buffered `wfile`, flushed by
    werkzeug after each chunk and by `finish`): written apart, as `http.server`'s unbuffered
    writer does, the AWS provider's Go client failed about one read in a hundred under load with
    "decomposing response: ... use of closed network connection" (status 200, the body lost),
    an error the SDK retries, so a retried CreateRole then met EntityAlreadyExists. Measured with
    the provider reading 400 roles three times each on a loaded machine: ~13 failures unbuffered,
    none buffered. It still happens, rarely: about one in a thousand ~74 KB ListRoles pages on a
    loaded machine (session 27; a 1 MiB buffer did no better). The Go client's own transport
    closes the connection under the read there (aws-sdk-go-v2#2737, seen against AWS itself; the
    SDK retries net.ErrClosed since #2949): the client's race, not an answer cut short here; with the
    embedded endpoint's single attempt per call (`embedded_aws.terraform.provider_block`) it fails
    the call."""

    wbufsize = 1 << 16

    def handle_expect_100(self) -> bool:
        """The interim "100 Continue" leaves at once (the buffered writer would hold it until the
        answer, and a client such as botocore's S3 PutObject waits a second for it before sending
        its body)."""
        sent = super().handle_expect_100()
        self.wfile.flush()
        return bool(sent)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        return None


class CachedDispatcher(DomainDispatcherApplication):
    """moto's dispatcher, with the service of each host remembered.

    moto finds a request's service anew each time: it lists moto's package directory (a `stat`
    per entry, ~180), then tries every service's URL pattern in turn, all under one lock that
    every request thread takes: about a millisecond of the server's CPU per request, a third of
    answering an EKS read. The answer depends on the host alone (the service and region a request
    was signed for) and on moto's installed modules, which do not change while serving."""

    def __init__(self, create_app: Any) -> None:
        super().__init__(create_app)
        self._backend_of: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        # Called under `self.lock` (moto's `get_application`): the cache needs no lock of its own.
        if host not in self._backend_of:
            added = next((name for name, pattern in ADDED_HOSTS if host and pattern.match(host)), None)
            self._backend_of[host] = added or super().get_backend_for_host(host)
        return self._backend_of[host]


class ExtendedMotoServer(ThreadedMotoServer):
    def __init__(self, *, host: str, port: int, middleware: EmbeddedAwsMiddlewareFactory) -> None:
        super().__init__(ip_address=host, port=port, verbose=False)
        self._middleware = middleware
        self._startup_error: BaseException | None = None

    def _server_entry(self) -> None:
        try:
            app = self._middleware(CachedDispatcher(create_extended_backend_app))
            self._server = make_server(self._ip_address, self._port, app, True, request_handler=QuietRequestHandler)
            self._server.socket.listen(LISTEN_BACKLOG)
        except BaseException as exc:  # reported by start(); the thread must not die silently
            self._startup_error = exc
            self._server_ready_event.set()
            return
        self._server_ready_event.set()
        self._server.serve_forever(poll_interval=0.05)  # a quick stop(); the default waits up to 0.5 s

    def start(self) -> None:
        super().start()
        if self._startup_error is not None:
            raise EndpointError(f"could not start the embedded AWS endpoint on {self._ip_address}:{self._port}: "
                                f"{self._startup_error}") from self._startup_error

    def stop(self) -> None:
        server = self._server
        super().stop()
        if server is not None:
            server.server_close()


class EmbeddedAwsMiddlewareFactory:
    def __init__(self, *, faults: FaultRegistry, calls: CallLog, sleep: Callable[[float], None] = time.sleep) -> None:
        self.faults, self.calls, self.sleep = faults, calls, sleep

    def __call__(self, app: Any) -> EmbeddedAwsMiddleware:
        return EmbeddedAwsMiddleware(app, faults=self.faults, calls=self.calls, reset=_reset_moto, sleep=self.sleep)


class EmbeddedAws(EndpointHandle):
    """An embedded AWS endpoint in a thread of this process. Use as a context manager::

        with EmbeddedAws() as aws:
            iam = aws.client("iam", account="111122223333")

    `sleep` is how a latency fault waits (a test passes one that records the delay instead of
    sleeping it, so it reads the delay the server applied rather than timing the call).
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, sleep: Callable[[float], None] = time.sleep) -> None:
        self.host, self.port, self.sleep = host, port, sleep
        self._server: ExtendedMotoServer | None = None
        self._lock = threading.Lock()

    def start(self) -> EmbeddedAws:
        """Start serving (port 0: a free port); returns self. Starting twice is an error."""
        with self._lock:
            if self._server is not None:
                raise EndpointError(f"the embedded AWS endpoint is already running at {self.endpoint_url}")
            install()
            middleware = EmbeddedAwsMiddlewareFactory(faults=FaultRegistry(), calls=CallLog(), sleep=self.sleep)
            server = ExtendedMotoServer(host=self.host, port=self.port, middleware=middleware)
            server.start()
            host, port = server.get_host_and_port()
            self._server, self._url = server, f"http://{host}:{port}"
        return self

    def stop(self) -> None:
        """Stop serving and free the port; safe to call when not running."""
        with self._lock:
            server, self._server, self._url = self._server, None, None
        if server is not None:
            server.stop()

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> EmbeddedAws:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _reset_moto() -> None:
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()
