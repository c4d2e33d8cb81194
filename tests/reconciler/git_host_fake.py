"""Local GitHub and GitLab stand-ins (http.server in a thread) that check every request against the
hosts' own published OpenAPI descriptions (`git_host_openapi/github.json`, `gitlab.json`: subsets
cut from GitHub's and GitLab's documents, see their `info.x-hypergov-extracted-from`), not against
shapes written here: the method and path must match an operation, every path and query parameter
must be declared and valid for its schema, required parameters present, and a JSON body valid for
the operation's requestBody schema (openapi-schema-validator, OAS 3.0 semantics: `nullable`,
formats). Each answer is itself checked against the operation's response schema, and built from
the description's own examples (GitHub) where it has them. A request that fails is answered 400
and recorded in `violations`; the fixtures fail a test that leaves any.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30Validator, oas30_format_checker

SPECS = Path(__file__).parent / "git_host_openapi"


def _deref(node: Any, spec: dict[str, Any], depth: int = 0) -> Any:
    """`node` with every local `$ref` replaced by what it points at (the subsets are not recursive)."""
    assert depth < 40, "a $ref cycle"
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            target: Any = spec
            for part in ref.removeprefix("#/").split("/"):
                target = target[part]
            return _deref(target, spec, depth + 1)
        return {k: _deref(v, spec, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_deref(v, spec, depth + 1) for v in node]
    return node


def _errors(instance: Any, schema: dict[str, Any]) -> list[str]:
    validator = OAS30Validator(schema, format_checker=oas30_format_checker)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
            for e in validator.iter_errors(instance)]


def _coerce(text: str, schema: dict[str, Any]) -> Any:
    """A path or query value as its schema's type (HTTP carries text)."""
    kinds = [s.get("type") for s in schema.get("oneOf", [])] or [schema.get("type")]
    for kind in kinds:
        if kind == "integer" and re.fullmatch(r"-?\d+", text):
            return int(text)
        if kind == "boolean" and text in ("true", "false"):
            return text == "true"
    return text


@dataclass
class Operation:
    method: str
    template: str
    spec: dict[str, Any]  # dereferenced
    pattern: re.Pattern[str]


class OpenApiCheck:
    """Requests checked against one description's operations."""

    def __init__(self, spec_file: Path) -> None:
        raw = json.loads(spec_file.read_text())
        self.source = raw["info"]["x-hypergov-extracted-from"]
        self.operations: list[Operation] = []
        for template, item in raw["paths"].items():
            shared = item.get("parameters", [])
            for method, op in item.items():
                if method in ("parameters", "summary"):
                    continue
                full = _deref({**op, "parameters": [*shared, *op.get("parameters", [])]}, raw)
                regex = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m[1]}>[^/]+)", re.escape(template))
                self.operations.append(Operation(method.upper(), template, full, re.compile(f"^{regex}$")))

    def check(self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str],
              body: bytes) -> tuple[Operation | None, dict[str, Any], list[str]]:
        """The operation, its path parameters (typed) and every way the request breaks the description."""
        for op in self.operations:
            found = op.pattern.match(path)
            if op.method == method and found:
                break
        else:
            return None, {}, [f"{method} {path}: no such operation in {self.source['path']}"]
        problems: list[str] = []
        params: dict[str, Any] = {}
        declared = {(p["in"], p["name"]): p for p in op.spec["parameters"]}
        for name, value in found.groupdict().items():
            p = declared.get(("path", name))
            if p is None:
                problems.append(f"path parameter {name} is not declared")
                continue
            params[name] = _coerce(urllib.parse.unquote(value), p.get("schema", {}))
            problems += [f"path {name}: {e}" for e in _errors(params[name], p.get("schema", {}))]
        for name, values in query.items():
            p = declared.get(("query", name))
            if p is None:
                problems.append(f"query parameter {name} is not declared by {op.method} {op.template}")
                continue
            for value in values:
                problems += [f"query {name}: {e}" for e in _errors(_coerce(value, p.get("schema", {})),
                                                                     p.get("schema", {}))]
        for (where, name), p in declared.items():
            if not p.get("required"):
                continue
            present = (name in query if where == "query" else name.lower() in headers if where == "header"
                       else where == "path")
            if not present:
                problems.append(f"required {where} parameter {name} is missing")
        request_body = op.spec.get("requestBody")
        if request_body is None:
            if body:
                problems.append(f"{op.method} {op.template} takes no body")
        elif not body:
            if request_body.get("required"):
                problems.append("the request body is required")
        else:
            content_type = headers.get("content-type", "").split(";")[0].strip()
            media = request_body["content"].get(content_type)
            if media is None:
                problems.append(f"content type {content_type!r} is not one of {sorted(request_body['content'])}")
            else:
                try:
                    problems += [f"body {e}" for e in _errors(json.loads(body), media["schema"])]
                except ValueError:
                    problems.append("the body is not JSON")
        return op, params, problems

    def response_problems(self, op: Operation, status: int, body: Any, *, as_status: int | None = None,
                          items: bool = False) -> list[str]:
        """The fake's own answer against the operation's response (`as_status`, `items`: a known gap
        of the description, see gitlab.json's known_gaps)."""
        response = op.spec["responses"].get(str(as_status or status))
        if response is None:
            return [f"answer {status} is not a response of {op.method} {op.template}"]
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        if schema is None:
            return []
        return [e for item in (body if items else [body]) for e in _errors(item, schema)]


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    operation: str


