"""The audit trail's hash chain, pure: a chain of records independent of Git's own hashes, so
that an edited, deleted, inserted or reordered record is found by recomputing SHA-256 over the
records themselves, whoever rewrote the Git objects around them.

Each record is canonical JSON (sorted keys, no insignificant whitespace, UTF-8): the bytes that
are hashed are exactly the bytes stored (plus one newline). A record carries `seq` (1, 2, ...)
and `prev`, the SHA-256 of the previous record's canonical bytes (64 zeros for the first), and
lives at `records/<seq // 10000>/<seq // 100 % 100>/<seq, 8 digits>-<type>-<subject>.json`: a
hundred records per directory, so each commit rewrites three small trees, not one listing every
record so far (which made every reading of the branch's history quadratic). Trails written before
that keep their first records at `records/<seq, 8 digits>-...` (the legacy flat layout): accepted
before the first sharded record, never after. What the chain alone cannot see (the last records
removed, or the whole branch rebuilt consistently) the checkpoints can: the last sequence number
and record hash written (`check_checkpoint`, `audit_checkpoints`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

GENESIS = "0" * 64
RECORDS_DIR = "records"
SHARD = 100  # records per directory, and directories per directory above
RECORD_TYPES = ("intent", "outcome", "rejected", "refused", "interrupted", "prune")
_SUBJECT = re.compile(r"[^A-Za-z0-9._-]+")


def canonical(record: Mapping[str, Any]) -> bytes:
    """The one byte form of a record: what is hashed and what is stored."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def record_sha256(record: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(record)).hexdigest()


def file_bytes(record: Mapping[str, Any]) -> bytes:
    return canonical(record) + b"\n"


def record_name(record: Mapping[str, Any]) -> str:
    """`00000042-outcome-project-vision.json`: the file name, whose order is the chain's."""
    subject = _SUBJECT.sub("_", str(record.get("stack") or record.get("subject") or "pass"))
    return f"{int(record['seq']):08d}-{record['type']}-{subject}.json"


def record_path(record: Mapping[str, Any]) -> str:
    """`records/0001/23/00012345-outcome-project-vision.json`: where a record is written."""
    seq = int(record["seq"])
    return f"{RECORDS_DIR}/{seq // SHARD ** 2:04d}/{seq // SHARD % SHARD:02d}/{record_name(record)}"


def flat_record_path(record: Mapping[str, Any]) -> str:
    """`records/00000042-outcome-project-vision.json`: the legacy flat layout of older trails."""
    return f"{RECORDS_DIR}/{record_name(record)}"


def seq_of_path(path: str) -> int | None:
    """The sequence number a record's file name carries (None when it carries none)."""
    digits = path.rsplit("/", 1)[-1].split("-", 1)[0]
    return int(digits) if digits.isdigit() else None


def chain_order(path: str) -> tuple[int, str]:
    """Sort key of record paths in the chain's order, whatever their layout."""
    seq = seq_of_path(path)
    return (-1 if seq is None else seq, path)


def misplaced(record: Mapping[str, Any], path: str, *, sharded_before: bool) -> str | None:
    """Why `record` does not belong at `path` (None when it does): its sharded path, or its flat
    one while no sharded record came before it."""
    if path == record_path(record) or (path == flat_record_path(record) and not sharded_before):
        return None
    if path == flat_record_path(record):
        return (f"a record in the legacy flat layout after records in the sharded one: it belongs at "
                f"{record_path(record)}")
    return f"its content belongs at {record_path(record)}: records were renamed or reordered"


def is_sharded(path: str) -> bool:
    return path.count("/") > 1


@dataclass(frozen=True)
class Link:
    """Where the chain ends: the last record's sequence number and hash (GENESIS before any)."""

    seq: int
    sha256: str


START = Link(0, GENESIS)


def chained(payloads: Sequence[Mapping[str, Any]], after: Link) -> list[dict[str, Any]]:
    """The payloads as records continuing the chain after `after`: each gets the next `seq` and
    the hash of the record before it."""
    records: list[dict[str, Any]] = []
    last = after
    for payload in payloads:
        if payload.get("type") not in RECORD_TYPES:
            raise ValueError(f"audit record type {payload.get('type')!r} is not one of {', '.join(RECORD_TYPES)}")
        record = {**{k: v for k, v in payload.items() if k not in ("seq", "prev")}, "seq": last.seq + 1,
                  "prev": last.sha256}
        records.append(record)
        last = Link(record["seq"], record_sha256(record))
    return records


