"""`hypergov status`: what the reconciler of a state directory has done and what it has left,
read from its records only (never AWS, never the lock itself):
- per branch, the last applied commit (`reconciler.json`, in the state bucket with an S3 backend)
  and how many commits wait behind the branch head (in the repository given, or the
  reconciler's own clone under `<state_dir>/repo`);
- the last scheduled drift scan (`drift-last.json`) and its counts per kind;
- audit records waiting to be pushed (`unpushed_records`: the audit branch against its remote);
- who holds the state directory's lock (`lock_holder`), and whether that process is alive;
- with replicas on a state bucket (`reconciler.replicas`): the leader lease and each branch's
  shared pass (its state, stacks done / failed / waiting, and who applies which stack now).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from engines.objects import RecordStore
from reconciler.applied_record import ReconcilerStateError, _state, local_records
from reconciler.audit_store import DEFAULT_BRANCH, AuditStore
from reconciler.drift_schedule import load_summary
from reconciler.lock_holder import LockHolder, read_holder
from reconciler.reconcile import LOCK_FILE
from reconciler.replicas import LeaseView, PassView, lease_status

CLONE_DIR = "repo"  # the reconciler's own clone of a remote governance repository, under the state dir


def unpushed_records(audit_repo: Path | None, branch: str = DEFAULT_BRANCH) -> int:
    """Audit records on `branch` in `audit_repo` that its remote lacks, as last fetched or pushed
    (the audit store's count; `status` and the metrics' `hypergov_audit_records_unpushed` read it).
    0 without a repository, a remote or records. Raises AuditWriteError when Git cannot read it."""
    return AuditStore(audit_repo, branch=branch).unpushed() if audit_repo is not None else 0


@dataclass(frozen=True)
class BranchStatus:
    branch: str
    applied_commit: str | None
    applied_at: str | None
    head: str | None  # the branch head in the repository (None: not known)
    waiting: int | None  # commits on the head not applied yet (None: not known, see `note`)
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"branch": self.branch, "applied_commit": self.applied_commit, "applied_at": self.applied_at,
                "head": self.head, "commits_waiting": self.waiting, "note": self.note}


@dataclass(frozen=True)
class Status:
    state_dir: Path
    repo: Path | None
    branches: tuple[BranchStatus, ...]
    drift: Mapping[str, Any] | None
    unpushed: int
    lock: LockHolder | None
    leader: LeaseView | None = None  # replicas only: the leader lease
    passes: tuple[PassView, ...] = ()  # replicas only: each branch's shared pass

    def as_dict(self) -> dict[str, Any]:
        return {"state_dir": str(self.state_dir), "repo": str(self.repo) if self.repo else None,
                "branches": [b.as_dict() for b in self.branches], "last_drift_scan": self.drift,
                "audit_records_unpushed": self.unpushed, "lock": self.lock.as_dict() if self.lock else None,
                "leader": self.leader.as_dict() if self.leader else None,
                "passes": [p.as_dict() for p in self.passes]}


def default_repo(state_dir: Path, given: Path | None, fallback: Callable[[], Path | None]) -> tuple[Path | None, bool]:
    """(repository, is the reconciler's clone): the one given, else the clone, else `fallback()`."""
    if given is not None:
        return given, False
    clone = state_dir / CLONE_DIR
    if (clone / ".git").exists() or (clone / "HEAD").exists():
        return clone, True
    return fallback(), False


def _head(repo: git.Repo, branch: str, *, prefer_remote: bool) -> str | None:
    """The branch head: in the reconciler's clone what it fetched (origin/<branch>) when present."""
    refs = [f"refs/remotes/origin/{branch}", f"refs/heads/{branch}"]
    for ref in refs if prefer_remote else refs[::-1]:
        try:
            return str(repo.commit(ref).hexsha)
        except (git.BadName, ValueError):
            continue
    return None


def branch_status(repo_path: Path | None, branch: str, entry: Mapping[str, Any], *,
                  clone: bool = False) -> BranchStatus:
    applied = str(entry["applied_commit"]) if entry.get("applied_commit") else None
    at = str(entry["at"]) if entry.get("at") else None
    if repo_path is None:
        return BranchStatus(branch, applied, at, None, None, "no repository to count commits in: pass --repo")
    try:
        repo = git.Repo(repo_path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return BranchStatus(branch, applied, at, None, None, f"{repo_path} is not a Git repository")
    head = _head(repo, branch, prefer_remote=clone)
    if head is None:
        return BranchStatus(branch, applied, at, None, None, f"no branch '{branch}' in {repo_path}")
    try:
        waiting = int(repo.git.rev_list("--count", f"{applied}..{head}" if applied else head))
    except git.GitCommandError:
        return BranchStatus(branch, applied, at, head, None, f"the applied commit is not in {repo_path} (history "
                            "rewritten, or another repository)")
    return BranchStatus(branch, applied, at, head, waiting)


def gather_status(state_dir: Path, repo: Path | None, *, branches: Sequence[str] = (), clone: bool = False,
                  audit_repo: Path | None = None, audit_branch: str = DEFAULT_BRANCH,
                  records: RecordStore | None = None, shared: bool = False) -> Status:
    """`audit_repo` holds the audit branch (default: `repo`); `records` the applied-commit record
    (default: the state directory; the state bucket's with an S3 state backend); `shared`: replicas
    share that store, so the leases and passes are read too. Raises
    ReconcilerStateError when a record is unreadable (the message says how to recover)."""
    store = records or local_records(state_dir)
    recorded: dict[str, Any] = _state(store).get("branches", {})
    names = list(dict.fromkeys([*sorted(recorded), *branches]))
    leader, passes = lease_status(store, names) if shared else (None, ())
    try:
        drift = load_summary(state_dir)
    except ValueError as exc:  # JSONDecodeError included
        raise ReconcilerStateError(f"{state_dir} holds an unreadable drift summary ({exc}); delete drift-last.json "
                                   "(the next scheduled scan writes it again)") from exc
    return Status(state_dir=state_dir, repo=repo,
                  branches=tuple(branch_status(repo, b, recorded.get(b) or {}, clone=clone) for b in names),
                  drift=drift, unpushed=unpushed_records(audit_repo or repo, audit_branch),
                  lock=read_holder(state_dir / LOCK_FILE), leader=leader, passes=passes)


def status_lines(status: Status) -> list[str]:
    """The text rendering, one fact per line."""
    lines = [f"state directory: {status.state_dir}", f"repository: {status.repo or '(none)'}"]
    if not status.branches:
        lines.append("no branch applied yet")
    for b in status.branches:
        applied = f"applied {b.applied_commit[:12]} at {b.applied_at}" if b.applied_commit else "nothing applied"
        waiting = (f"{b.waiting} commit(s) waiting (head {b.head[:12]})" if b.waiting is not None and b.head
                   else f"commits waiting unknown: {b.note}")
        lines.append(f"branch {b.branch}: {applied}; {waiting}")
    lines.append(_drift_line(status.drift))
    lines.append(f"audit records waiting to be pushed: {status.unpushed}")
    lines.append(_lock_line(status.lock))
    if status.leader is not None:
        lines.append(f"leader: {_holder_line(status.leader)}")
    for p in status.passes:
        left = p.stacks - p.done - p.failed - len(p.held)
        lines.append(f"pass {p.pass_id} of {p.branch} (epoch {p.epoch}): {p.state}; {p.stacks} project stack(s): "
                     f"{p.done} done, {p.failed} failed, {len(p.held)} applying, {left} waiting")
        lines += [f"  {h.name}: {_holder_line(h)}" for h in p.held]
    return lines


def _holder_line(lease: LeaseView) -> str:
    if not lease.holder:
        return f"nobody (released at {lease.renewed_at}, epoch {lease.epoch})"
    return f"{lease.holder}, epoch {lease.epoch}, renewed {lease.renewed_at} (lease {lease.duration_s:.0f} s)"


def _drift_line(drift: Mapping[str, Any] | None) -> str:
    if drift is None:
        return "last drift scan: none (reconcile --watch --drift-every runs them)"
    if drift.get("error"):
        return f"last drift scan: {drift.get('at')}: FAILED: {drift['error']}"
    counts = ", ".join(f"{n} {kind}" for kind, n in (drift.get("counts") or {}).items())
    line = (f"last drift scan: {drift.get('at')} against {str(drift.get('commit'))[:12]}: "
            f"{'complete' if drift.get('complete') else 'INCOMPLETE'}; {counts}")
    if drift.get("left") is not None:
        left = sum(drift["left"].values())
        line += f"; {'repaired' if drift.get('repaired') else 'repair FAILED'}, {left} item(s) left"
    return line


def _lock_line(holder: LockHolder | None) -> str:
    if holder is None:
        return "lock: free"
    who = f"pid {holder.pid} on {holder.host} since {holder.started_at} ({holder.command})"
    if holder.alive is False:
        return f"lock: free (the recorded holder, {who}, is not running)"
    return f"lock: held by {who}" + (" (another host: cannot tell whether it runs)" if holder.alive is None else "")
