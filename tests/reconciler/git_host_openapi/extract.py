"""Cut the operations hypergov calls out of a Git host's published OpenAPI description, with every
component they `$ref` (transitively), into a small file the tests validate requests against.

    python -m tests.reconciler.git_host_openapi.extract DESCRIPTION OUT.json \\
        --repository github/rest-api-description --path descriptions/api.github.com/api.github.com.json \\
        --commit <id or a description of the version> [--obtained-from TEXT] \\
        --operation "get /repos/{owner}/{repo}/issues/{issue_number}/comments" ...

DESCRIPTION is JSON or YAML (OpenAPI 3.x). The output keeps the operations and components exactly
as published, except vendor extensions named by `--drop-extension` (a copy taken from a package,
e.g. Octokit's, carries its own `x-octokit`), and records where it came from under
`info.x-hypergov-extracted-from` (repository, path, commit, how it was obtained, the SHA-256 of
the file read). Nothing here is hypergov's own shape: a test that validates against the output
validates against the host's description.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import yaml

OPERATIONS_GITHUB = (
    "get /repos/{owner}/{repo}/issues/{issue_number}/comments",
    "post /repos/{owner}/{repo}/issues/{issue_number}/comments",
    "patch /repos/{owner}/{repo}/issues/comments/{comment_id}",
    "post /repos/{owner}/{repo}/statuses/{sha}",
)


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/"):
            found.add(ref)
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def _without(node: Any, extensions: frozenset[str]) -> Any:
    if isinstance(node, dict):
        return {k: _without(v, extensions) for k, v in node.items() if k not in extensions}
    if isinstance(node, list):
        return [_without(v, extensions) for v in node]
    return node


def extract(description: dict[str, Any], operations: list[tuple[str, str]], *,
            drop: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The description cut down to `operations` ((method, path) pairs) and the components they
    reach through `$ref`, however deep."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path in operations:
        item = description["paths"][path]
        kept = paths.setdefault(path, {k: v for k, v in item.items() if k in ("parameters", "summary")})
        kept[method] = item[method]
    components: dict[str, dict[str, Any]] = {}
    pending = _refs(paths)
    seen: set[str] = set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        _, _, kind, name = ref.split("/", 3)
        node = description["components"][kind][name]
        components.setdefault(kind, {})[name] = node
        pending |= _refs(node) - seen
    out = {"openapi": description["openapi"], "info": dict(description.get("info", {})),
           "paths": paths, "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())}}
    return _without(out, drop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("description", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--repository", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--obtained-from", default="")
    parser.add_argument("--operation", action="append", default=[])
    parser.add_argument("--drop-extension", action="append", default=[])
    args = parser.parse_args(argv)
    raw = args.description.read_bytes()
    description = json.loads(raw) if args.description.suffix == ".json" else yaml.safe_load(raw)
    wanted = [tuple(op.split(" ", 1)) for op in (args.operation or OPERATIONS_GITHUB)]
    subset = extract(description, [(m.lower(), p) for m, p in wanted], drop=frozenset(args.drop_extension))
    subset["info"]["x-hypergov-extracted-from"] = {
        "repository": args.repository, "path": args.path, "commit": args.commit,
        "obtained_from": args.obtained_from, "sha256_of_file_read": hashlib.sha256(raw).hexdigest(),
        "operations": [f"{m.upper()} {p}" for m, p in wanted],
        "extracted_by": "tests/reconciler/git_host_openapi/extract.py"}
    args.out.write_text(json.dumps(subset, indent=1, sort_keys=False) + "\n")
    print(f"{args.out}: {len(subset['paths'])} paths, "
          f"{sum(len(v) for v in subset['components'].values())} components", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
