"""Audit records: every apply that changed something (or failed) is written to the governance
repository as a JSON file and committed, so the Git history says who changed what, from which
source commit, with which reviewed plan. Plans are masked before they get here; records hold
addresses, actions and hashes, never attribute values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import git

from reconciler.plan import ApplyResult, Plan

AUDIT_DIR = "audit"


@dataclass(frozen=True)
class AuditEntry:
    plan: Plan
    result: ApplyResult


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
        "failed": [{"change": f"{c.action.value} {c.address}", "error": err} for c, err in result.failed],
        "skipped": sorted(f"{c.address}: {c.note}" for c in result.skipped),
        "refusal": result.refusal,
        "error": result.error,
        "outcome": "applied" if result.ok else ("refused" if result.refusal else "failed"),
    }


def commit_audit(repo_path: Path, entries: Sequence[AuditEntry], *, when: datetime | None = None,
                 author: str = "hypergov <hypergov@localhost>") -> str | None:
    """Write one record per stack that changed or failed and commit them; returns the commit sha
    (None when nothing happened, so steady state leaves no noise in the history)."""
    when = when or datetime.now(UTC)
    worth = [e for e in entries if e.result.applied or e.result.failed or not e.result.ok]
    if not worth:
        return None
    repo = git.Repo(repo_path)
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    paths = []
    for entry in worth:
        rel = Path(AUDIT_DIR) / when.strftime("%Y-%m") / f"{stamp}-{entry.plan.stack}.json"
        target = Path(repo.working_dir) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(audit_record(entry, when=when), indent=2, sort_keys=True) + "\n")
        paths.append(str(rel))
    repo.index.add(paths)
    failed = [e.plan.stack for e in worth if not e.result.ok]
    source = next((e.plan.source_commit for e in worth if e.plan.source_commit), None)
    subject = f"hypergov apply{f' {source[:12]}' if source else ''}: {len(worth)} stack(s) changed"
    body = "\n".join(f"- {e.plan.stack}: {audit_record(e, when=when)['outcome']}" for e in worth)
    if failed:
        subject += f", {len(failed)} failed"
    name, email = author.rsplit(" <", 1)
    actor = git.Actor(name, email.rstrip(">"))
    commit = repo.index.commit(f"{subject}\n\n{body}\n", author=actor, committer=actor)
    return str(commit.hexsha)
