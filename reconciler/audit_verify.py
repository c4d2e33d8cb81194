"""Checking and reading an audit branch: `hypergov audit verify` and `hypergov audit log`.

Verification recomputes the hash chain over the records at the branch's tip (`audit_chain`),
compares the branch with the checkpoint the daemon keeps (the last record it wrote, or pushed,
must still be there unchanged: what the chain alone cannot see, a removed tail or a branch
rebuilt consistently), and, when an allowed-signers file is given, requires every audit commit to
carry a good SSH signature (`git verify-commit`). The first bad record is named, with why.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from reconciler.audit_chain import RECORDS_DIR, START, Break, Link, check_checkpoint, verify_chain
from reconciler.audit_store import AuditStore, AuditWriteError


@dataclass(frozen=True)
class Verification:
    repo: str
    branch: str
    tip: str | None
    records: int
    last: Link
    broken: Break | None
    checkpoint: Link | None  # what the branch was compared with (None: no checkpoint here)
    signed: int | None  # commits whose signature was checked (None: signatures not checked)

    @property
    def ok(self) -> bool:
        return self.broken is None

    def as_dict(self) -> dict[str, Any]:
        return {"intact": self.ok, "repo": self.repo, "branch": self.branch, "tip": self.tip,
                "records": self.records, "last_seq": self.last.seq, "last_sha256": self.last.sha256,
                "broken": self.broken.as_dict() if self.broken else None,
                "checkpoint": ({"seq": self.checkpoint.seq, "sha256": self.checkpoint.sha256}
                               if self.checkpoint else None),
                "signatures_checked": self.signed}


def verify_branch(store: AuditStore, *, checkpoint: Sequence[Link] = (),
                  allowed_signers: Path | None = None) -> Verification:
    tip = store.tip()
    newest = max(checkpoint, key=lambda link: link.seq) if checkpoint else None

    def result(records: int, last: Link, broken: Break | None, signed: int | None = None) -> Verification:
        return Verification(str(store.repo), store.branch, tip, records, last, broken, newest, signed)

    if tip is None:
        why = (f"no branch {store.branch}, but record {newest.seq} was written: the audit branch was deleted"
               if newest else None)
        return result(0, START, Break(store.branch, None, why) if why else None)
    verdict = verify_chain(store.files(tip))
    broken = history_break(store, tip) or verdict.broken or check_checkpoint(verdict, checkpoint)
    if broken is not None or allowed_signers is None:
        return result(verdict.records, verdict.last, broken)
    commits = store.git("rev-list", tip).stdout.decode().split()
    for commit in commits:
        proc = store.git("-c", f"gpg.ssh.allowedSignersFile={allowed_signers}", "verify-commit", commit, check=False)
        if proc.returncode:
            said = "; ".join(line for line in proc.stderr.decode(errors="replace").splitlines() if line.strip())
            return result(verdict.records, verdict.last, Break(f"commit {commit[:12]}", None, (
                f"not signed by a key in {allowed_signers}: {said or 'no signature'}")), len(commits))
    return result(verdict.records, verdict.last, None, len(commits))


def history_break(store: AuditStore, tip: str) -> Break | None:
    """The branch's own history, which only ever adds records, each after the last: a commit that
    modifies, deletes or renames a record, or adds one before an existing one, is named with the
    record (what a person's commit on the audit branch does; a rewritten history is the chain's
    and the checkpoint's to find)."""
    log = store.git("log", "--reverse", "--first-parent", "--no-renames", "--name-status",
                    "--format=%x00%H %an <%ae> %cI", tip, "--", f"{RECORDS_DIR}/").stdout.decode(errors="replace")
    newest = ""
    for block in filter(None, log.split("\0")):
        header, *changes = [line for line in block.splitlines() if line.strip()]
        commit, who = header.split(" ", 1)
        for change in changes:
            status, path = change.split("\t", 1)
            what = {"M": "edited", "D": "deleted", "T": "changed"}.get(status[0])
            if what is None and path <= newest:
                what = f"inserted before {newest}"
            if what is not None:
                return Break(path, _seq_of(path), f"{what} by commit {commit[:12]} ({who}): audit records are only "
                             "ever added")
            newest = max(newest, path)
    return None


def _seq_of(path: str) -> int | None:
    digits = path.removeprefix(f"{RECORDS_DIR}/").split("-", 1)[0]
    return int(digits) if digits.isdigit() else None


@contextmanager
def opened(repo: str, *, branch: str) -> Iterator[Path]:
    """A local repository holding `branch`: the path itself, or a bare single-branch clone of a
    URL (credentials as git takes them: helpers, `GIT_SSH_COMMAND`; never from hypergov)."""
    if Path(repo).exists():
        yield Path(repo)
        return
    with tempfile.TemporaryDirectory(prefix="hypergov-audit-") as tmp:
        proc = subprocess.run(["git", "clone", "--quiet", "--bare", "--no-tags", "--single-branch", "--branch", branch,
                               repo, tmp], capture_output=True, text=True, check=False)
        if proc.returncode:
            said = "; ".join(line.strip() for line in proc.stderr.splitlines() if line.strip())
            raise AuditWriteError(f"could not read {branch} of {repo}: {said}")
        yield Path(tmp)


@dataclass(frozen=True)
class LogFilter:
    stacks: frozenset[str] = frozenset()  # empty: every stack
    since: datetime | None = None

    def matches(self, record: dict[str, Any]) -> bool:
        if self.stacks and not self.stacks & record_stacks(record):
            return False
        if self.since is not None:
            at = str(record.get("at", ""))
            return at >= self.since.strftime("%Y-%m-%dT%H:%M:%S")
        return True


def record_stacks(record: dict[str, Any]) -> frozenset[str]:
    """The stacks a record is about: its own, an intent's, or a prune's objects'."""
    found = {str(record["stack"])} if record.get("stack") else set()
    found |= {str(s.get("stack")) for s in record.get("stacks", []) if isinstance(s, dict)}
    found |= {str(o.get("stack")) for o in record.get("objects", []) if isinstance(o, dict)}
    return frozenset(found)


def history(store: AuditStore, where: LogFilter) -> list[dict[str, Any]]:
    """The records that match, oldest first (unreadable ones are for `verify` to name)."""
    tip = store.tip()
    records = []
    for _, data in store.files(tip) if tip else []:
        try:
            record = json.loads(data)
        except ValueError:
            continue
        if isinstance(record, dict) and where.matches(record):
            records.append(record)
    return records
