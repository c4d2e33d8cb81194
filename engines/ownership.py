"""Which engine owns the org's AWS and Kubernetes objects: one record in the shared record store
(`engine.json` in the state directory, or under `<prefix>/reconciler/` in the state bucket).

Two engines keep two state stores. If an admin's `pulumi up` and a terraform-engine reconciler
both applied the same tree, each would believe it owns the same IAM roles, budgets and quotas,
and each would "repair" the other's changes (or delete them when a stack leaves the tree). So
the first engine that applies records itself as the owner, and the other engine refuses to plan
or apply, saying which engine owns the objects and how to switch. `engine: auto` follows the
record (terraform, the default engine, when there is none).

Switching engines is a migration (import every object into the other engine's state), after
which the record is rewritten; the refusal names the record to rewrite.
"""

from __future__ import annotations

import getpass
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from engines.objects import RecordStore, RecordUnreadable, WriteConflict
from engines.outcomes import PermanentError

EngineKind = Literal["pulumi", "terraform"]
OWNERSHIP_RECORD = "engine.json"
_ENGINES: tuple[EngineKind, ...] = ("pulumi", "terraform")


class EngineOwnedElsewhereError(PermanentError):
    """The org's objects are owned by the other engine; the message says which and how to switch."""

    reason = "engine-ownership"


@dataclass(frozen=True)
class Ownership:
    engine: EngineKind
    since: str  # ISO 8601, UTC: when that engine first applied
    by: str  # user@host of that first apply (no secret: who to ask)

    def record(self) -> dict[str, str]:
        return {"engine": self.engine, "since": self.since, "by": self.by}


def parse_ownership(data: dict[str, object], where: str) -> Ownership:
    engine = data.get("engine")
    if engine not in _ENGINES:
        raise RecordUnreadable(f"{where}: 'engine' is {engine!r}; it must be 'terraform' or 'pulumi' "
                               "(rewrite the record with the engine that owns the org's objects)")
    return Ownership(engine=engine, since=str(data.get("since", "")), by=str(data.get("by", "")))


def refusal(owner: Ownership | None, engine: EngineKind, *, where: str) -> str | None:
    """Why `engine` must not plan or apply the org's objects (pure), or None when it may: nobody
    owns them yet, or it does."""
    if owner is None or owner.engine == engine:
        return None
    return (f"the org's objects are owned by the {owner.engine} engine (recorded in {where} on {owner.since} "
            f"by {owner.by}), so the {engine} engine does not plan or apply them: set 'engine: {owner.engine}' "
            f"in hypergov.yaml (or HYPERGOV_ENGINE={owner.engine}); to switch to the {engine} engine, import "
            f"every object into its state first, then rewrite {where} with "
            f'{{"engine": "{engine}"}} (or delete it, and the next apply records the new owner)')


def owner_of(records: RecordStore) -> Ownership | None:
    found = records.read(OWNERSHIP_RECORD)
    return parse_ownership(found.data, records.where(OWNERSHIP_RECORD)) if found is not None else None


def require_owner(records: RecordStore, engine: EngineKind) -> Ownership | None:
    """The current owner; raises `EngineOwnedElsewhereError` when it is the other engine."""
    owner = owner_of(records)
    reason = refusal(owner, engine, where=records.where(OWNERSHIP_RECORD))
    if reason is not None:
        raise EngineOwnedElsewhereError(reason)
    return owner


def claim(records: RecordStore, engine: EngineKind, *, now: datetime | None = None, by: str | None = None) -> Ownership:
    """Record `engine` as the owner if nobody is (a first write: of two racing engines one wins);
    raises `EngineOwnedElsewhereError` when the other engine owns the objects or won the race."""
    owner = require_owner(records, engine)
    if owner is not None:
        return owner
    mine = Ownership(engine=engine, since=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
                     by=by or _who())
    try:
        records.write(OWNERSHIP_RECORD, mine.record(), expected=None)
    except WriteConflict:  # someone recorded an owner since we read: theirs stands
        return require_owner(records, engine) or mine
    return mine


def _who() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"
