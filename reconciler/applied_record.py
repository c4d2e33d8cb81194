"""The reconciler's record of what it applied (`reconciler.json`): per branch the commit applied in
full and the stacks an interrupted apply left to plan again, in a record store (`engines.objects`:
the state directory, or the state bucket with an S3 state backend, written with conditional
writes). With several reconcilers the leader's lease epoch is written with it, and a write under
an older epoch is refused (`StaleEpochError`): a leader that lost its lease never moves it back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engines.leases import StaleEpochError
from engines.objects import LocalRecords, RecordStore, RecordUnreadable, update
from engines.outcomes import PermanentError
from engines.plan import StackName

STATE_FILE = "reconciler.json"


class ReconcilerStateError(PermanentError):
    """The reconciler's record of what it applied is unreadable; the message says how to recover."""

    reason = "reconciler-state"


def local_records(state_dir: Path) -> RecordStore:
    """The default home of the reconciler's records: its state directory."""
    return LocalRecords(state_dir)


def _state(records: RecordStore) -> dict[str, Any]:
    try:
        found = records.read(STATE_FILE)
    except RecordUnreadable as exc:
        raise ReconcilerStateError(f"{exc}; delete it and the next pass plans every stack (plans compare with "
                                   "live state, so nothing is applied twice)") from exc
    return _checked(found.data if found else {}, records.where(STATE_FILE))


def _checked(data: dict[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(data.get("branches", {}), dict):
        raise ReconcilerStateError(f"{where} is unreadable (expected {{\"branches\": {{branch: {{\"applied_commit\": "
                                   "sha}}}}); delete it and the next pass plans every stack (plans compare with live "
                                   "state, so nothing is applied twice)")
    return data


def applied_commit(records: RecordStore, branch: str) -> str | None:
    entry = _state(records).get("branches", {}).get(branch)
    value = entry.get("applied_commit") if isinstance(entry, dict) else None
    return str(value) if value else None


def replan_stacks(records: RecordStore, branch: str) -> list[StackName]:
    """Stacks an interrupted apply left, to plan in the next pass whatever changed."""
    entry = _state(records).get("branches", {}).get(branch)
    stacks = entry.get("replan", []) if isinstance(entry, dict) else []
    return [StackName(str(s)) for s in stacks] if isinstance(stacks, list) else []


def _keep_replan(records: RecordStore, branch: str, stacks: Sequence[StackName]) -> None:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        entry = _checked(data, records.where(STATE_FILE)).setdefault("branches", {}).setdefault(branch, {})
        entry["replan"] = sorted({*entry.get("replan", []), *stacks})
        return data

    _update(records, change)


def _remember(records: RecordStore, branch: str, commit: str, *, epoch: int | None = None) -> None:
    """The head applied in full (and nothing left to plan again from an interrupted apply). With
    `epoch` (the leader lease's fencing token) a record written under a newer lease is never
    overwritten: a stale leader's write is refused (`StaleEpochError`)."""
    def change(data: dict[str, Any]) -> dict[str, Any]:
        recorded = _checked(data, records.where(STATE_FILE)).get("epoch")
        if epoch is not None and isinstance(recorded, int) and recorded > epoch:
            raise StaleEpochError(f"{records.where(STATE_FILE)} was written under lease epoch {recorded}, this "
                                  f"reconciler holds {epoch}: another reconciler leads now; nothing recorded")
        data.setdefault("branches", {})[branch] = {
            "applied_commit": commit, "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        if epoch is not None:
            data["epoch"] = epoch
        return data

    _update(records, change)


def _update(records: RecordStore, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    try:
        update(records, STATE_FILE, change)
    except RecordUnreadable as exc:
        raise ReconcilerStateError(f"{exc}; delete it and the next pass plans every stack (plans compare with "
                                   "live state, so nothing is applied twice)") from exc
