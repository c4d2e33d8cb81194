"""Injected faults: throttling, server errors and latency for chosen operations.

A fault answers the next ``times`` matching requests (or every one, ``times=None``) before they
reach moto. Errors are shaped exactly like the service's own: the throttling error its model
declares (EKS ``ThrottlingException`` 429, Organizations ``TooManyRequestsException`` 400, ...)
or, when the model declares none, the protocol's common one (query: ``Throttling``, JSON:
``ThrottlingException``, both 400), in the protocol's wire format, so that SDK retry logic
treats them as it treats AWS's.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import asdict, dataclass, replace
from typing import Literal
from xml.sax.saxutils import escape

from embedded_aws.operations import service_model

FaultKind = Literal["throttle", "5xx", "latency"]
FAULT_KINDS: tuple[FaultKind, ...] = ("throttle", "5xx", "latency")
THROTTLING_CODES = ("ThrottlingException", "Throttling", "TooManyRequestsException", "ThrottledException",
                    "RequestLimitExceeded")
# Service-wide server errors a model may declare (others with a 5xx status are operation-specific).
GENERIC_SERVER_ERRORS = ("ServerException", "InternalServerException", "InternalServerError",
                         "ServiceUnavailableException", "ServiceUnavailable", "InternalFailure")
SERVER_CODES = {500: "InternalFailure", 502: "BadGateway", 503: "ServiceUnavailable", 504: "GatewayTimeout"}
Response = tuple[int, list[tuple[str, str]], bytes]


@dataclass(frozen=True)
class FaultSpec:
    """One fault: which requests (service, operation or "*"), what happens, how often."""

    service: str
    operation: str = "*"
    kind: FaultKind = "throttle"
    times: int | None = 1
    delay_s: float = 0.0
    status: int = 500

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; use one of {', '.join(FAULT_KINDS)}")
        if self.times is not None and self.times < 1:
            raise ValueError("times must be at least 1 (or None for every request)")
        if self.kind == "5xx" and not 500 <= self.status <= 599:
            raise ValueError(f"a 5xx fault needs a status from 500 to 599, not {self.status}")
        if self.delay_s < 0:
            raise ValueError("delay_s must not be negative")

    def matches(self, service: str | None, operation: str | None) -> bool:
        return service == self.service and self.operation in ("*", operation)


class FaultRegistry:
    """The pending faults of one server; thread-safe (the server handles requests in threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[FaultSpec] = []

    def add(self, spec: FaultSpec) -> None:
        with self._lock:
            self._faults.append(spec)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def pending(self) -> list[dict[str, object]]:
        with self._lock:
            return [asdict(f) for f in self._faults]

    def take(self, service: str | None, operation: str | None) -> FaultSpec | None:
        """The first fault matching this request, used up by one (removed when exhausted)."""
        with self._lock:
            for index, fault in enumerate(self._faults):
                if fault.matches(service, operation):
                    if fault.times is not None:
                        left = fault.times - 1
                        if left:
                            self._faults[index] = replace(fault, times=left)
                        else:
                            del self._faults[index]
                    return fault
        return None


def fault_response(fault: FaultSpec, *, service: str) -> Response:
    """The HTTP response AWS would give for an error fault on `service`."""
    if fault.kind == "throttle":
        code, status = _modeled_error(service, THROTTLING_CODES) or (_default_throttle(service), 400)
        return error_response(service=service, status=status, code=code, message="Rate exceeded", sender=True)
    code = _error_with_status(service, fault.status) or SERVER_CODES.get(fault.status, "InternalFailure")
    return error_response(service=service, status=fault.status, code=code,
                          message="We encountered an internal error. Please try again.", sender=False)


def error_response(*, service: str, status: int, code: str, message: str, sender: bool) -> Response:
    """An error in `service`'s wire format (JSON, REST-JSON, query or REST-XML)."""
    model = service_model(service)
    protocol = model.protocol if model is not None else "json"
    request_id = str(uuid.uuid4())
    headers = [("x-amzn-RequestId", request_id), ("x-amzn-ErrorType", code)]
    if protocol in ("query", "ec2"):
        xml = (f"<ErrorResponse><Error><Type>{'Sender' if sender else 'Receiver'}</Type><Code>{escape(code)}</Code>"
               f"<Message>{escape(message)}</Message></Error><RequestId>{request_id}</RequestId></ErrorResponse>")
        return status, [*headers, ("Content-Type", "text/xml")], xml.encode()
    if protocol == "rest-xml":
        xml = (f"<Error><Code>{escape(code)}</Code><Message>{escape(message)}</Message>"
               f"<RequestId>{request_id}</RequestId></Error>")
        return status, [*headers, ("Content-Type", "application/xml")], xml.encode()
    if protocol == "rest-json":
        return status, [*headers, ("Content-Type", "application/json")], json.dumps({"message": message}).encode()
    version = model.metadata.get("jsonVersion", "1.1") if model is not None else "1.1"
    body = json.dumps({"__type": code, "message": message}).encode()
    return status, [*headers, ("Content-Type", f"application/x-amz-json-{version}")], body


def _modeled_error(service: str, codes: tuple[str, ...]) -> tuple[str, int] | None:
    model = service_model(service)
    if model is None:
        return None
    for shape in model.error_shapes:
        error = shape.metadata.get("error", {})
        code = error.get("code", shape.name)
        if code in codes or shape.name in codes:
            return str(code), int(error.get("httpStatusCode", 400))
    return None


def _error_with_status(service: str, status: int) -> str | None:
    model = service_model(service)
    if model is None:
        return None
    for shape in model.error_shapes:
        error = shape.metadata.get("error", {})
        if shape.name in GENERIC_SERVER_ERRORS and error.get("httpStatusCode") == status:
            return str(error.get("code", shape.name))
    return None


def _default_throttle(service: str) -> str:
    model = service_model(service)
    return "Throttling" if model is not None and model.protocol in ("query", "ec2") else "ThrottlingException"
