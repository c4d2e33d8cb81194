"""Audit records: every apply that changed something (or failed) is written to the governance
repository as a JSON file and committed, so the Git history says who changed what, from which
source commit, with which reviewed plan. Plans are masked before they get here; records hold
addresses, actions and hashes, never attribute values."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import git

from engines.outcomes import temporary
from engines.plan import ApplyResult, Plan, StackName

AUDIT_DIR = "audit"


@dataclass(frozen=True)
class AuditEntry:
    plan: Plan
    result: ApplyResult
    reason: str | None = None  # why this apply ran when not a merge: "drift repair"
    drift: tuple[str, ...] = ()  # the drift items it repairs, "<kind> <address>" (never values)


def audit_record(entry: AuditEntry, *, when: datetime) -> dict[str, Any]:
    plan, result = entry.plan, entry.result
    return {
        "stack": plan.stack,
        "engine": plan.engine,
        "at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source_commit": plan.source_commit,
        "plan_fingerprint": plan.fingerprint(),
        "plan_artifact_sha256": plan.artifact_sha256,
        "planned": plan.counts(),
        "applied": sorted(f"{c.action.value} {c.address}" for c in result.applied),
        "failed": [{"change": f"{c.action.value} {c.address}", "error": err.message, "kind": err.kind}
                   for c, err in result.failed],
        "skipped": sorted(f"{c.address}: {c.note}" for c in result.skipped),
        "refusal": result.refusal,
        "error": result.error.message if result.error else None,
        "error_kind": result.error.kind if result.error else None,
        "outcome": "applied" if result.ok else ("refused" if result.refusal else "failed"),
        **({"reason": entry.reason, "drift": list(entry.drift)} if entry.reason else {}),
    }


@dataclass
class AuditTrail:
    """The entries of one apply as it goes: a stack that started counts as interrupted until it
    finishes, so an apply cut short still records what may have happened."""

    plans: dict[str, Plan]
    entries: dict[str, AuditEntry] = field(default_factory=dict)
    reason: str | None = None
    drift: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # stack -> the drift items it repairs

    @classmethod
    def of(cls, plans: Sequence[Plan], *, reason: str | None = None,
           drift: Mapping[str, tuple[str, ...]] | None = None) -> AuditTrail:
        return cls(plans={p.stack: p for p in plans}, reason=reason, drift=drift or {})

    def _entry(self, result: ApplyResult) -> AuditEntry:
        return AuditEntry(self.plans[result.stack], result, self.reason, self.drift.get(result.stack, ()))

    def started(self, stack: StackName) -> None:
        self.entries[stack] = self._entry(ApplyResult(stack=stack, error=temporary(
            "apply interrupted while this stack was being applied; plan again to see what is left", "interrupted")))

    def finished(self, result: ApplyResult) -> None:
        self.entries[result.stack] = self._entry(result)

    def recorded(self) -> list[AuditEntry]:
        return [self.entries[s] for s in self.plans if s in self.entries]


class AuditCommitError(Exception):
    """The records are on disk but Git refused the commit; the message names the files."""


class AuditRepoError(Exception):
    """No Git repository to record audit commits in; the message says how to name one."""


def find_audit_repo(config_dir: Path, configured: Path | None = None) -> Path:
    """The governance repository: `configured`, else the Git repository holding `config_dir`."""
    where = configured or config_dir
    try:
        repo = git.Repo(where, search_parent_directories=configured is None)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise AuditRepoError(
            f"{where} is not in a Git repository, so this apply could not be audited; set audit_repo in "
            "hypergov.yaml (or HYPERGOV_AUDIT_REPO) to the governance repository, or pass --no-audit "
            "for a local experiment") from exc
    return Path(repo.working_dir)


def source_commit(repo_path: Path, config_dir: Path) -> str | None:
    """HEAD of the governance repository, with `-dirty` when the tree under `config_dir` has
    uncommitted changes (the applied tree is then not exactly that commit)."""
    repo = git.Repo(repo_path)
    if not repo.head.is_valid():
        return None
    sha = str(repo.head.commit.hexsha)
    try:
        rel = str(config_dir.resolve().relative_to(Path(repo.working_dir).resolve()))
    except ValueError:
        return sha  # the tree lives elsewhere; the commit still dates the records
    return f"{sha}-dirty" if repo.is_dirty(path=rel, untracked_files=True) else sha


def commit_audit(repo_path: Path, entries: Sequence[AuditEntry], *, when: datetime | None = None,
                 author: str = "hypergov <hypergov@localhost>") -> str | None:
    """Write one record per stack that changed or failed and commit them, and only them (what a
    person has staged in the same repository stays staged and out of the audit commit); returns
    the commit sha (None when nothing happened, so steady state leaves no noise in the history)."""
    when = when or datetime.now(UTC)
    worth = [e for e in entries if e.result.applied or e.result.failed or not e.result.ok]
    if not worth:
        return None
    failed = [e.plan.stack for e in worth if not e.result.ok]
    source = next((e.plan.source_commit for e in worth if e.plan.source_commit), None)
    what = worth[0].reason or "apply"
    subject = f"hypergov {what}{f' {source[:12]}' if source else ''}: {len(worth)} stack(s) changed"
    body = "\n".join(f"- {e.plan.stack}: {audit_record(e, when=when)['outcome']}" for e in worth)
    if failed:
        subject += f", {len(failed)} failed"
    return commit_records(repo_path, {e.plan.stack: audit_record(e, when=when) for e in worth},
                          message=f"{subject}\n\n{body}\n", when=when, author=author)


def commit_records(repo_path: Path, records: Mapping[str, dict[str, Any]], *, message: str, when: datetime,
                   author: str = "hypergov <hypergov@localhost>") -> str:
    """Write each record as `audit/<month>/<stamp>-<name>.json` and commit exactly those files."""
    repo = git.Repo(repo_path)
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    paths = []
    for name, record in records.items():
        rel = Path(AUDIT_DIR) / when.strftime("%Y-%m") / f"{stamp}-{name}.json"
        target = Path(repo.working_dir) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        paths.append(str(rel))
    name, email = author.rsplit(" <", 1)
    identity = {f"GIT_{role}_{part}": value for role in ("AUTHOR", "COMMITTER")
                for part, value in (("NAME", name), ("EMAIL", email.rstrip(">")))}
    try:
        repo.git.add("--", *paths)
    except git.GitCommandError as exc:
        raise AuditCommitError(f"the audit records were written ({', '.join(paths)} in {repo.working_dir}) "
                               f"but could not be staged ({_git_error(exc)})") from exc
    # --only: just these paths, whatever else is staged; --no-verify: a repository's commit hooks
    # (linters, message checks) must not be able to keep an apply that happened out of the record.
    try:
        with repo.git.custom_environment(**identity):
            repo.git.commit("--only", "--no-verify", "-m", message, "--", *paths)
    except git.GitCommandError as exc:
        raise AuditCommitError(
            f"the audit records were written ({', '.join(paths)} in {repo.working_dir}) but could not be "
            f"committed ({_git_error(exc)}); commit them by hand") from exc
    return str(repo.head.commit.hexsha)


def _git_error(exc: git.GitCommandError) -> str:
    """Git's own error lines, on one line, without GitPython's `stderr: '...'` wrapping."""
    text = str(exc.stderr or exc).strip().removeprefix("stderr:").strip().strip("'")
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())
