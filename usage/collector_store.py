"""The usage collector's state on disk, per cluster under the state directory:

    <state_dir>/usage/<cluster>/checkpoint.json       the resourceVersion last applied, the covered ranges
    <state_dir>/usage/<cluster>/workloads/<uid>.json  each workload's latest body (and whether deleted)
    <state_dir>/usage/<cluster>/attempts/<uid>.json   the attempts its earlier bodies showed, closed
    <state_dir>/usage/<cluster>/collector.lock        held by the one collector of the cluster (its pid)

One JSON file per uid rather than JSON Lines segments: an event applied twice (replayed after a
crash between writing the workload and writing the checkpoint) rewrites the same file instead of
appending a second line, so the disk never holds a workload twice and its readers need no
de-duplication or compaction; a workload's record is rewritten only when the workload changes.
Every write is atomic (a temporary file, then a rename): a crash leaves the previous file whole.
The workload is written before the checkpoint that moves past its event, so a checkpoint never
claims an event whose workload is not on disk. An attempt the new body no longer shows is written
before that body (a crash between them replays the event, which closes the same attempt again);
a uid's attempts only grow, one per start, so a replay adds nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from engines.file_lock import file_lock_or_busy
from engines.outcomes import PermanentError, TemporaryError
from usage.collector_state import Checkpoint, ClosedAttempt, KeptWorkload
from usage.coverage import CoveredRange

CHECKPOINT_FILE = "checkpoint.json"
WORKLOADS_DIR = "workloads"
ATTEMPTS_DIR = "attempts"
LOCK_FILE = "collector.lock"


class CollectorBusyError(TemporaryError):
    """Another collector holds this cluster's usage state (one collector per cluster)."""

    reason = "busy"
    retry_after_s = 30.0


class UsageStateUnreadable(PermanentError):
    """A file of the usage state is not what the collector wrote (edited or damaged by hand)."""

    reason = "usage-state"


def usage_dir(state_dir: Path, cluster: str) -> Path:
    return Path(state_dir) / "usage" / cluster


def _encode(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


class CollectorStore:
    """One cluster's usage state: read at start, written after every change."""

    def __init__(self, root: Path, cluster: str) -> None:
        self.root = root
        self.cluster = cluster

    @classmethod
    def of(cls, state_dir: Path, cluster: str) -> CollectorStore:
        return cls(usage_dir(state_dir, cluster), cluster)

    def held(self) -> AbstractContextManager[None]:
        """The cluster's collector lock, or `CollectorBusyError` at once."""
        def busy(holder: str) -> Exception:
            by = f" (pid {holder})" if holder else ""
            return CollectorBusyError(f"another usage collector{by} holds the usage state of cluster {self.cluster} "
                                      f"in {self.root}; try again when it has stopped")
        return file_lock_or_busy(self.root / LOCK_FILE, busy)

    def checkpoint(self) -> Checkpoint:
        path = self.root / CHECKPOINT_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Checkpoint(resource_version=data["resource_version"],
                              coverage=tuple(CoveredRange(start=datetime.fromisoformat(r["start"]),
                                                          end=datetime.fromisoformat(r["end"]), began=r["began"])
                                             for r in data["coverage"]))
        except FileNotFoundError:
            return Checkpoint(resource_version=None)
        except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError is a ValueError
            raise UsageStateUnreadable(f"{path} is unreadable ({exc}); move it aside and the collector lists the "
                                       "cluster afresh (the time since its last run is then reported missing)") from exc

    def save(self, checkpoint: Checkpoint) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        _write_atomically(self.root / CHECKPOINT_FILE, _encode(
            {"cluster": self.cluster, "resource_version": checkpoint.resource_version,
             "coverage": [r.as_dict() for r in checkpoint.coverage]}))

    def put(self, workload: KeptWorkload) -> None:
        directory = self.root / WORKLOADS_DIR
        directory.mkdir(parents=True, exist_ok=True)
        _write_atomically(directory / f"{workload.uid}.json", _encode(
            {"uid": workload.uid, "deleted": workload.deleted, "body": dict(workload.body)}))

    def workloads(self) -> Iterator[KeptWorkload]:
        """Every kept workload, in uid order (temporary files of an interrupted write are skipped)."""
        directory = self.root / WORKLOADS_DIR
        if not directory.is_dir():
            return
        for path in sorted(directory.glob("*.json")):
            if path.name.startswith("."):
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                yield KeptWorkload(uid=str(data["uid"]), body=data["body"], deleted=bool(data["deleted"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise UsageStateUnreadable(f"{path} is unreadable ({exc}); delete it and run the collector with "
                                           "its checkpoint moved aside, so that it lists the cluster afresh") from exc

    def record_attempt(self, uid: str, attempt: ClosedAttempt) -> bool:
        """Add a closed attempt to the uid's attempts unless one with its start is there (a replayed
        event); True when added."""
        recorded = self.attempts(uid)
        if any(a.start == attempt.start for a in recorded):
            return False
        directory = self.root / ATTEMPTS_DIR
        directory.mkdir(parents=True, exist_ok=True)
        kept = sorted((*recorded, attempt), key=lambda a: a.start)
        _write_atomically(directory / f"{uid}.json", _encode({"uid": uid, "attempts": [a.as_dict() for a in kept]}))
        return True

    def uids_with_attempts(self) -> frozenset[str]:
        """The uids that have closed attempts recorded: one directory listing, so that a reader of
        every workload does not probe a file per uid (most workloads have one attempt, no file)."""
        directory = self.root / ATTEMPTS_DIR
        if not directory.is_dir():
            return frozenset()
        return frozenset(name[:-5] for name in os.listdir(directory) if name.endswith(".json")
                         and not name.startswith("."))

    def attempts(self, uid: str) -> list[ClosedAttempt]:
        """The uid's closed attempts in start order (none recorded: empty)."""
        path = self.root / ATTEMPTS_DIR / f"{uid}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [ClosedAttempt.from_dict(a) for a in data["attempts"]]
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageStateUnreadable(f"{path} is unreadable ({exc}); the attempts it held are lost, delete it "
                                       "to collect on") from exc
