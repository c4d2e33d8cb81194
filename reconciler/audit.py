"""Audit records: what every apply was about to do (`intent`, written before anything is applied)
and what it did (`outcome`, one per stack), an apply cut off by a crash (`interrupted`), a tree
refused by validation (`rejected`), a refused pass (`refused`) and a prune (`prune`), on a
dedicated branch of the governance repository (`reconciler.audit_store`), chained by hash
(`reconciler.audit_chain`). Plans are masked before they get here; records hold addresses,
actions and hashes, never attribute values.

Building a record's payload is pure; `AuditLog` binds the branch, this writer's identity (one
per state directory, so a restart recognises its own unfinished intent) and the checkpoint.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import git

from engines.objects import RecordStore
from engines.outcomes import Refusal, temporary
from engines.plan import ApplyResult, Plan, StackName
from engines.settings import Settings
from hypergov.problems import Problem
from hypergov.redaction import redacted
from reconciler.audit_chain import START
from reconciler.audit_checkpoints import Statement
from reconciler.audit_signing import SigningKey
from reconciler.audit_store import AuditStore, Checkpoint, PushOutcome
from reconciler.audit_witness import Witness, publish, witnesses_of

AUDIT_STATE = "audit"  # under the state directory: the writer id and the checkpoint


def stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class AuditEntry:
    plan: Plan
    result: ApplyResult
    reason: str | None = None  # why this apply ran when not a merge: "drift repair"
    drift: tuple[str, ...] = ()  # the drift items it repairs, "<kind> <address>" (never values)
    started: datetime | None = None
    finished: datetime | None = None


def planned_actions(plan: Plan) -> list[str]:
    """Per resource, the action planned: `create aws_iam_role.x` (never a value)."""
    return sorted(f"{c.action.value} {c.address}" for c in plan.actionable)


def intent_payload(plans: Sequence[Plan], *, intent_id: str, source_author: str | None, reason: str | None,
                   refused: Mapping[StackName, Refusal], review: str | None = None) -> dict[str, Any]:
    """Before anything is applied: the stacks, each plan's fingerprint and its actions; `review`:
    whether the tree was reviewed in a merge request ("reviewed" / "unreviewed"; absent where no
    review applies, e.g. a repair)."""
    source = next((p.source_commit for p in plans if p.source_commit), None)
    return {"type": "intent", "intent": intent_id, "source_commit": source, "source_author": source_author,
            "engine": plans[0].engine if plans else None, "reason": reason or "apply",
            **({"review": review} if review is not None else {}),
            "stacks": [{"stack": p.stack, "plan_fingerprint": p.fingerprint(),
                        "plan_artifact_sha256": p.artifact_sha256, "planned": p.counts(), "actions": planned_actions(p),
                        **({"refused": str(refused[p.stack]), "refused_kind": refused[p.stack].kind}
                           if p.stack in refused else {})}
                       for p in plans]}


def outcome_payload(entry: AuditEntry, *, intent_id: str | None, source_author: str | None) -> dict[str, Any]:
    plan, result = entry.plan, entry.result
    seconds = (entry.finished - entry.started).total_seconds() if entry.started and entry.finished else None
    return {
        "type": "outcome", "intent": intent_id, "stack": plan.stack, "engine": plan.engine,
        "source_commit": plan.source_commit, "source_author": source_author,
        "plan_fingerprint": plan.fingerprint(), "plan_artifact_sha256": plan.artifact_sha256,
        "planned": plan.counts(), "actions": planned_actions(plan),
        "applied": sorted(f"{c.action.value} {c.address}" for c in result.applied),
        "failed": [{"change": f"{c.action.value} {c.address}", "error": err.message, "kind": err.kind}
                   for c, err in result.failed],
        "skipped": sorted(f"{c.address}: {c.note}" for c in result.skipped),
        "refusal": str(result.refusal) if result.refusal else None,
        "refusal_kind": result.refusal.kind if result.refusal else None,
        "error": result.error.message if result.error else None,
        "error_kind": result.error.kind if result.error else None,
        "outcome": "applied" if result.ok else ("refused" if result.refusal else "failed"),
        "timing": {"started": stamp(entry.started) if entry.started else None,
                   "finished": stamp(entry.finished) if entry.finished else None,
                   "seconds": round(seconds, 3) if seconds is not None else None},
        "reason": entry.reason or "apply", **({"drift": list(entry.drift)} if entry.drift else {}),
    }


def interrupted_payloads(intent: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One `interrupted` record per stack of an intent that has no outcome: the process died
    between the two, so what happened to the stack is unknown until it is planned again."""
    return [{"type": "interrupted", "intent": intent.get("intent"), "stack": s.get("stack"),
             "source_commit": intent.get("source_commit"), "plan_fingerprint": s.get("plan_fingerprint"),
             "outcome": "interrupted", "intent_at": intent.get("at"),
             "note": "the process ended after the intent was recorded and before the outcome; the stack is "
                     "planned again"} for s in intent.get("stacks", []) if isinstance(s, dict)]


