"""Which AWS service and operation an HTTP request calls, read the way AWS reads it.

Fault injection and the call log must work for any client (boto3, the Go SDK inside the
Terraform provider), so they cannot rely on a client hook: the server reads the SigV4
credential scope for the service and the account (by convention, see `account_from_access_key`),
then the operation from ``X-Amz-Target`` (JSON protocols), the ``Action`` parameter (query
protocol) or the method and path matched against the model's ``requestUri`` (REST protocols).
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote

import botocore.session
from botocore.exceptions import UnknownServiceError
from botocore.model import ServiceModel

CREDENTIAL = re.compile(r"Credential=(?P<key>[^/,\s]+)/\d{8}/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request")
ACCOUNT_ID = re.compile(r"\d{12}")
LABEL = re.compile(r"\{([^}]+?)(\+?)\}")


@dataclass(frozen=True)
class RequestInfo:
    service: str | None
    operation: str | None
    region: str | None
    access_key: str | None


@dataclass(frozen=True)
class RestRoute:
    method: str
    pattern: re.Pattern[str]
    specificity: int
    operation: str


def identify(environ: dict[str, Any]) -> RequestInfo:
    """The service, operation, region and access key of a WSGI request (None where unknown)."""
    match = CREDENTIAL.search(environ.get("HTTP_AUTHORIZATION", ""))
    if match is None:
        return RequestInfo(service=None, operation=None, region=None, access_key=None)
    service = match["service"]
    return RequestInfo(service=service, operation=_operation(service, environ), region=match["region"],
                       access_key=match["key"])


def account_from_access_key(access_key: str | None) -> str | None:
    """The embedded endpoint's account convention: an access key id that is a 12-digit account id
    acts in that account (real AWS derives the account from the key in the same way)."""
    return access_key if access_key and ACCOUNT_ID.fullmatch(access_key) else None


def _operation(service: str, environ: dict[str, Any]) -> str | None:
    target = environ.get("HTTP_X_AMZ_TARGET")
    if target:
        return str(target).rsplit(".", 1)[-1]
    action = _query_action(environ)
    if action:
        return action
    model = service_model(service)
    if model is None or model.protocol not in ("rest-json", "rest-xml"):
        return None
    return match_rest(routes(service), method=str(environ.get("REQUEST_METHOD", "GET")), path=raw_path(environ))


def _query_action(environ: dict[str, Any]) -> str | None:
    query = parse_qs(str(environ.get("QUERY_STRING", "")))
    if "Action" in query:
        return query["Action"][0]
    if not str(environ.get("CONTENT_TYPE", "")).startswith("application/x-www-form-urlencoded"):
        return None
    body = read_body(environ)
    actions = parse_qs(body.decode("utf-8", "replace")).get("Action")
    return actions[0] if actions else None


def read_body(environ: dict[str, Any]) -> bytes:
    """The request body, leaving an identical stream in place for the application."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    body: bytes = environ["wsgi.input"].read(length) if length else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return body


def raw_path(environ: dict[str, Any]) -> str:
    """The path as sent (percent-encoded), so that an encoded '/' inside a label stays one label."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if raw:
        return str(raw).split("?", 1)[0]
    return quote(str(environ.get("PATH_INFO", "/")), safe="/")


def match_rest(table: tuple[RestRoute, ...], *, method: str, path: str) -> str | None:
    """The most specific operation whose method and URI template match."""
    candidates = [r for r in table if r.method == method and r.pattern.fullmatch(path)]
    return max(candidates, key=lambda r: r.specificity).operation if candidates else None


@functools.cache
def service_model(service: str) -> ServiceModel | None:
    try:
        return botocore.session.get_session().get_service_model(service)
    except UnknownServiceError:
        return None


@functools.cache
def routes(service: str) -> tuple[RestRoute, ...]:
    model = service_model(service)
    if model is None:
        return ()
    table = []
    for name in model.operation_names:
        http = model.operation_model(name).http
        template = str(http.get("requestUri", "/")).split("?", 1)[0]
        table.append(RestRoute(method=str(http.get("method", "POST")), pattern=_template_regex(template),
                               specificity=len(LABEL.sub("", template)), operation=name))
    return tuple(table)


def _template_regex(template: str) -> re.Pattern[str]:
    parts: list[str] = []
    last = 0
    for label in LABEL.finditer(template):
        parts.append(re.escape(template[last:label.start()]))
        parts.append(".+" if label.group(2) else "[^/]+")
        last = label.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts) + "/?")
