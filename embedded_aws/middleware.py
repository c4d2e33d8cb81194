"""The WSGI layer in front of moto: account selection, injected faults, a call log, a control
API, and AWS-shaped answers for operations nobody implements.

It sits in the server, not in a client, so it acts on requests from any HTTP client. The
control API (``/_hypergov/...``) lets a test or the CLI steer a server running in another
process exactly as it steers one in its own.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_api import state_manager

from embedded_aws.faults import FaultRegistry, FaultSpec, error_response, fault_response
from embedded_aws.operations import account_from_access_key, identify, read_body
from embedded_aws.sagemaker_backend import reserve_cluster_id
from embedded_aws.snapshot import restore_state, save_state

log = logging.getLogger(__name__)
CONTROL_PREFIX = "/_hypergov/"
StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class CallLog:
    """The last calls the server answered: (service, operation, HTTP status)."""

    def __init__(self, limit: int = 10_000) -> None:
        self._lock = threading.Lock()
        self._calls: deque[dict[str, object]] = deque(maxlen=limit)

    def record(self, service: str | None, operation: str | None, status: int) -> None:
        with self._lock:
            self._calls.append({"service": service, "operation": operation, "status": status})

    def snapshot(self) -> list[dict[str, object]]:
        with self._lock:
            return list(self._calls)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()


class EmbeddedAwsMiddleware:
    def __init__(self, app: WsgiApp, *, faults: FaultRegistry, calls: CallLog, reset: Callable[[], None],
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.app, self.faults, self.calls, self.reset, self.sleep = app, faults, calls, reset, sleep

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if str(environ.get("PATH_INFO", "")).startswith(CONTROL_PREFIX):
            return self._control(environ, start_response)
        info = identify(environ)
        account = account_from_access_key(info.access_key)
        if account and "HTTP_X_MOTO_ACCOUNT_ID" not in environ:
            environ["HTTP_X_MOTO_ACCOUNT_ID"] = account
        fault = self.faults.take(info.service, info.operation) if info.service else None
        if fault is not None and fault.kind == "latency":
            self.sleep(fault.delay_s)
        elif fault is not None and info.service is not None:
            status, headers, body = fault_response(fault, service=info.service)
            self.calls.record(info.service, info.operation, status)
            return _respond(start_response, status, headers, body)
        return self._forward(environ, start_response, info.service, info.operation)

    def _forward(self, environ: dict[str, Any], start_response: StartResponse, service: str | None,
                 operation: str | None) -> Iterable[bytes]:
        def recording_start(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
            self.calls.record(service, operation, int(status.split(" ", 1)[0]))
            return start_response(status, headers, *rest)

        try:
            return self.app(environ, recording_start)
        except NotImplementedError as exc:
            # Fail fast and clearly: a 5xx would make every SDK retry an operation that can never work.
            message = f"hypergov embedded AWS endpoint: {service} {operation} is not implemented ({exc})"
            log.warning(message)
            status, headers, body = error_response(service=service or "sts", status=501, code="NotImplemented",
                                                   message=message, sender=True)
        except Exception as exc:
            log.exception("embedded AWS endpoint failed on %s %s", service, operation)
            status, headers, body = error_response(service=service or "sts", status=500, code="InternalFailure",
                                                   message=f"{type(exc).__name__}: {exc}", sender=False)
        self.calls.record(service, operation, status)
        return _respond(start_response, status, headers, body)

    def _control(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        route = str(environ["PATH_INFO"])[len(CONTROL_PREFIX):].strip("/")
        method = environ.get("REQUEST_METHOD", "GET")
        try:
            payload = json.loads(read_body(environ) or b"{}")
            answer = self._control_action(route, method, payload)
        except (ValueError, TypeError, KeyError) as exc:
            return _json(start_response, 400, {"error": str(exc)})
        if answer is None:
            return _json(start_response, 404, {"error": f"no control route {method} {route}"})
        return _json(start_response, 200, answer)

    def _control_action(self, route: str, method: str, payload: Any) -> Any:
        if (route, method) == ("health", "GET"):
            return {"status": "ok"}
        if route == "faults":
            if method == "POST":
                self.faults.add(FaultSpec(**payload))
            elif method == "DELETE":
                self.faults.clear()
            return {"faults": self.faults.pending()}
        if route == "calls":
            if method == "DELETE":
                self.calls.clear()
            return {"calls": self.calls.snapshot()}
        if (route, method) == ("reset", "POST"):
            self.reset()
            self.faults.clear()
            self.calls.clear()
            return {"status": "reset"}
        if (route, method) == ("hyperpod-cluster-id", "POST"):
            reserve_cluster_id(account=payload["account"], region=payload["region"], name=payload["name"],
                               cluster_id=payload["id"])
            return {"status": "reserved"}
        if (route, method) == ("state/save", "POST"):
            return save_state(payload["path"])
        if (route, method) == ("state/restore", "POST"):
            restored = restore_state(payload["path"])
            self.faults.clear()
            self.calls.clear()
            return restored
        if (route, method) == ("transition", "POST"):
            state_manager.set_transition(model_name=payload["model"], transition=payload["transition"])
            return {"status": "set"}
        return None


def _respond(start_response: StartResponse, status: int, headers: list[tuple[str, str]],
             body: bytes) -> Iterable[bytes]:
    start_response(f"{status} {_reason(status)}", [*headers, ("Content-Length", str(len(body)))])
    return [body]


def _json(start_response: StartResponse, status: int, payload: object) -> Iterable[bytes]:
    body = json.dumps(payload, default=str).encode()
    return _respond(start_response, status, [("Content-Type", "application/json")], body)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
