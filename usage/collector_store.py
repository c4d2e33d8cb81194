"""The usage collector's state on disk, per cluster under the state directory:

    <state_dir>/usage/<cluster>/checkpoint.json       the resourceVersion last applied, the covered ranges
    <state_dir>/usage/<cluster>/workloads/<uid>.json  each workload's latest body (and whether deleted)
    <state_dir>/usage/<cluster>/attempts/<uid>.json   the attempts its earlier bodies showed, closed
    <state_dir>/usage/<cluster>/finished/bodies-<day>.jsonl    deleted workloads' last bodies, a line each
    <state_dir>/usage/<cluster>/finished/attempts-<day>.jsonl  their attempts, read once (`RetiredWorkload`)
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

A workload deleted from its cluster can change no more: it is *retired*: its last body is appended
to the day's `bodies-` segment, its attempts (the recorded ones and the last body's, read once,
here) to the day's `attempts-` segment, each synced, and only then are its two files removed.
So the live files hold only what is still on the cluster, and the accounting reads a month of a
busy cluster as ~30 small-lined segment files, not a million files and a million bodies to parse
(the bodies are read again only when the reading rules change: `usage.workloads.READING_RULES`).
A crash before the removal leaves the workload in both places, or (before its attempts line) live
only: the readers take a uid's attempts line over its live files, and merge a uid's lines (a
replayed deletion appends equal lines; attempts are merged by start). A line torn by a crash is
terminated before the next append and skipped on reading: its workload's live files were not
removed yet, so the replayed deletion retires it again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engines.file_lock import file_lock_or_busy
from engines.outcomes import PermanentError, TemporaryError
from usage.collector_state import Checkpoint, ClosedAttempt, KeptWorkload, RetiredWorkload, retired
from usage.coverage import CoveredRange
from usage.spans import epoch_seconds

CHECKPOINT_FILE = "checkpoint.json"
WORKLOADS_DIR = "workloads"
ATTEMPTS_DIR = "attempts"
FINISHED_DIR = "finished"
BODIES, ATTEMPTS = "bodies", "attempts"  # the two kinds of finished segment
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
        """Every workload the store knows, in uid order: the retired ones (deleted, their last
        body) and the live ones not retired."""
        retired = self.retired()
        bodies = self.retired_bodies()
        live = {w.uid: w for w in self.live_workloads() if w.uid not in retired}
        known = {**{uid: KeptWorkload(uid=uid, body=bodies.get(uid, {}), deleted=True) for uid in retired}, **live}
        for uid in sorted(known):
            yield known[uid]

    def retire(self, workload: KeptWorkload, now: datetime, *, sync: bool = True) -> None:
        """Retire the deleted workload (see the module's docstring): its last body, then its
        attempts (`collector_state.retired`), to the segments of `now`'s UTC day; then remove its
        live files."""
        directory = self.root / FINISHED_DIR
        directory.mkdir(parents=True, exist_ok=True)
        day = now.astimezone(UTC).strftime("%Y-%m-%d")
        record = retired(workload, tuple(self.attempts(workload.uid)), self.cluster, now=epoch_seconds(now))
        _append(directory / f"{BODIES}-{day}.jsonl", body_line(workload.uid, workload.body), sync=sync)
        _append(directory / f"{ATTEMPTS}-{day}.jsonl", attempts_line(record), sync=sync)
        for kind in (WORKLOADS_DIR, ATTEMPTS_DIR):
            (self.root / kind / f"{workload.uid}.json").unlink(missing_ok=True)

    def add_retired(self, record: RetiredWorkload, day: str) -> None:
        """Append a retired record made elsewhere (an import, `usage.operator_write`) to the
        `attempts-` segment of `day` (YYYY-MM-DD), as `retire` appends its own: synced; the readers
        merge a uid's lines, so a line appended again changes nothing."""
        directory = self.root / FINISHED_DIR
        directory.mkdir(parents=True, exist_ok=True)
        _append(directory / f"{ATTEMPTS}-{day}.jsonl", attempts_line(record), sync=True)

    def retired(self, since_day: str | None = None) -> dict[str, RetiredWorkload]:
        """The retired workloads by uid, from the segments of `since_day` (YYYY-MM-DD) on (all when
        None): a workload that ran on a day was retired on it or later. A uid's lines are merged."""
        found: dict[str, RetiredWorkload] = {}
        for line in self._segment_lines(ATTEMPTS, since_day):
            record = _retired_record(line)
            if record is not None:
                found[record.uid] = _merged(found.get(record.uid), record)
        return found

    def retired_bodies(self, since_day: str | None = None) -> dict[str, Mapping[str, Any]]:
        """The last body of each retired workload, by uid, from the segments of `since_day` on."""
        found: dict[str, Mapping[str, Any]] = {}
        for line in self._segment_lines(BODIES, since_day):
            try:
                data = json.loads(line)
                found[str(data["uid"])] = data["body"]
            except (ValueError, KeyError, TypeError):
                continue  # torn by a crash (see the module's docstring)
        return found

    def _segment_lines(self, kind: str, since_day: str | None) -> Iterator[bytes]:
        directory = self.root / FINISHED_DIR
        if not directory.is_dir():
            return
        prefix = f"{kind}-"
        for name in sorted(n for n in os.listdir(directory) if n.startswith(prefix) and n.endswith(".jsonl")):
            if since_day is not None and name[len(prefix):-6] < since_day:
                continue
            with open(directory / name, "rb") as segment:
                yield from segment

    def live_workloads(self) -> Iterator[KeptWorkload]:
        """The workloads with live files, in uid order (temporary files of an interrupted write are skipped)."""
        directory = self.root / WORKLOADS_DIR
        if not directory.is_dir():
            return
        # Plain os calls rather than Path.glob / read_text: a month of a big cluster is ~10^5 files.
        for name in sorted(n for n in os.listdir(directory) if n.endswith(".json") and not n.startswith(".")):
            path = directory / name
            try:
                with open(path, "rb") as file:
                    data = json.loads(file.read())
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


def body_line(uid: str, body: Mapping[str, Any]) -> str:
    """A retired workload's last body as its `bodies-` segment line (for writers of stores too)."""
    return _encode({"uid": uid, "body": dict(body)})


def attempts_line(workload: RetiredWorkload) -> str:
    """A retired workload's attempts as its `attempts-` segment line (for writers of stores too)."""
    return _encode({"uid": workload.uid, "attempts": [a.as_dict() for a in workload.attempts],
                    "last": workload.last.as_dict() if workload.last is not None else None, "rules": workload.rules})


def _append(path: Path, line: str, *, sync: bool) -> None:
    """Append a line (synced: the live files are removed next); a line torn by an earlier crash
    is ended first, alone."""
    torn = path.exists() and path.stat().st_size > 0 and _last_byte(path) != b"\n"
    with open(path, "ab") as segment:
        if torn:
            segment.write(b"\n")
        segment.write(line.encode())
        segment.flush()
        if sync:
            os.fsync(segment.fileno())


def _retired_record(line: bytes) -> RetiredWorkload | None:
    """A segment line, or None for a line torn by a crash (see the module's docstring)."""
    try:
        data = json.loads(line)
        last = data.get("last")
        return RetiredWorkload(uid=str(data["uid"]),
                               attempts=tuple(ClosedAttempt.from_dict(a) for a in data["attempts"]),
                               last=ClosedAttempt.from_dict(last) if last is not None else None,
                               rules=data.get("rules"))
    except (ValueError, KeyError, TypeError):
        return None


def _merged(earlier: RetiredWorkload | None, later: RetiredWorkload) -> RetiredWorkload:
    if earlier is None:
        return later
    attempts = {a.start: a for a in (*earlier.attempts, *later.attempts)}
    return RetiredWorkload(uid=later.uid, attempts=tuple(attempts[s] for s in sorted(attempts)),
                           last=later.last, rules=later.rules)


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1)
