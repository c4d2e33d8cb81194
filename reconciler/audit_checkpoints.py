"""Signed audit checkpoints, published outside the repository, and what they prove: pure.

After each push (and, in the daemon, every `audit_alive_interval_s` even when nothing changed)
a writer publishes a checkpoint: the branch, the last record's sequence number and hash, the
branch head, the time, and the writer's public key, signed with that key (namespace
`hypergov-audit-checkpoint@hypergov`, never Git's). Each record checkpoint is a new object named
`<branch>/<writer>/<seq, 12 digits>-<sha256>.json`, so the listing alone says which record each
checkpoint vouches for; the alive checkpoint is `<branch>/<writer>/alive.json`, replaced.

What a clone cannot prove alone and the checkpoints can (`judge`):
- truncation: a checkpointed record is no longer on the branch (the tail was removed);
- a rewrite: the branch's record at a checkpointed sequence number is another record (rebuilt);
- a fork: two checkpoints name different records for one sequence number;
- a rollback: the checkpointed head is not in the branch's history (reset back or rewritten);
- a hidden checkpoint: one deleted or overwritten in the store (versioned: the history stays);
- a stale checkpoint: no checkpoint for three alive intervals (the writer stopped vouching).
And the checkpoints' keys are who may sign audit commits, so a record appended by someone who can
push but holds no writer's key is named by the signature check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal
from urllib.parse import quote, unquote

from reconciler.audit_chain import Break
from reconciler.audit_signing import CHECKPOINT_NAMESPACE, SigningKey, blob_of_line, check, fingerprint

ROOT = "audit/checkpoints"
ALIVE = "alive.json"
STALE_INTERVALS = 3
_RECORD_NAME = re.compile(r"(?P<seq>[0-9]{12})-(?P<sha>[0-9a-f]{64})\.json")
HeadRelation = Literal["tip", "ancestor", "missing"]


@dataclass(frozen=True)
class Statement:
    """What one checkpoint says."""

    writer: str
    branch: str
    seq: int
    sha256: str
    head: str | None
    at: str  # UTC, ISO 8601
    kind: Literal["records", "alive"] = "records"
    interval_s: int | None = None  # alive checkpoints: how often they come
    public_key: str | None = None  # `ssh-ed25519 AAAA...`; None: the writer signs nothing (audit_signing: off)

    def as_dict(self) -> dict[str, Any]:
        return {"format": 1, "writer": self.writer, "branch": self.branch, "seq": self.seq, "sha256": self.sha256,
                "head": self.head, "at": self.at, "kind": self.kind, "interval_s": self.interval_s,
                "public_key": self.public_key, "signing": "ssh" if self.public_key else "off"}

    def body(self) -> bytes:
        """The signed bytes: canonical JSON."""
        return json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":")).encode()

    @property
    def name(self) -> str:
        """Where it is published, below the witness's root."""
        leaf = ALIVE if self.kind == "alive" else f"{self.seq:012d}-{self.sha256}.json"
        return f"{branch_dir(self.branch)}/{self.writer}/{leaf}"


def branch_dir(branch: str) -> str:
    return f"{ROOT}/{quote(branch, safe='')}"


def sealed(statement: Statement, key: SigningKey | None) -> bytes:
    """The published object: the statement and its signature (null when unsigned by setting)."""
    signature = key.sign(statement.body(), CHECKPOINT_NAMESPACE) if key else None
    return (json.dumps({"checkpoint": statement.as_dict(), "signature": signature}, indent=2, sort_keys=True)
            + "\n").encode()


@dataclass(frozen=True)
class Opened:
    """A published checkpoint as read: the statement (None when unreadable), whether its
    signature is good for the key it names, and why not."""

    name: str
    statement: Statement | None
    signed_by: bytes | None  # the key blob of a good signature
    problem: str = ""


def opened(name: str, raw: bytes) -> Opened:
    try:
        data = json.loads(raw)
        body = data["checkpoint"]
        statement = Statement(writer=str(body["writer"]), branch=str(body["branch"]), seq=int(body["seq"]),
                              sha256=str(body["sha256"]), head=body.get("head"), at=str(body["at"]),
                              kind=body.get("kind", "records"), interval_s=body.get("interval_s"),
                              public_key=body.get("public_key"))
    except (ValueError, KeyError, TypeError):
        return Opened(name, None, None, "not a checkpoint (unreadable JSON or fields missing)")
    if statement.public_key is None:
        return Opened(name, statement, None)  # unsigned by setting: judged by the caller
    key = blob_of_line(statement.public_key)
    signature = data.get("signature")
    if key is None or not isinstance(signature, str):
        return Opened(name, statement, None, "names a key but carries no usable signature")
    verdict = check(signature, statement.body(), CHECKPOINT_NAMESPACE, allowed=[key])
    return Opened(name, statement, verdict.signer, "" if verdict.signer else verdict.why)


