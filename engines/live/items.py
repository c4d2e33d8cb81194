"""What a live drift scan reports: one `DriftItem` per object that differs from the tree, and the
scan's outcome (its items, the clusters it could not read, the API calls it made).

The shape is the one `hypergov drift --json` prints (README, "Drift"); keep it stable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from engines.outcomes import Failure

DriftKind = Literal["changed", "missing", "unmanaged", "unbounded"]


@dataclass(frozen=True)
class AttributeDrift:
    path: str  # dotted, in the API's own spelling: ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit
    expected: Any  # what the tree declares (None: it declares nothing there)
    live: Any  # what the API returned (None: nothing there)


@dataclass(frozen=True)
class DriftItem:
    """`changed`: live, with the attribute paths that differ; `missing`: declared, not live;
    `unmanaged`: live inside what hypergov governs, declared by no stack; `unbounded`: a hypergov
    role without its permissions boundary, or whose live policies grant beyond the org boundary."""

    kind: DriftKind
    stack: str
    address: str
    type: str
    account: str
    region: str
    fix: str
    attributes: tuple[AttributeDrift, ...] = ()
    changed_by: str | None = None  # where the API says who last changed the object
    changed_at: str | None = None  # ISO 8601, where the API says when
    cluster: str | None = None  # the tree's cluster the object belongs to (HyperPod, EKS, Kubernetes objects)
    # The API's identity of the object ({"RoleName": ...}), what a pruner deletes by; not reported.
    ref: Mapping[str, str] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "stack": self.stack, "address": self.address, "type": self.type,
                "account": self.account, "region": self.region,
                "attributes": [{"path": a.path, "expected": a.expected, "live": a.live} for a in self.attributes],
                "changed_by": self.changed_by, "changed_at": self.changed_at, "cluster": self.cluster,
                "fix": self.fix}


@dataclass(frozen=True)
class ScanFailure:
    """A part of the org the scan could not read: the scan is incomplete, never "no drift"."""

    stack: str
    what: str  # e.g. "cluster gpu-west (arn:...)"
    failure: Failure


@dataclass(frozen=True)
class LiveScan:
    items: tuple[DriftItem, ...]
    failures: tuple[ScanFailure, ...]
    api_calls: int
    seconds: float
    scanned_at: str  # ISO 8601, when the scan started
    stacks: tuple[str, ...]  # the stacks whose live objects were read (or tried)
    calls_by_service: Mapping[str, int] = field(default_factory=dict)
    # What the scan did not read by design, not a failure: "Kubernetes objects of cluster trn-east:
    # no kubeconfig configured". The scan is complete without them; a report says so.
    not_read: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.failures

    def items_of(self, stack: str) -> tuple[DriftItem, ...]:
        return tuple(i for i in self.items if i.stack == stack)


def iso_time(value: Any) -> str | None:
    """An API timestamp (boto3 gives datetimes) as ISO 8601."""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value) if value else None


def user_of(context: Mapping[str, Any] | None) -> str | None:
    """Who a SageMaker `UserContext` (LastModifiedBy, CreatedBy) names: the IAM identity's ARN, else
    the Studio user profile."""
    if not context:
        return None
    identity = context.get("IamIdentity") or {}
    found = identity.get("Arn") or context.get("UserProfileArn") or context.get("UserProfileName")
    return str(found) if found else None


_SENSITIVE_KEYS = ("password", "secret", "token", "privatekey", "private_key", "credential", "kubeconfig")
MASKED = "(masked)"


def masked(path: str, value: Any) -> Any:
    """The value as a report may show it: masked where the attribute's name says it is a secret
    (drift reports go to logs, issues and merge requests)."""
    leaf = path.rsplit(".", 1)[-1].lower()
    return MASKED if value is not None and any(k in leaf for k in _SENSITIVE_KEYS) else value


def attribute(path: str, expected: Any, live: Any) -> AttributeDrift:
    """An attribute's drift with secrets masked."""
    return AttributeDrift(path, masked(path, expected), masked(path, live))
