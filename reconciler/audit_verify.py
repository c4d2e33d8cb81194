"""Checking and reading an audit branch: `hypergov audit verify` and `hypergov audit log`.

Verification recomputes the hash chain over the records at the branch's tip (`audit_chain`),
compares the branch with the checkpoint the daemon keeps (the last record it wrote, or pushed,
must still be there unchanged) and with the signed checkpoints published outside the repository
(`audit_checkpoints`: what a clone alone cannot see, a removed tail, a rebuilt branch, a fork, a
rollback), and requires every audit commit to carry a good SSH signature by a writer's key (the
keys the checkpoints publish, an allowed-signers file). The first bad record is named, with why.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reconciler.audit_chain import RECORDS_DIR, START, Break, Link, check_checkpoint, seq_of_path, verify_chain
from reconciler.audit_checkpoints import HeadRelation, WitnessVerdict, branch_dir, judge
from reconciler.audit_signing import GIT_NAMESPACE, Checked, allowed_signers_text, check, split_signature
from reconciler.audit_store import AuditStore, AuditWriteError
from reconciler.audit_witness import Witness, opener


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
    witnesses: tuple[WitnessVerdict, ...] = ()
    signatures: str = ""  # how signatures were judged, in a sentence (e.g. why they were not)

    @property
    def ok(self) -> bool:
        return self.broken is None

    def as_dict(self) -> dict[str, Any]:
        return {"intact": self.ok, "repo": self.repo, "branch": self.branch, "tip": self.tip,
                "records": self.records, "last_seq": self.last.seq, "last_sha256": self.last.sha256,
                "broken": self.broken.as_dict() if self.broken else None,
                "checkpoint": ({"seq": self.checkpoint.seq, "sha256": self.checkpoint.sha256}
                               if self.checkpoint else None),
                "signatures_checked": self.signed, "signatures": self.signatures,
                "witnesses": [w.as_dict() for w in self.witnesses]}


def verify_branch(store: AuditStore, *, checkpoint: Sequence[Link] = (), allowed: Collection[bytes] = (),
                  witnesses: Sequence[Witness] = (), now: datetime | None = None) -> Verification:
    """The branch at its tip: history only adds, the chain recomputes, the local checkpoint's
    record is there, every witness's checkpoints hold (`audit_checkpoints.judge`), and every
    commit is signed by an allowed key: `allowed` (an allowed-signers file, this writer's own
    key) and the keys of the witnesses' good checkpoints."""
    tip = store.tip()
    newest = max(checkpoint, key=lambda link: link.seq) if checkpoint else None
    when = now or datetime.now(UTC)

    def result(records: int, last: Link, broken: Break | None, signed: int | None = None,
               judged: tuple[WitnessVerdict, ...] = (), signatures: str = "") -> Verification:
        return Verification(str(store.repo), store.branch, tip, records, last, broken, newest, signed, judged,
                            signatures)

    with ThreadPoolExecutor(2) as pool:  # git log, and the signatures when no witness narrows them, run beside
        history = pool.submit(history_break, store, tip) if tip else None
        every_commit = pool.submit(check_commits, store, tip, frozenset(allowed)) \
            if tip and allowed and not witnesses else None
        verdict = verify_chain(store.files(tip)) if tip else None
        history_broken = history.result() if history else None
    hashes = verdict.hashes if verdict else {}
    last = verdict.last if verdict else START
    judged = tuple(judge(where=w.where, branch=store.branch, hashes=hashes, last_seq=last.seq,
                         listed=w.listing(branch_dir(store.branch)), read=opener(w),
                         head_relation=lambda head: _relation(store, head, tip), now=when) for w in witnesses)
    if tip is None or verdict is None:
        why = (f"no branch {store.branch}, but record {newest.seq} was written: the audit branch was deleted"
               if newest else None)
        found = next((j.broken for j in judged if j.broken), None)
        return result(0, START, Break(store.branch, None, why) if why else found, judged=judged)
    broken = (history_broken or verdict.broken or check_checkpoint(verdict, checkpoint)
              or next((j.broken for j in judged if j.broken), None))
    keys = set(allowed).union(*(j.signers for j in judged))
    off = sorted({w for j in judged for w in j.unsigned_writers})
    if broken is not None:
        return result(verdict.records, verdict.last, broken, judged=judged)
    if off and not keys:
        return result(verdict.records, verdict.last, None, judged=judged, signatures=(
            f"not checked: writer(s) {', '.join(off)} run with audit_signing: off, so a record appended by anyone who "
            "can push cannot be told apart"))
    if not keys:
        return result(verdict.records, verdict.last, None, judged=judged, signatures=(
            "not checked: no allowed signers known (no witness checkpoint, no --allowed-signers)"))
    vouched = max((j.vouched for j in judged if j.vouched), key=lambda s: s.seq, default=None)
    signed, bad = every_commit.result() if every_commit else check_commits(store, tip, keys,
                                                                           since=vouched.head if vouched else None)
    after = " after them" if vouched else ""
    said = (f"records 1-{vouched.seq} vouched for by signed checkpoints; " if vouched else "") + \
        f"{signed} commit(s){after} checked against {len(keys)} allowed key(s)"
    return result(verdict.records, verdict.last, bad, signed, judged, said)