@dataclass(frozen=True)
class Listed:
    """One published name as the witness's history shows it."""

    name: str
    versions: int = 1  # objects ever written under this name (S3's version history; 1 for a directory)
    deleted: bool = False  # the name's latest version is a delete marker
    latest_at: datetime | None = None  # when the newest version was written

    @property
    def record(self) -> tuple[str, int, str] | None:
        """(writer, seq, sha256) of a record checkpoint's name; None for the alive one."""
        parts = self.name.rsplit("/", 2)
        found = _RECORD_NAME.fullmatch(parts[-1]) if len(parts) == 3 else None
        return (parts[1], int(found["seq"]), found["sha"]) if found else None


@dataclass(frozen=True)
class WitnessVerdict:
    """What the checkpoints of one witness say about a branch."""

    where: str
    checkpoints: int
    newest: Statement | None
    broken: Break | None
    signers: frozenset[bytes]  # keys of good checkpoint signatures: who may sign audit commits
    unsigned_writers: tuple[str, ...]  # writers whose checkpoints say audit_signing: off
    vouched: Statement | None = None  # the newest checkpoint with a good signature: it and the chain vouch for
    # every record up to its own, and its head is the branch as it was then

    def as_dict(self) -> dict[str, Any]:
        return {"where": self.where, "checkpoints": self.checkpoints,
                "newest": self.newest.as_dict() if self.newest else None,
                "broken": self.broken.as_dict() if self.broken else None,
                "signers": sorted(fingerprint(k) for k in self.signers),
                "unsigned_writers": list(self.unsigned_writers), "vouched": self.vouched.seq if self.vouched else 0}


def judge(*, where: str, branch: str, hashes: Mapping[int, str], last_seq: int, listed: Sequence[Listed],
          read: Callable[[str], Opened], head_relation: Callable[[str], HeadRelation], now: datetime,
          ) -> WitnessVerdict:
    """The branch (`hashes`: seq -> record hash as recomputed; `last_seq`) against the witness's
    checkpoints. `read` opens a published name (its first version: what was written first);
    `head_relation` says where a commit stands to the branch's tip. The first problem found,
    in the order: hidden checkpoints, forks, truncation, rewrite, signatures, rollback, staleness."""
    mine = [item for item in listed if item.name.startswith(branch_dir(branch) + "/")]
    records = [(item, found) for item in mine if (found := item.record) is not None]
    hidden = next((item for item in mine if item.deleted or (item.versions > 1 and item.record is not None)), None)
    newest_items = _newest_per_writer(records) + [item for item in mine if item.name.endswith("/" + ALIVE)
                                                  and not item.deleted]
    opened_newest = [read(item.name) for item in newest_items]
    statements = [o.statement for o in opened_newest if o.statement is not None]
    newest = max(statements, key=lambda s: s.at, default=None)
    signers = frozenset(o.signed_by for o in opened_newest if o.signed_by is not None)
    unsigned = tuple(sorted({s.writer for s in statements if s.public_key is None}))

    vouched = max((o.statement for o in opened_newest if o.statement and o.signed_by and o.statement.head),
                  key=lambda s: s.seq, default=None)

    def verdict(broken: Break | None) -> WitnessVerdict:
        return WitnessVerdict(where, len(records), newest, broken, signers, unsigned, vouched)

    fork = _fork(records)
    if fork is not None:
        return verdict(fork)
    for item, (writer, seq, sha) in sorted(records, key=lambda r: -r[1][1]):
        if seq > last_seq:
            return verdict(Break(f"{where}/{item.name}", seq, (
                f"record {seq} is missing: writer {writer}'s checkpoint vouches for it, but the branch {branch} ends "
                f"at record {last_seq}: records were removed from the end (truncated) or the branch was reset back"
                f"{_hiding(item)}")))
        if hashes.get(seq) != sha:
            return verdict(Break(f"{where}/{item.name}", seq, (
                f"record {seq} on the branch is not the one checkpointed by writer {writer} (hash {sha[:12]}...): the "
                f"branch was rebuilt or rewritten{_hiding(item)}")))
    if hidden is not None:
        return verdict(Break(f"{where}/{hidden.name}", hidden.record[1] if hidden.record else None,
                             f"a checkpoint was {_hiding(hidden).removeprefix('; its checkpoint was then ')}: "
                             "someone tried to hide what it vouched for"))
    for o in opened_newest:
        if o.problem:
            return verdict(Break(f"{where}/{o.name}", o.statement.seq if o.statement else None,
                                 f"a checkpoint that does not prove itself: {o.problem}"))
        if o.statement is not None and o.statement.kind == "alive":
            late = _alive_mismatch(o, hashes, last_seq, where)
            if late is not None:
                return verdict(late)
    for statement in sorted(statements, key=lambda s: s.at, reverse=True):
        if statement.head and head_relation(statement.head) == "missing":
            return verdict(Break(f"{where}/{statement.name}", statement.seq, (
                f"the head {statement.head[:12]} checkpointed at {statement.at} is not in the history of {branch}: the "
                "branch was rolled back or rewritten")))
    return verdict(_stale(newest, max((x.interval_s or 0 for x in statements), default=0), now, where))