def rejected_payload(*, branch: str, head: str, source_author: str | None,
                     problems: Sequence[Problem]) -> dict[str, Any]:
    """A tree refused by validation: nothing was planned or applied."""
    return {"type": "rejected", "branch": branch, "source_commit": head, "source_author": source_author,
            "outcome": "rejected", "problems": [
                {"file": p.pos.file, "line": p.pos.line, "rule": str(p.rule), "severity": p.severity.value}
                for p in problems[:50]],
            "problem_count": len(problems)}


def refused_payload(*, branch: str, head: str, source_author: str | None, reason: str,
                    applied_commit: str | None) -> dict[str, Any]:
    """A pass refused before planning (e.g. the branch's history was rewritten)."""
    return {"type": "refused", "branch": branch, "source_commit": head, "source_author": source_author,
            "outcome": "refused", "refusal": reason, "applied_commit": applied_commit}


@dataclass
class AuditTrail:
    """The entries of one apply as it goes: a stack that started counts as interrupted until it
    finishes, so an apply cut short still records what may have happened."""

    plans: dict[str, Plan]
    entries: dict[str, AuditEntry] = field(default_factory=dict)
    reason: str | None = None
    drift: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # stack -> the drift items it repairs
    began: dict[str, datetime] = field(default_factory=dict)

    @classmethod
    def of(cls, plans: Sequence[Plan], *, reason: str | None = None,
           drift: Mapping[str, tuple[str, ...]] | None = None) -> AuditTrail:
        return cls(plans={p.stack: p for p in plans}, reason=reason, drift=drift or {})

    def _entry(self, result: ApplyResult) -> AuditEntry:
        return AuditEntry(self.plans[result.stack], result, self.reason, self.drift.get(result.stack, ()),
                          started=self.began.get(result.stack), finished=datetime.now(UTC))

    def started(self, stack: StackName) -> None:
        self.began[stack] = datetime.now(UTC)
        self.entries[stack] = self._entry(ApplyResult(stack=stack, error=temporary(
            "apply interrupted while this stack was being applied; plan again to see what is left", "interrupted")))

    def finished(self, result: ApplyResult) -> None:
        self.entries[result.stack] = self._entry(result)

    def recorded(self) -> list[AuditEntry]:
        return [self.entries[s] for s in self.plans if s in self.entries]


class AuditRepoError(Exception):
    """No Git repository to record audit records in; the message says how to name one."""


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
    return Path(repo.working_dir if not repo.bare else repo.git_dir)


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


