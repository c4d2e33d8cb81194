"""The audit branch in Git, written with plumbing only: records become blobs, a tree is built in
a temporary index (`GIT_INDEX_FILE`), the commit object is written with `hash-object` (signed
with the writer's SSH key, the `gpgsig` header Git itself writes: `reconciler.audit_signing`) and
`update-ref` moves the branch only if it still points where it did when the
records were chained, so a concurrent writer is detected, never overwritten. The working tree,
the index and HEAD of the repository are never touched: a person's staged work stays as it is,
and a protected governed branch never receives a commit.

Pushing never forces: a rejected push fetches the remote's audit branch, re-chains the records
not yet pushed on top of it (new sequence numbers, new `prev`), and tries again. Records that
could not be pushed are local commits: they survive a restart and go with the next push.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.objects import LocalRecords, RecordStore, RecordUnreadable, update
from engines.outcomes import PermanentError, TemporaryError
from reconciler.audit_chain import (
    RECORDS_DIR,
    START,
    Link,
    chain_order,
    chained,
    file_bytes,
    payload_of,
    record_path,
    record_sha256,
)
from reconciler.audit_signing import SigningKey, signed_commit

ZERO_OID = "0" * 40
DEFAULT_BRANCH = "hypergov/audit"
IDENTITY = ("hypergov", "hypergov@localhost")


class AuditWriteError(PermanentError):
    """Git refused to record the audit records; the message says what Git said and where."""

    reason = "audit"


class AuditConflictError(TemporaryError):
    """Another writer moved the audit branch every time this one tried; try again later."""

    reason = "audit-conflict"
    retry_after_s = 5.0


@dataclass(frozen=True)
class PushOutcome:
    pushed: int  # records the remote did not have before
    rebased: int  # local records re-chained onto the remote's branch first
    error: str | None = None  # the records stay local and go with the next push
    remote: str | None = None  # None: the repository has no remote, nothing to push
    checkpoint_error: str | None = None  # the records are pushed, but a witness did not take their checkpoint


class Checkpoint:
    """Per audit branch, the last record this writer wrote (one link, or two while a rebase moves
    them) and the last one pushed: `state_dir/audit/checkpoint.json`, or with an S3 state backend
    `<prefix>/reconciler/audit/<writer>/checkpoint.json` in the state bucket (a record store,
    `engines.objects`: written with a compare-and-swap, so a lost write is read again, never
    clobbered)."""

    def __init__(self, store: RecordStore, name: str) -> None:
        self.store = store
        self.name = name

    @classmethod
    def at(cls, path: Path) -> Checkpoint:
        """The checkpoint file at `path` (the local default, or `audit verify --checkpoint`)."""
        return cls(LocalRecords(path.parent), path.name)

    def read(self) -> dict[str, Any]:
        try:
            found = self.store.read(self.name)
        except RecordUnreadable as exc:
            raise AuditWriteError(f"{exc}; delete it (audit verify then checks the chain alone until the next record "
                                  "is written)") from exc
        return found.data if found else {}

    def links(self, branch: str, which: str) -> list[Link]:
        entry = self.read().get(branch, {})
        raw = entry.get(which) if isinstance(entry, dict) else None
        items = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
        return [Link(int(i["seq"]), str(i["sha256"])) for i in items if isinstance(i, dict)]

    def write(self, branch: str, **links: Link | Sequence[Link]) -> None:
        def change(data: dict[str, Any]) -> dict[str, Any]:
            entry = data.setdefault(branch, {})
            for which, value in links.items():
                items = [value] if isinstance(value, Link) else list(value)
                entry[which] = [{"seq": link.seq, "sha256": link.sha256} for link in items]
            return data

        try:
            update(self.store, self.name, change)
        except RecordUnreadable as exc:
            raise AuditWriteError(f"{exc}; delete it (audit verify then checks the chain alone until the next record "
                                  "is written)") from exc


class AuditStore:
    """The records of one audit branch of one repository (bare or not)."""

    def __init__(self, repo: Path, *, branch: str = DEFAULT_BRANCH, signer: SigningKey | None = None,
                 checkpoint: Checkpoint | None = None) -> None:
        self.repo = repo
        self.branch = branch
        self.ref = f"refs/heads/{branch}"
        self.signer = signer  # None: commits unsigned (an explicit setting, reported by `audit verify`)
        self.checkpoint = checkpoint

    # -- reading ---------------------------------------------------------------------------------

    def git(self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        command = ["git", "-C", str(self.repo), *args]
        proc = subprocess.run(command, input=stdin, capture_output=True, check=False,
                              env={**os.environ, **(env or {})})
        if check and proc.returncode:
            raise AuditWriteError(f"git {' '.join(args[:2])} in {self.repo} failed: {_said(proc.stderr)}")
        return proc

    def _out(self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None) -> str:
        return self.git(*args, stdin=stdin, env=env).stdout.decode().strip()

    def resolve(self, ref: str) -> str | None:
        proc = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def tip(self) -> str | None:
        return self.resolve(self.ref)

    def remote(self) -> str | None:
        """`origin`, else the repository's only remote; None without one."""
        names = self._out("remote").split()
        return "origin" if "origin" in names else names[0] if len(names) == 1 else None

    def tracking_ref(self, remote: str) -> str:
        return f"refs/remotes/{remote}/{self.branch}"

    def entries(self, commit: str) -> list[tuple[str, str]]:
        """(path, blob id) of every record at `commit`, in path order (the chain's order)."""
        raw = self.git("ls-tree", "-r", "-z", "--full-tree", commit, f"{RECORDS_DIR}/").stdout.decode()
        rows = []
        for line in filter(None, raw.split("\0")):
            meta, path = line.split("\t", 1)
            rows.append((path, meta.split()[2]))
        return sorted(rows, key=lambda row: chain_order(row[0]))

    def blob(self, sha: str) -> bytes:
        return self.git("cat-file", "blob", sha).stdout

    def files(self, commit: str) -> list[tuple[str, bytes]]:
        """Every record file at `commit` (path, bytes), read in one `cat-file --batch`."""
        entries = self.entries(commit)
        return list(zip((path for path, _ in entries), self.objects([sha for _, sha in entries]), strict=True))

    def objects(self, ids: Sequence[str]) -> list[bytes]:
        """The contents of the objects `ids`, in order, from one `git cat-file --batch --buffer`:
        the ids given as a file and the answer read in large blocks from one pipe (two pipes
        cost a poll loop over hundreds of thousands of small reads at 100,000 records)."""
        if not ids:
            return []
        with tempfile.TemporaryFile() as asked, tempfile.TemporaryFile() as said:
            asked.write("".join(f"{oid}\n" for oid in ids).encode())
            asked.seek(0)
            proc = subprocess.run(["git", "-C", str(self.repo), "cat-file", "--batch", "--buffer"], stdin=asked,
                                  stdout=subprocess.PIPE, stderr=said, check=False)
            said.seek(0)
            if proc.returncode:
                raise AuditWriteError(f"git cat-file in {self.repo} failed: {_said(said.read())}")
        out, found, at = proc.stdout, [], 0
        for oid in ids:
            header_end = out.index(b"\n", at)
            header = out[at:header_end].split()
            if len(header) != 3:
                raise AuditWriteError(f"git cat-file in {self.repo}: object {oid} is {header[-1].decode()}")
            size = int(header[2])
            found.append(out[header_end + 1:header_end + 1 + size])
            at = header_end + 1 + size + 1
        return found

    def newest_first(self, commit: str | None = None) -> Iterator[dict[str, Any]]:
        """The records newest first, read one at a time (callers usually stop after a few)."""
        tip = commit or self.tip()
        for _, sha in reversed(self.entries(tip) if tip else []):
            yield json.loads(self.blob(sha))

    def link_at(self, commit: str | None) -> Link:
        """Where the chain ends at `commit` (START for none, or a commit without records)."""
        if commit is None:
            return START
        entries = self.entries(commit)
        if not entries:
            return START
        record = json.loads(self.blob(entries[-1][1]))
        return Link(int(record["seq"]), record_sha256(record))

    # -- writing ---------------------------------------------------------------------------------

    def append(self, payloads: Sequence[Mapping[str, Any]], *, subject: str, attempts: int = 5) -> list[dict[str, Any]]:
        """Chain the payloads after the branch's last record and commit them as one commit; the
        records as written. Retries when another writer moved the branch in between."""
        for _ in range(attempts):
            parent = self.tip()
            if parent is None:  # a new local branch continues the remote's, if it was fetched
                remote = self.remote()
                parent = self.resolve(self.tracking_ref(remote)) if remote else None
                expected = ZERO_OID
            else:
                expected = parent
            records = chained(payloads, self.link_at(parent))
            commit = self._commit(records, parent=parent, subject=subject)
            if self.git("update-ref", "-m", f"hypergov audit: {subject}", self.ref, commit, expected,
                        check=False).returncode == 0:
                self._checkpoint(written=self._last(records))
                return records
        raise AuditConflictError(f"the audit branch {self.branch} in {self.repo} moved under every one of {attempts} "
                                 "attempts to record; another writer is busy, try again")

    def _commit(self, records: Sequence[Mapping[str, Any]], *, parent: str | None, subject: str) -> str:
        """The commit of `records` on top of `parent`: objects only, no ref moves."""
        with tempfile.TemporaryDirectory(prefix="hypergov-audit-index-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", *([parent] if parent else ["--empty"]), env=index)
            lines = []
            for record in records:
                blob = self._out("hash-object", "-w", "--stdin", stdin=file_bytes(record))
                lines.append(f"100644 {blob}\t{record_path(record)}\n")
            self.git("update-index", "--index-info", stdin="".join(lines).encode(), env=index)
            tree = self._out("write-tree", env=index)
        body = "".join(f"- {r['seq']} {r['type']} {r.get('stack') or r.get('subject') or 'pass'}"
                       f"{': ' + str(r['outcome']) if r.get('outcome') else ''}\n" for r in records)
        first, last = records[0]["seq"], records[-1]["seq"]
        message = f"hypergov audit {first}{f'-{last}' if last != first else ''}: {subject}\n\n{body}"
        name, email = IDENTITY
        ident = f"{name} <{email}> {int(time.time())} +0000"
        headers = [f"tree {tree}", *([f"parent {parent}"] if parent else []), f"author {ident}", f"committer {ident}"]
        unsigned = ("\n".join(headers) + "\n\n" + message).encode()
        signed = signed_commit(unsigned, self.signer) if self.signer else unsigned
        return self._out("hash-object", "-t", "commit", "-w", "--stdin", stdin=signed)

    @staticmethod
    def _last(records: Sequence[Mapping[str, Any]]) -> Link:
        return Link(int(records[-1]["seq"]), record_sha256(records[-1]))

    def _checkpoint(self, **links: Link | Sequence[Link]) -> None:
        if self.checkpoint is not None:
            self.checkpoint.write(self.branch, **links)

    # -- pushing ---------------------------------------------------------------------------------

    def unpushed(self) -> int:
        """Records on the local audit branch that the remote's (as last fetched or pushed) lacks;
        0 without a remote (nothing is ever pushed) or without records."""
        remote, tip = self.remote(), self.tip()
        if remote is None or tip is None:
            return 0
        tracking = self.resolve(self.tracking_ref(remote))
        base = self._merge_base(tip, tracking) if tracking else None
        return self.link_at(tip).seq - self.link_at(base).seq

    def _merge_base(self, a: str, b: str) -> str | None:
        proc = self.git("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def push(self, *, attempts: int = 5, pause_s: float = 0.2) -> PushOutcome:
        """Push the audit branch (never forced); on a rejection fetch, re-chain the local records
        on top of the remote's and try again. Errors are returned, not raised: the records are
        safe as local commits and go with the next push."""
        remote = self.remote()
        if remote is None or self.tip() is None:
            return PushOutcome(0, 0, remote=remote)
        rebased = 0
        error = "not attempted"
        for attempt in range(attempts):
            waiting = self.unpushed()
            tip = str(self.tip())
            proc = self.git("push", "--porcelain", remote, f"{self.ref}:{self.ref}", check=False)
            if proc.returncode == 0:
                self.git("update-ref", self.tracking_ref(remote), tip)
                self._checkpoint(pushed=self.link_at(tip))
                return PushOutcome(waiting, rebased, remote=remote)
            said = _said(proc.stderr + proc.stdout)
            if "[rejected]" not in proc.stdout.decode() and "rejected" not in said:
                return PushOutcome(0, rebased, error=f"push to {remote} failed: {said}", remote=remote)
            # No `+` and no configured refmap (whose `+refs/heads/*` would force it): a remote branch that
            # is not a continuation of the one fetched or pushed before is refused by git itself.
            fetched = self.git("fetch", "--quiet", "--refmap=", remote, f"{self.ref}:{self.tracking_ref(remote)}",
                               check=False)
            if fetched.returncode:
                return PushOutcome(0, rebased, remote=remote, error=(
                    f"the remote's {self.branch} could not be fetched or is no longer a continuation of what was "
                    f"fetched before (rewritten?): {_said(fetched.stderr)}; nothing was forced, the records stay "
                    "local"))
            rebased = self.rebase_onto(str(self.resolve(self.tracking_ref(remote))))
            error = f"push to {remote} rejected {attempt + 1} time(s): {said}"
            time.sleep(pause_s * (attempt + 1) * random.uniform(0.5, 1.5))  # jitter: writers racing drift apart
        return PushOutcome(0, rebased, error=error, remote=remote)

    def rebase_onto(self, upstream: str) -> int:
        """Re-chain the local records the upstream lacks on top of it, one commit per local commit
        (new sequence numbers and `prev`, same content); how many records moved."""
        tip = self.tip()
        if tip is None:
            return 0
        base = self._merge_base(tip, upstream)
        if base == tip:  # nothing local: take the remote's branch as it is
            self.git("update-ref", self.ref, upstream, tip)
            return 0
        span = f"{base}..{tip}" if base else tip
        commits = self._out("rev-list", "--reverse", "--first-parent", span).split()
        parent, after, moved = upstream, self.link_at(upstream), 0
        for commit in commits:
            payloads = [payload_of(json.loads(self.blob(sha))) for _, sha in self._added(commit)]
            if not payloads:
                continue
            records = chained(payloads, after)
            subject = self._out("log", "-1", "--format=%s", commit).split(": ", 1)[-1]
            parent, after, moved = self._commit(records, parent=parent, subject=subject), self._last(records), \
                moved + len(records)
        old = self.link_at(tip)
        self._checkpoint(written=[old, after])  # either may be the branch's if the process dies here
        if self.git("update-ref", self.ref, parent, tip, check=False).returncode:
            raise AuditConflictError(f"the audit branch {self.branch} in {self.repo} moved during a rebase; "
                                     "the next push tries again")
        self._checkpoint(written=after)
        return moved

    def _added(self, commit: str) -> list[tuple[str, str]]:
        """(path, blob id) of the records `commit` added, in path order."""
        raw = self._out("diff-tree", "-r", "--root", "--no-commit-id", "--diff-filter=A", "-z", commit)
        parts = [p for p in raw.split("\0") if p]
        rows = [(parts[i + 1], parts[i].split()[3]) for i in range(0, len(parts) - 1, 2)]
        return sorted((r for r in rows if r[0].startswith(f"{RECORDS_DIR}/")), key=lambda row: chain_order(row[0]))


def _said(stderr: bytes) -> str:
    """Git's own message lines, on one line."""
    return "; ".join(line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()) \
        or "no message"