def _hiding(item: Listed) -> str:
    """What was done to a checkpoint in the witness, for the message (empty when nothing)."""
    if item.deleted:
        return "; its checkpoint was then deleted in the witness (a delete marker; the first version still says it)"
    if item.versions > 1:
        return (f"; its checkpoint was then overwritten in the witness ({item.versions} versions; the first still says "
                "it)")
    return ""


def _newest_per_writer(records: Iterable[tuple[Listed, tuple[str, int, str]]]) -> list[Listed]:
    newest: dict[str, tuple[int, Listed]] = {}
    for item, (writer, seq, _) in records:
        if writer not in newest or seq > newest[writer][0]:
            newest[writer] = (seq, item)
    return [item for _, item in newest.values()]


def _fork(records: Sequence[tuple[Listed, tuple[str, int, str]]]) -> Break | None:
    seen: dict[int, tuple[str, str]] = {}
    for _, (writer, seq, sha) in sorted(records, key=lambda r: (r[1][1], r[0].name)):
        if seq in seen and seen[seq][1] != sha:
            other, theirs = seen[seq]
            return Break(f"checkpoints of record {seq}", seq, (
                f"a fork: writer {other} checkpointed record {seq} as {theirs[:12]}..., writer {writer} as "
                f"{sha[:12]}...: two histories of the branch were shown to different writers"))
        seen.setdefault(seq, (writer, sha))
    return None


def _alive_mismatch(o: Opened, hashes: Mapping[int, str], last_seq: int, where: str) -> Break | None:
    s = o.statement
    if s is None or s.seq == 0:
        return None
    if s.seq > last_seq:
        return Break(f"{where}/{o.name}", s.seq, f"record {s.seq} is missing: writer {s.writer}'s alive checkpoint of "
                     f"{s.at} vouches for it, but the branch ends at record {last_seq} (truncated or reset back)")
    if hashes.get(s.seq) != s.sha256:
        return Break(f"{where}/{o.name}", s.seq, f"record {s.seq} on the branch is not the one writer {s.writer}'s "
                     f"alive checkpoint of {s.at} names: the branch was rebuilt or rewritten")
    return None


def _stale(newest: Statement | None, interval_s: int, now: datetime, where: str) -> Break | None:
    """Stale: writers that publish alive checkpoints every `interval_s` have published none for
    three intervals."""
    if newest is None or not interval_s:
        return None
    at = datetime.fromisoformat(newest.at.replace("Z", "+00:00"))
    if now - at <= timedelta(seconds=interval_s * STALE_INTERVALS):
        return None
    return Break(f"{where}/{newest.name}", newest.seq, (
        f"the newest checkpoint is from {newest.at} ({int((now - at).total_seconds() // 60)} min ago; checkpoints come "
        f"every {interval_s} s): stale, so records and removals after it are not vouched for; is the reconciler "
        "running and can it write the witness?"))


def name_of_branch(name: str) -> str | None:
    """The branch a published name belongs to (for listings across branches)."""
    rest = name.removeprefix(ROOT + "/")
    return unquote(rest.split("/", 1)[0]) if rest != name else None