@dataclass
class FakeHost:
    """A Git host's comments and statuses, behind a checked HTTP API. `fail` holds statuses to
    answer with (in order) before serving normally."""

    kind: str
    check: OpenApiCheck
    comments: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    fail: list[int] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    url: str = ""
    next_id: int = 1000

    @property
    def api_url(self) -> str:
        return self.url + ("/api/v4" if self.kind == "gitlab" else "")

    def add_comment(self, body: str, *, system: bool = False) -> dict[str, Any]:
        self.next_id += 1
        comment = ({"id": self.next_id, "body": body, "system": system, "noteable_type": "MergeRequest"}
                   if self.kind == "gitlab" else self._github_comment(self.next_id, body))
        self.comments.append(comment)
        return comment

    def _github_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        example = copy.deepcopy(self._example("issue-comment"))
        example.update(id=comment_id, body=body, url=f"{self.url}/repos/o/r/issues/comments/{comment_id}")
        return example

    def _example(self, name: str) -> Any:
        raw = json.loads((SPECS / "github.json").read_text())
        return raw["components"]["examples"][name]["value"]

    def marked(self) -> list[dict[str, Any]]:
        from reconciler.git_host import MARKER

        return [c for c in self.comments if MARKER in c["body"]]

    # -- the HTTP side ------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str],
                                                                                                  Any]:
        parsed = urllib.parse.urlsplit(raw_path)
        path = parsed.path.removeprefix("/api/v4") if self.kind == "gitlab" else parsed.path
        template_path = "/api/v4" + path if self.kind == "gitlab" else path
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        op, params, problems = self.check.check(method, template_path, query, headers, body)
        self._auth_problems(headers, problems)
        self.requests.append(Seen(method, parsed.path, query, headers, json.loads(body) if body else None,
                                  f"{op.method} {op.template}" if op else "?"))
        if problems or op is None:
            self.violations += [f"{method} {raw_path}: {p}" for p in problems]
            return 400, {}, {"message": "; ".join(problems)}
        if self.fail:
            status = self.fail.pop(0)
            return status, {}, {"message": "Bad credentials" if status == 401 else f"fake {status}"}
        payload = json.loads(body) if body else None
        status, out_headers, answer = self._serve(op, params, query, payload, parsed.path)
        gitlab_list = self.kind == "gitlab" and method == "GET"
        gitlab_status = self.kind == "gitlab" and op.template.endswith("/statuses/{sha}")
        self.violations += [f"answer to {method} {raw_path}: {p}" for p in self.check.response_problems(
            op, status, answer, as_status=200 if gitlab_status else None, items=gitlab_list)]
        return status, out_headers, answer

    def _auth_problems(self, headers: dict[str, str], problems: list[str]) -> None:
        if self.kind == "github":
            if not headers.get("authorization", "").startswith("Bearer "):
                problems.append("no Authorization: Bearer header")
            if "user-agent" not in headers:  # GitHub refuses requests without one
                problems.append("no User-Agent header")
        elif "private-token" not in headers and not headers.get("authorization", "").startswith("Bearer "):
            problems.append("no PRIVATE-TOKEN or Authorization: Bearer header")

    def _serve(self, op: Operation, params: dict[str, Any], query: dict[str, list[str]],
               payload: Any, path: str) -> tuple[int, dict[str, str], Any]:
        name = f"{op.method} {op.template}"
        if op.method == "GET":
            per_page = int(query.get("per_page", ["30" if self.kind == "github" else "20"])[0])
            page = int(query.get("page", ["1"])[0])
            chunk = self.comments[(page - 1) * per_page: page * per_page]
            more = page * per_page < len(self.comments)
            if self.kind == "github":
                first = f'<{self.url}{path}?per_page={per_page}&page=1>; rel="first"'
                nxt = f'<{self.url}{path}?per_page={per_page}&page={page + 1}>; rel="next"'
                return 200, {"Link": f"{nxt}, {first}" if more else first}, chunk
            return 200, {"X-Next-Page": str(page + 1) if more else "", "X-Page": str(page),
                         "X-Per-Page": str(per_page)}, chunk
        if name.endswith("/statuses/{sha}"):
            status = {**payload, "sha": params["sha"]}
            self.statuses.append(status)
            if self.kind == "github":
                example = copy.deepcopy(self._example("status"))
                example.update(state=payload["state"], description=payload.get("description"),
                               context=payload.get("context", "default"), target_url=payload.get("target_url"))
                return 201, {}, example
            answer = {"id": len(self.statuses), "sha": params["sha"], "status": payload["state"],
                      "name": payload.get("name", "default"), "description": payload.get("description"),
                      "target_url": payload.get("target_url"), "ref": payload.get("ref")}
            # GitLab's description marks none of these nullable: a field not known is left out
            return 201, {}, {k: v for k, v in answer.items() if v is not None}
        if op.method == "POST":
            return 201, {}, self.add_comment(payload["body"])
        comment_id = params["comment_id" if self.kind == "github" else "note_id"]
        for comment in self.comments:
            if comment["id"] == comment_id:
                comment["body"] = payload["body"]
                return 200, {}, comment
        return 404, {}, {"message": "Not Found"}


def serve(host: FakeHost) -> Iterator[FakeHost]:
    """Runs `host` on 127.0.0.1 until the generator is closed."""

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, headers, answer = host.handle(self.command, self.path,
                                                  {k.lower(): v for k, v in self.headers.items()}, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            for key, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = _any  # http.server's names

        def log_message(self, *_: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield host
    finally:
        server.shutdown()
        server.server_close()


def github() -> FakeHost:
    return FakeHost("github", OpenApiCheck(SPECS / "github.json"))


def gitlab() -> FakeHost:
    return FakeHost("gitlab", OpenApiCheck(SPECS / "gitlab.json"))
