"""The daemon's one HTTP port: `/metrics` (Prometheus' text format, served by prometheus_client's
own WSGI app over the daemon's registry), `/healthz` (the process is up: always 200) and `/readyz`
(200 unless the last pass or drift scan failed permanently: then 503 with the reason, so that
Kubernetes takes a stuck reconciler out of its Service and a person looks).

A small WSGI app on the standard library's threading server: no web framework, and a slow
scrape never blocks the watch loop (the server runs in daemon threads of its own).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app

from reconciler.metrics import ReconcilerMetrics

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
PLAIN = ("Content-Type", "text/plain; charset=utf-8")


def observe_app(metrics: ReconcilerMetrics) -> WsgiApp:
    """The WSGI app: /metrics, /healthz, /readyz; anything else 404."""
    prometheus = make_wsgi_app(metrics.registry)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            body: Iterable[bytes] = prometheus(environ, start_response)
            return body
        if path == "/healthz":
            start_response("200 OK", [PLAIN])  # a new list: wsgiref adds Content-Length to it
            return [b"ok\n"]
        if path == "/readyz":
            readiness = metrics.readiness
            start_response("200 OK" if readiness.ready else "503 Service Unavailable", [PLAIN])
            return [f"{readiness.reason}\n".encode()]
        start_response("404 Not Found", [PLAIN])
        return [b"not found: the paths are /metrics, /healthz and /readyz\n"]

    return app


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a scrape in progress never holds the process at exit


class _ThreadingServer6(_ThreadingServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr: the daemon's log is its events, one line each (and scrapes come
    every few seconds)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class ObserveServer:
    server: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def serve(metrics: ReconcilerMetrics, *, host: str, port: int) -> ObserveServer:
    """Listen on host:port (port 0: a free port, see `.port`) in a background thread. Raises
    OSError when the address is taken or invalid (the caller says so to the user)."""
    server_class = _ThreadingServer6 if ":" in host else _ThreadingServer
    server = make_server(host, port, observe_app(metrics), server_class=server_class, handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="hypergov-metrics", daemon=True)
    thread.start()
    return ObserveServer(server, thread)