def _relation(store: AuditStore, head: str, tip: str | None) -> HeadRelation:
    if tip is None:
        return "missing"
    if head == tip:
        return "tip"
    proc = store.git("merge-base", "--is-ancestor", head, tip, check=False)
    return "ancestor" if proc.returncode == 0 else "missing"


def check_commits(store: AuditStore, tip: str, keys: Collection[bytes], *,
                  since: str | None = None) -> tuple[int, Break | None]:
    """Every commit of the branch signed by one of `keys`, read in one `cat-file --batch` and
    checked in-process (`audit_signing`; a key type we do not check here goes to `git
    verify-commit`), spread over the cores (the Ed25519 check releases the GIL). `since`: the
    head a signed checkpoint saw (`judge` has found it in the branch's history): only the commits
    after it, since the checkpoint and the chain vouch for every record it holds. How many were
    checked, and the first that is not good (oldest first)."""
    commits = store.git("rev-list", "--reverse", tip, *([f"^{since}"] if since else [])).stdout.decode().split()
    if not commits:
        return 0, None
    bodies = store.objects(commits)

    def first_bad(part: range) -> Break | None:
        for n in part:
            why = _signature_fault(store, commits[n], bodies[n], keys)
            if why is not None:
                return Break(f"commit {commits[n][:12]}", None, _what_it_added(store, commits[n], why))
        return None

    parts = [range(n, min(n + _CHUNK, len(commits))) for n in range(0, len(commits), _CHUNK)]
    pool = ThreadPoolExecutor(os.cpu_count() or 1)
    try:
        found = next((bad for bad in pool.map(first_bad, parts) if bad is not None), None)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return len(commits), found


_CHUNK = 512  # commits a worker checks at a time


def _signature_fault(store: AuditStore, commit: str, body: bytes, keys: Collection[bytes]) -> str | None:
    """What is wrong with `commit`'s signature (None: a good one by an allowed key)."""
    signature, payload = split_signature(body)
    if signature is None:
        return "is not signed: it was not written by a hypergov writer (forged?)"
    verdict = check(signature, payload, GIT_NAMESPACE, allowed=keys)
    if verdict.foreign:
        verdict = _git_verify(store, commit, keys)
    return None if verdict.signer is not None else verdict.why


def _what_it_added(store: AuditStore, commit: str, why: str) -> str:
    added = store.git("diff-tree", "-r", "--root", "--no-commit-id", "--name-only", "--diff-filter=A", commit,
                      "--", f"{RECORDS_DIR}/").stdout.decode().split()
    return f"{why}; it adds {', '.join(added) if added else 'no record'}"


def _git_verify(store: AuditStore, commit: str, keys: Collection[bytes]) -> Checked:
    with tempfile.NamedTemporaryFile("w", suffix=".allowed_signers") as signers:
        signers.write(allowed_signers_text(keys))
        signers.flush()
        proc = store.git("-c", f"gpg.ssh.allowedSignersFile={signers.name}", "verify-commit", commit, check=False)
    if proc.returncode == 0:
        return Checked(b"git")
    said = "; ".join(line for line in proc.stderr.decode(errors="replace").splitlines() if line.strip())
    return Checked(None, f"not signed by an allowed key: {said or 'no signature'}")


def history_break(store: AuditStore, tip: str) -> Break | None:
    """The branch's own history, which only ever adds records, each after the last: a commit that
    modifies, deletes or renames a record, or adds one before an existing one, is named with the
    record (what a person's commit on the audit branch does; a rewritten history is the chain's
    and the checkpoint's to find)."""
    log = store.git("log", "--reverse", "--first-parent", "--no-renames", "--name-status",
                    "--format=%x00%H %an <%ae> %cI", tip, "--", f"{RECORDS_DIR}/").stdout.decode(errors="replace")
    newest = 0
    for block in filter(None, log.split("\0")):
        header, *changes = [line for line in block.splitlines() if line.strip()]
        commit, who = header.split(" ", 1)
        for change in changes:
            status, path = change.split("\t", 1)
            seq = seq_of_path(path)
            what = {"M": "edited", "D": "deleted", "T": "changed"}.get(status[0])
            if what is None and seq is None:
                what = "added under a name no record has"
            elif what is None and seq is not None and seq <= newest:
                what = f"inserted before record {newest}"
            if what is not None:
                return Break(path, seq, f"{what} by commit {commit[:12]} ({who}): audit records are only ever added")
            newest = max(newest, seq or 0)
    return None


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
