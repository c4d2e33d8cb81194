"""A stack's resource graph as captured from its Pulumi program (`stacks.graph`), as data: what
the engines plan from, kept in the graph cache and compared in golden files. Apart from the
capture so that reading a cached graph does not load the Pulumi SDK (~0.3 s of a command's start).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GraphResource:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    provider: str | None
    inputs: Mapping[str, Any]
    depends_on: tuple[str, ...]
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    import_id: str | None = None  # the `import_` resource option: an existing object Pulumi adopts
    lookup: bool = False  # a read (a Pulumi invoke; a Terraform data source), not a resource (`LOOKUPS`)

    def as_dict(self, *, readable: bool = False) -> dict[str, Any]:
        inputs = _readable(dict(self.inputs)) if readable else dict(self.inputs)
        data = {"urn": self.urn, "type": self.type, "name": self.name, "parent": self.parent,
                "custom": self.custom, "provider": self.provider, "inputs": inputs,
                "dependsOn": list(self.depends_on),
                "propertyDependencies": {k: list(v) for k, v in sorted(self.property_dependencies.items())}}
        if self.import_id:  # rare (an adopted HyperPod cluster): absent otherwise, as before
            data["importId"] = self.import_id
        if self.lookup:
            data["lookup"] = True
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GraphResource:
        """The resource `as_dict()` wrote (not readable: inputs as recorded)."""
        return cls(urn=data["urn"], type=data["type"], name=data["name"], parent=data["parent"], custom=data["custom"],
                   provider=data["provider"], inputs=data["inputs"], depends_on=tuple(data["dependsOn"]),
                   property_dependencies={k: tuple(v) for k, v in data["propertyDependencies"].items()},
                   import_id=data.get("importId"), lookup=bool(data.get("lookup")))


@dataclass(frozen=True)
class ResourceGraph:
    stack: str
    resources: tuple[GraphResource, ...]

    def of_type(self, type_: str) -> list[GraphResource]:
        return [r for r in self.resources if r.type == type_]

    def named(self, name: str) -> GraphResource:
        return next(r for r in self.resources if r.name == name)

    def to_json(self, *, readable: bool = True) -> str:
        """Stable (sorted) JSON; `readable` shows JSON-string inputs (policies) parsed, under "$json"."""
        data = {"stack": self.stack, "resources": [r.as_dict(readable=readable) for r in self.resources]}
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _readable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(v) for v in value]
    if isinstance(value, str) and value.startswith("{"):
        try:
            return {"$json": json.loads(value)}
        except ValueError:
            return value
    return value


# The reads a stack's program may make, and the results it uses from each: a read's result is not
# known when the graph is captured (a group's id in the identity store, the role Identity Center
# provisions for a permission set), so each result is a placeholder `${lookup:<name>:<path>}` that
# the engine resolves where it reads (the terraform engine: a data source; the live scan: the same
# read through boto3). The name is a digest of the read (what, with which arguments, through which
# provider), so the same read made twice is one lookup.
LOOKUPS: Mapping[str, Mapping[str, Any]] = {
    "aws:identitystore/getGroup:getGroup": {"groupId": "groupId"},
    "aws:identitystore/getUser:getUser": {"userId": "userId"},
    "aws:iam/getRoles:getRoles": {"arns": ["arns[0]"]},
}
LOOKUP_PLACEHOLDER = re.compile(r"\$\{lookup:(?P<name>[a-z0-9-]+):(?P<path>[A-Za-z0-9_\[\]]+)\}")


def lookup_placeholder(name: str, path: str) -> str:
    return f"${{lookup:{name}:{path}}}"


def lookup_name(token: str, args: Mapping[str, Any], provider: str | None) -> str:
    function = token.rsplit(":", 1)[-1].removeprefix("get").lower()
    digest = hashlib.sha256(json.dumps([token, args, provider or ""], sort_keys=True).encode()).hexdigest()
    return f"{function}-{digest[:12]}"