def payload_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record without its place in the chain (what a rebase re-chains)."""
    return {k: v for k, v in record.items() if k not in ("seq", "prev")}


@dataclass(frozen=True)
class Break:
    """The first bad record: its path (or the checkpoint), its sequence number if known, and why."""

    path: str
    seq: int | None
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "seq": self.seq, "why": self.why}


@dataclass(frozen=True)
class ChainVerdict:
    records: int
    last: Link
    broken: Break | None
    hashes: Mapping[int, str]  # seq -> record hash, of the records read before any break

    @property
    def ok(self) -> bool:
        return self.broken is None


def verify_chain(files: Sequence[tuple[str, bytes]]) -> ChainVerdict:
    """Recompute the chain over the records (path, bytes), in path order: each record parsed and
    serialized once, its hash taken over the bytes stored (they are its canonical form plus the
    newline, checked); at the first anomaly the careful walk (`explain_chain`) says what and why."""
    last, sharded = START, False
    hashes: dict[int, str] = {}
    for path, data in sorted(files, key=lambda f: chain_order(f[0])):
        try:
            record = json.loads(data)
        except ValueError:
            return explain_chain(files)
        if (not isinstance(record, dict) or record.get("type") not in RECORD_TYPES or record.get("seq") != last.seq + 1
                or type(record["seq"]) is not int or record.get("prev") != last.sha256 or data != file_bytes(record)
                or misplaced(record, path, sharded_before=sharded)):
            return explain_chain(files)
        sharded = sharded or is_sharded(path)
        last = Link(record["seq"], hashlib.sha256(data[:-1]).hexdigest())
        hashes[last.seq] = last.sha256
    return ChainVerdict(len(hashes), last, None, hashes)


def explain_chain(files: Sequence[tuple[str, bytes]]) -> ChainVerdict:
    """Recompute the chain over the records (path, bytes), in path order. Stops at the first bad
    record and says why: not canonical, named unlike its content, a sequence number missing
    (deleted) or repeated (inserted, reordered), or a `prev` that is not the hash of the record
    before it (that record was edited, or one was inserted or removed before this one)."""
    last, prev_path, sharded = START, "", False
    hashes: dict[int, str] = {}
    inserted = _duplicate(files)
    for path, data in sorted(files, key=lambda f: chain_order(f[0])):
        bad = (_malformed(path, data, sharded_before=sharded)
               or (inserted if inserted and inserted.path == path else None))
        if bad is not None:
            return ChainVerdict(len(hashes), last, bad, hashes)
        sharded = sharded or is_sharded(path)
        record = json.loads(data)
        seq = record["seq"]
        expected = last.seq + 1
        if seq > expected:
            why = f"record {expected} is missing (deleted?): the chain goes from {last.seq} to {seq}"
            return ChainVerdict(len(hashes), last, Break(path, seq, why), hashes)
        if seq < expected:
            why = f"sequence number {seq} comes after {last.seq}: a record was inserted or the records reordered"
            return ChainVerdict(len(hashes), last, Break(path, seq, why), hashes)
        if record["prev"] != last.sha256:
            return ChainVerdict(len(hashes), last, _prev_mismatch(path, seq, record["prev"], last, prev_path),
                                hashes)
        last, prev_path = Link(seq, record_sha256(record)), path
        hashes[seq] = last.sha256
    return ChainVerdict(len(hashes), last, None, hashes)


def _duplicate(files: Sequence[tuple[str, bytes]]) -> Break | None:
    """Two records with one sequence number: the one the next record does not vouch for (its
    `prev` is the other's hash) was inserted; the later one by name when nothing tells."""
    by_seq: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for path, data in sorted(files, key=lambda f: chain_order(f[0])):
        if _malformed(path, data, sharded_before=False) is None:
            record = json.loads(data)
            by_seq.setdefault(record["seq"], []).append((path, record))
    for seq, found in sorted(by_seq.items()):
        if len(found) > 1:
            vouched = {r["prev"] for _, r in by_seq.get(seq + 1, [])}
            odd = [p for p, r in found if record_sha256(r) not in vouched] or [p for p, _ in found[1:]]
            others = ", ".join(p for p, _ in found if p != odd[0])
            return Break(odd[0], seq, f"a second record with sequence number {seq} (besides {others}): a record "
                         "was inserted")
    return None


def _malformed(path: str, data: bytes, *, sharded_before: bool) -> Break | None:
    try:
        record = json.loads(data)
    except ValueError:
        return Break(path, None, "not JSON")
    if not isinstance(record, dict) or not isinstance(record.get("seq"), int) or not isinstance(
            record.get("prev"), str) or record.get("type") not in RECORD_TYPES:
        return Break(path, None, "not an audit record (seq, prev and a known type are required)")
    if data != file_bytes(record):
        return Break(path, record["seq"], "not in canonical form: the file was edited by hand")
    why = misplaced(record, path, sharded_before=sharded_before)
    return Break(path, record["seq"], why) if why else None


def _prev_mismatch(path: str, seq: int, prev: str, last: Link, prev_path: str) -> Break:
    if last.seq == 0:
        return Break(path, seq, f"the first record's prev is {prev[:12]}..., not the genesis value (64 zeros)")
    return Break(path, seq, f"the chain breaks here: this record's prev is {prev[:12]}..., but record {last.seq} "
                 f"({prev_path}) hashes to {last.sha256[:12]}...: record {last.seq} was edited, or this record was "
                 "edited, moved or inserted")


def check_checkpoint(verdict: ChainVerdict, written: Sequence[Link]) -> Break | None:
    """The branch against what the daemon last wrote: the record at the checkpoint's sequence
    number must still have the checkpoint's hash. `written` holds one link, or two while a rebase
    moves the local records (the one before and the one after: either may be on the branch when
    the process dies in between)."""
    if not written or any(verdict.hashes.get(link.seq) == link.sha256 for link in written):
        return None
    checkpoint = max(written, key=lambda link: link.seq)
    where = f"checkpoint (seq {checkpoint.seq})"
    if checkpoint.seq > verdict.last.seq:
        return Break(where, checkpoint.seq, f"the branch ends at record {verdict.last.seq}, but record "
                     f"{checkpoint.seq} was written: records were deleted or the branch rewritten")
    return Break(where, checkpoint.seq, f"record {checkpoint.seq} is not the one written (hash "
                 f"{checkpoint.sha256[:12]}...): the audit branch was rewritten")