def commit_author(repo_path: Path, commit: str | None) -> str | None:
    """`Name <email>` of the source commit's author (who made the change applied), if known."""
    if not commit:
        return None
    proc = subprocess.run(["git", "-C", str(repo_path), "log", "-1", "--format=%an <%ae>",
                           commit.removesuffix("-dirty")], capture_output=True, text=True, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def writer_id(state_dir: Path) -> str:
    """This state directory's writer id (made once): which intents a restart must resolve."""
    path = state_dir / AUDIT_STATE / "writer"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(uuid.uuid4().hex + "\n")
        tmp.replace(path)
    return path.read_text().strip()


def checkpoint_of(state_dir: Path, writer: str, shared: RecordStore | None) -> Checkpoint:
    """This writer's checkpoint: in the shared record store when there is one, else the state dir."""
    if shared is None:
        return Checkpoint.at(state_dir / AUDIT_STATE / "checkpoint.json")
    return Checkpoint(shared, f"{AUDIT_STATE}/{writer}/checkpoint.json")


def signer_of(settings: Settings, state_dir: Path) -> SigningKey | None:
    """The key that signs this writer's audit commits and checkpoints: `audit_signing_key`, else
    one made on first use in the state directory; None only with `audit_signing: off`."""
    if settings.audit_signing == "off":
        return None
    return SigningKey.of_writer(settings.audit_signing_key or state_dir / AUDIT_STATE / "signing_key")


@dataclass
class AuditLog:
    """Where this process records: the store (repository and branch), its writer id, and where
    its checkpoints are published (`witnesses`, signed with the store's key)."""

    store: AuditStore
    writer: str
    pushed_total: int = 0  # records this log's pushes sent, over its life (a pass reports its own share)
    witnesses: list[Witness] = field(default_factory=list)
    alive_interval_s: int | None = None  # the daemon's: said in every checkpoint, for `audit verify`'s staleness

    @classmethod
    def open(cls, repo: Path, *, state_dir: Path, branch: str, signer: SigningKey | None = None,
             shared: RecordStore | None = None, witnesses: Sequence[Witness] = (),
             alive_interval_s: int | None = None) -> AuditLog:
        """`shared`: the reconcilers' record store in the state bucket (the checkpoint goes there,
        one per writer); None: the state directory."""
        writer = writer_id(state_dir)
        checkpoint = checkpoint_of(state_dir, writer, shared)
        return cls(AuditStore(repo, branch=branch, signer=signer, checkpoint=checkpoint), writer,
                   witnesses=list(witnesses), alive_interval_s=alive_interval_s)

    @classmethod
    def from_settings(cls, settings: Settings, repo: Path, *, shared: RecordStore | None = None,
                      alive_interval_s: int | None = None) -> AuditLog:
        """`alive_interval_s`: the daemon's, which publishes alive checkpoints that often."""
        state_dir = Path(settings.state_dir).resolve()
        return cls.open(repo, state_dir=state_dir, branch=settings.audit_branch, signer=signer_of(settings, state_dir),
                        shared=shared, witnesses=witnesses_of(settings), alive_interval_s=alive_interval_s)

    def write(self, payloads: Sequence[Mapping[str, Any]], *, subject: str,
              when: datetime | None = None) -> list[dict[str, Any]]:
        at = stamp(when or datetime.now(UTC))
        return self.store.append([{**redacted(p), "writer": self.writer, "at": at} for p in payloads], subject=subject)

    def last_own(self) -> dict[str, Any] | None:
        """This writer's last record. Reads back from the tip, no further than the checkpoint's
        record (this writer's last, unless the process died between the commit and the checkpoint)."""
        written = self.store.checkpoint.links(self.store.branch, "written") if self.store.checkpoint else []
        floor = min((link.seq for link in written), default=0)
        for record in self.store.newest_first():
            if record.get("writer") == self.writer:
                return record
            if int(record.get("seq", 0)) <= floor:
                return None
        return None

    def open_intent(self) -> dict[str, Any] | None:
        """This writer's last intent, when no outcome followed it (the process died in between)."""
        last = self.last_own()
        return last if last is not None and last.get("type") == "intent" else None

    def push(self) -> PushOutcome:
        """Push the branch, then publish a checkpoint of what the remote now holds (of the local
        branch when there is no remote); a checkpoint that could not be published is said in
        `checkpoint_error`, the next one vouches for the same records."""
        pushed = self.store.push()
        self.pushed_total += pushed.pushed
        if pushed.error is None and self.witnesses:
            errors = self.checkpoint("records")
            if errors:
                pushed = replace(pushed, checkpoint_error="; ".join(errors))
        return pushed

    def checkpoint(self, kind: Literal["records", "alive"], when: datetime | None = None) -> list[str]:
        """Publish a checkpoint of the branch's tip to every witness: after a push (`records`,
        when the tip holds records) or the daemon's periodic `alive` (also before any record).
        The errors, one per witness that refused."""
        tip = self.store.tip()
        last = self.store.link_at(tip)
        if kind == "records" and last == START:
            return []
        signer = self.store.signer
        statement = Statement(writer=self.writer, branch=self.store.branch, seq=last.seq, sha256=last.sha256,
                              head=tip, at=stamp(when or datetime.now(UTC)), kind=kind,
                              interval_s=self.alive_interval_s, public_key=signer.public_line if signer else None)
        return publish(self.witnesses, statement, signer)

    def unpushed(self) -> int:
        return self.store.unpushed()
