"""One Plan structure for every engine and executor.

Terraform's `show -json`, the HyperPod boto3 driver and the Kubernetes applier each turn what
they found into `ResourceChange`s, so rendering, audit records and the reconciler never care
which engine produced a plan. Sensitive values are masked here, once, before anything renders
or stores a plan.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from engines.outcomes import Failure, Refusal
from stacks.spec import StackName

__all__ = [
    "MASK",
    "Action",
    "ApplyResult",
    "AttributeChange",
    "Drift",
    "DriftOutcome",
    "Failure",
    "Plan",
    "PlanOutcome",
    "Refusal",
    "ResourceChange",
    "StackName",
    "diff_attributes",
    "failure_lines",
    "mask",
    "split_outcomes",
    "value_digest",
]

MASK = "(sensitive)"


class Action(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"
    DELETE = "delete"
    NOOP = "no-op"
    READ = "read"
    IMPORT = "import"  # a live object taken into the state instead of created (and updated where it differs)


_SYMBOL = {Action.CREATE: "+", Action.UPDATE: "~", Action.REPLACE: "-/+", Action.DELETE: "-",
           Action.NOOP: " ", Action.READ: "<=",
           Action.IMPORT: "<-"}


@dataclass(frozen=True)
class AttributeChange:
    path: str
    before: Any
    after: Any
    sensitive: bool = False
    forces_replacement: bool = False
    # A sensitive after-value's SHA-256 (of its canonical JSON), so that the reviewed record can
    # tell a changed secret without holding it (`reconciler.reviewed` keys it with the tree id
    # before writing). In memory only: never rendered, never in `as_dict` or `repr`.
    digest: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ResourceChange:
    """What will happen to one resource. `executor` names who carries it out: terraform, the
    hyperpod driver, or kubernetes. `note` explains changes that will not be carried out."""

    address: str
    type: str
    name: str
    action: Action
    executor: str
    attributes: tuple[AttributeChange, ...] = ()
    note: str | None = None

    @property
    def symbol(self) -> str:
        return _SYMBOL[self.action]


@dataclass(frozen=True)
class Plan:
    stack: StackName
    engine: str
    changes: tuple[ResourceChange, ...]
    source_commit: str | None = None
    artifact_sha256: str | None = None  # hash of the saved plan file(s) that apply must match
    notes: tuple[str, ...] = ()

    @property
    def actionable(self) -> tuple[ResourceChange, ...]:
        return tuple(c for c in self.changes if c.action not in (Action.NOOP, Action.READ) and c.note is None)

    @property
    def is_empty(self) -> bool:
        return not self.actionable

    def counts(self) -> dict[str, int]:
        result = {a.value: 0 for a in (Action.CREATE, Action.UPDATE, Action.REPLACE, Action.DELETE, Action.IMPORT)}
        for change in self.actionable:
            result[change.action.value] += 1
        return result

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for change in data["changes"]:
            change["action"] = change["action"].value
            for attribute in change["attributes"]:
                attribute.pop("digest", None)  # not even a hash of a secret leaves the process
        return data

    def fingerprint(self) -> str:
        """A stable hash of the plan's content (what a reviewer approved)."""
        blob = json.dumps(self.as_dict(), sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()


@dataclass(frozen=True)
class ApplyResult:
    stack: StackName
    applied: tuple[ResourceChange, ...] = ()
    failed: tuple[tuple[ResourceChange, Failure], ...] = ()
    skipped: tuple[ResourceChange, ...] = ()
    refusal: Refusal | None = None  # expected, for the user (e.g. the plan changed since review)
    error: Failure | None = None  # unexpected, classified temporary or permanent

    @property
    def ok(self) -> bool:
        return self.refusal is None and self.error is None and not self.failed

    @property
    def failures(self) -> tuple[Failure, ...]:
        """Every classified failure of this stack (the stack's own error and each object's)."""
        return ((self.error,) if self.error else ()) + tuple(f for _, f in self.failed)

    @property
    def failure(self) -> str | None:
        """Why the stack did not apply cleanly (None when it did)."""
        if self.ok:
            return None
        if self.refusal is not None:
            return self.refusal.message
        return (self.error.message if self.error else None) or "; ".join(
            f"{c.address}: {e.message}" for c, e in self.failed)


def split_outcomes(outcomes: Mapping[StackName, Plan | Failure]) -> tuple[list[Plan], dict[StackName, Failure]]:
    """The plans (in the outcomes' order) and the failure of every stack that could not be planned."""
    plans = [o for o in outcomes.values() if isinstance(o, Plan)]
    return plans, {name: o for name, o in outcomes.items() if isinstance(o, Failure)}


def failure_lines(failures: Mapping[StackName, Failure]) -> list[str]:
    """One `stack: [kind] message` line per failed stack; a message shared by many stacks (e.g.
    missing credentials) is said once, naming the stacks."""
    by_message: dict[tuple[str, str], list[str]] = {}
    for stack, failure in failures.items():
        by_message.setdefault((failure.kind, failure.message), []).append(stack)
    lines = []
    for (kind, message), stacks in by_message.items():
        who = stacks[0] if len(stacks) == 1 else f"{len(stacks)} stacks ({', '.join(sorted(stacks))})"
        lines.append(f"{who}: {kind}: {message}")
    return lines


@dataclass(frozen=True)
class Drift:
    """Live state that differs from the declared state, per resource."""

    stack: StackName
    changes: tuple[ResourceChange, ...] = field(default_factory=tuple)
    unmanaged: tuple[str, ...] = ()  # live objects that no stack declares

    @property
    def drifted(self) -> bool:
        return bool(self.changes) or bool(self.unmanaged)


PlanOutcome = Plan | Failure  # what planning one stack ended with
DriftOutcome = Drift | Failure  # what refreshing one stack ended with


def mask(value: Any, sensitive: Any) -> Any:
    """Replace every value that a sensitivity map (Terraform's `*_sensitive`) marks."""
    if sensitive is True:
        return MASK
    if isinstance(value, dict) and isinstance(sensitive, dict):
        return {k: mask(v, sensitive.get(k, False)) for k, v in value.items()}
    if isinstance(value, list) and isinstance(sensitive, list):
        return [mask(v, sensitive[i] if i < len(sensitive) else False) for i, v in enumerate(value)]
    return value


def value_digest(value: Any) -> str:
    """SHA-256 of a value's canonical JSON (what `AttributeChange.digest` holds)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def diff_attributes(before: Any, after: Any, *, path: str = "",
                    sensitive: frozenset[str] = frozenset(),
                    replace_paths: frozenset[str] = frozenset()) -> tuple[AttributeChange, ...]:
    """Attribute-level differences between two JSON-like values, leaves only, sorted by path."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[AttributeChange] = []
        for key in sorted(set(before) | set(after)):
            sub = f"{path}.{key}" if path else str(key)
            out.extend(diff_attributes(before.get(key), after.get(key), path=sub, sensitive=sensitive,
                                       replace_paths=replace_paths))
        return tuple(out)
    if before == after:
        return ()
    hidden = path in sensitive or path.split(".")[0] in sensitive
    return (AttributeChange(path=path, before=MASK if hidden and before is not None else before,
                            after=MASK if hidden and after is not None else after, sensitive=hidden,
                            forces_replacement=path in replace_paths),)
