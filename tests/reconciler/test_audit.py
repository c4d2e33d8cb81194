"""The audit branch in real Git repositories: records go to `hypergov/audit` only (the governed
branch, HEAD, the index and the working tree stay as they were, a person's staged edit included),
no attribute values in them, a concurrent writer is detected by `update-ref`'s old value, pushes
to a bare remote never force (a rejected push is rebased: the records re-chained on top), records
that could not be pushed wait and are counted, and audit commits can be signed with an SSH key."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import git
import pytest

from engines.outcomes import permanent
from engines.plan import Action, ApplyResult, AttributeChange, Plan, ResourceChange, StackName
from reconciler.audit import (
    AuditEntry,
    AuditLog,
    AuditRepoError,
    find_audit_repo,
    intent_payload,
    outcome_payload,
    source_commit,
)
from reconciler.audit_chain import verify_chain
from reconciler.audit_signing import SigningKey, allowed_signers
from reconciler.audit_store import AuditConflictError, AuditStore
from reconciler.audit_verify import verify_branch
from tests.audit_trail import records_at

SECRET = "s3cr3t-value-never-recorded"
BRANCH = "hypergov/audit"
ACTOR = git.Actor("admin", "admin@example.com")


def _repo(root: Path) -> git.Repo:
    repo = git.Repo.init(root, initial_branch="main")
    (root / "config").mkdir(parents=True)
    (root / "config" / "org.yaml").write_text("name: acme\n")
    repo.index.add(["config/org.yaml"])
    repo.index.commit("tree", author=ACTOR, committer=ACTOR)
    return repo


def _plan(stack: str) -> Plan:
    change = ResourceChange(f"aws_iam_role.{stack.replace('-', '_')}", "aws_iam_role", "r", Action.UPDATE, "terraform",
                            (AttributeChange("description", "old", SECRET),))
    return Plan(stack=StackName(stack), engine="terraform", changes=(change,), source_commit="a" * 40,
                artifact_sha256="b" * 64)


def _log(root: Path, state: Path, **kwargs: Any) -> AuditLog:
    return AuditLog.open(root, state_dir=state, branch=BRANCH, **kwargs)


def _records(repo: Path, ref: str = BRANCH) -> list[dict[str, Any]]:
    return records_at(repo, ref)


def test_records_go_to_the_audit_branch_only_and_leave_a_persons_work_alone(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "gov")
    (tmp_path / "gov" / "config" / "org.yaml").write_text("name: acme-edit\n")
    repo.index.add(["config/org.yaml"])  # a person's staged, unrelated edit
    (tmp_path / "gov" / "notes.txt").write_text("untracked\n")
    head, status = repo.head.commit.hexsha, repo.git.status("--porcelain")
    log = _log(tmp_path / "gov", tmp_path / "state")
    plans = [_plan("project-vision"), _plan("project-nlp")]
    log.write([intent_payload(plans, intent_id="i1", source_author="dev <dev@example.com>", reason=None, refused={})],
              subject="intent")
    failed = ApplyResult(stack=StackName("project-nlp"), error=permanent("boom", "rejected"))
    log.write([outcome_payload(AuditEntry(plans[0], ApplyResult(StackName("project-vision"), applied=plans[0].changes)),
                               intent_id="i1", source_author=None),
               outcome_payload(AuditEntry(plans[1], failed), intent_id="i1", source_author=None)], subject="outcome")

    assert repo.head.commit.hexsha == head and repo.active_branch.name == "main"
    assert repo.git.status("--porcelain") == status  # staged edit still staged, untracked file untouched
    assert [d.a_path for d in repo.index.diff("HEAD")] == ["config/org.yaml"]
    intent, vision, nlp = _records(tmp_path / "gov")
    assert (intent["seq"], intent["prev"], intent["type"]) == (1, "0" * 64, "intent")
    assert [s["stack"] for s in intent["stacks"]] == ["project-vision", "project-nlp"]
    assert intent["stacks"][0]["plan_fingerprint"] == plans[0].fingerprint()
    assert intent["stacks"][0]["actions"] == ["update aws_iam_role.project_vision"]
    assert (vision["type"], vision["outcome"], vision["intent"]) == ("outcome", "applied", "i1")
    assert (nlp["outcome"], nlp["error"], nlp["error_kind"]) == ("failed", "boom", "permanent")
    assert intent["source_author"] == "dev <dev@example.com>" and nlp["source_commit"] == "a" * 40
    audit = repo.commit(BRANCH)
    assert audit.parents[0].parents == () and audit.author.name == "hypergov"  # its own history, from nothing
    assert SECRET not in json.dumps([intent, vision, nlp]) and "description" not in json.dumps([intent, vision, nlp])


def test_a_concurrent_writer_is_detected_and_the_chain_stays_whole(tmp_path: Path) -> None:
    """Another writer moves the branch between reading the chain's end and moving the ref; a
    test double at our own seam (`_commit`) lets it, git's `update-ref` old-value check refuses
    the stale move, and the retry chains after the other writer's record."""
    _repo(tmp_path / "gov")
    other = AuditStore(tmp_path / "gov", branch=BRANCH)

    class Raced(AuditStore):
        raced = False

        def _commit(self, records: Any, **kwargs: Any) -> str:
            if not self.raced:
                self.raced = True
                other.append([{"type": "prune", "subject": "prune", "outcome": "applied"}], subject="other")
            return super()._commit(records, **kwargs)

    written = Raced(tmp_path / "gov", branch=BRANCH).append([{"type": "rejected", "outcome": "rejected"}],
                                                          subject="mine")
    assert written[0]["seq"] == 2
    assert [(r["seq"], r["type"]) for r in _records(tmp_path / "gov")] == [(1, "prune"), (2, "rejected")]
    assert verify_chain(other.files(str(other.tip()))).ok

    class AlwaysRaced(AuditStore):
        def _commit(self, records: Any, **kwargs: Any) -> str:
            other.append([{"type": "prune", "subject": "prune"}], subject="other")
            return super()._commit(records, **kwargs)

    with pytest.raises(AuditConflictError, match="moved under every one of 3 attempts"):
        AlwaysRaced(tmp_path / "gov", branch=BRANCH).append([{"type": "rejected"}], subject="x", attempts=3)


def _bare_remote(tmp_path: Path) -> Path:
    """A bare governance remote holding a seed repository's main."""
    remote = tmp_path / "remote.git"
    git.Repo.init(remote, bare=True, initial_branch="main")
    _repo(tmp_path / "seed").git.push(str(remote), "main")
    return remote


def _clone(remote: Path, where: Path) -> Path:
    git.Repo.clone_from(str(remote), str(where))
    return where


def test_push_never_forces_a_rejected_push_is_rebased_and_waiting_records_are_counted(tmp_path: Path) -> None:
    remote = _bare_remote(tmp_path)
    first = _log(_clone(remote, tmp_path / "a"), tmp_path / "state-a")
    second = _log(_clone(remote, tmp_path / "b"), tmp_path / "state-b")
    first.write([{"type": "prune", "subject": "prune", "outcome": "applied"}], subject="a1")
    assert (first.unpushed(), first.push().pushed, first.unpushed()) == (1, 1, 0)
    second.write([{"type": "rejected", "outcome": "rejected"}], subject="b1")
    second.write([{"type": "rejected", "outcome": "rejected", "note": "again"}], subject="b2")
    assert second.unpushed() == 2
    pushed = second.push()  # rejected (the remote has a1), fetched, b1 and b2 re-chained on a1, pushed
    assert (pushed.error, pushed.rebased, pushed.pushed) == (None, 2, 2)
    on_remote = _records(remote)
    assert [(r["seq"], r["type"], r.get("note")) for r in on_remote] == [
        (1, "prune", None), (2, "rejected", None), (3, "rejected", "again")]
    assert verify_chain(AuditStore(remote, branch=BRANCH).files(BRANCH)).ok
    assert [r["writer"] for r in on_remote] == [first.writer, second.writer, second.writer]

    shutil.move(remote, tmp_path / "gone.git")  # the remote goes away: records wait, counted
    first.write([{"type": "prune", "subject": "prune"}], subject="a2")
    failed = first.push()
    assert failed.error is not None and "push to origin failed" in failed.error and first.unpushed() == 1
    shutil.move(tmp_path / "gone.git", remote)  # and comes back: pushed with the next push, rebased on b1, b2
    assert first.push().error is None and first.unpushed() == 0
    assert [r["seq"] for r in _records(remote)] == [1, 2, 3, 4]


def test_a_rewritten_remote_branch_is_refused_not_forced(tmp_path: Path) -> None:
    remote = _bare_remote(tmp_path)
    mine = _log(_clone(remote, tmp_path / "a"), tmp_path / "state")
    mine.write([{"type": "prune", "subject": "prune"}], subject="a1")
    assert mine.push().error is None
    rogue = AuditStore(_clone(remote, tmp_path / "rogue"), branch=BRANCH)
    rogue.git("update-ref", "-d", rogue.tracking_ref("origin"))  # start over: a history of its own
    rogue.append([{"type": "prune", "subject": "forged"}], subject="forged")
    rogue.git("push", "--force", "origin", f"{rogue.ref}:{rogue.ref}")  # history rewritten on the remote
    mine.write([{"type": "rejected"}], subject="a2")
    refused = mine.push()
    assert refused.error is not None and "rewritten?" in refused.error and "nothing was forced" in refused.error
    assert [r.get("subject") for r in _records(remote)] == ["forged"]  # the remote as the rogue left it
    assert mine.unpushed() == 1  # our record is kept locally


def test_signed_audit_commits_verify_and_an_unsigned_one_is_named(tmp_path: Path) -> None:
    """A key made by OpenSSH's own ssh-keygen signs; `git verify-commit` (git running ssh-keygen)
    accepts every commit we signed, and so does our in-process check; a commit appended without
    the key is named by both."""
    _repo(tmp_path / "gov")
    key = tmp_path / "audit_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hypergov", "-f", str(key)], check=True)
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"hypergov@localhost namespaces=\"git\" {(tmp_path / 'audit_key.pub').read_text()}")
    log = _log(tmp_path / "gov", tmp_path / "state", signer=SigningKey.load(key))
    log.write([{"type": "prune", "subject": "prune"}], subject="one")
    log.write([{"type": "rejected"}], subject="two")
    verdict = verify_branch(log.store, allowed=allowed_signers(signers))
    assert verdict.ok and verdict.signed == 2, verdict
    for commit in log.store.git("rev-list", BRANCH).stdout.decode().split():
        checked = subprocess.run(["git", "-C", str(tmp_path / "gov"), "-c", f"gpg.ssh.allowedSignersFile={signers}",
                                  "verify-commit", commit], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        assert 'Good "git" signature for hypergov@localhost' in checked.stderr
    unsigned = AuditStore(tmp_path / "gov", branch=BRANCH)  # someone without the key appends
    unsigned.append([{"type": "rejected"}], subject="three")
    broken = verify_branch(unsigned, allowed=allowed_signers(signers))
    assert broken.broken is not None and broken.broken.path == f"commit {str(unsigned.tip())[:12]}"
    assert "is not signed" in broken.broken.why and "00000003-rejected-pass.json" in broken.broken.why
    by_git = subprocess.run(["git", "-C", str(tmp_path / "gov"), "-c", f"gpg.ssh.allowedSignersFile={signers}",
                             "verify-commit", str(unsigned.tip())], capture_output=True, text=True)
    assert by_git.returncode != 0


def test_audit_repo_is_the_one_holding_the_tree_or_the_configured_one(tmp_path: Path) -> None:
    _repo(tmp_path / "gov")
    assert find_audit_repo(tmp_path / "gov" / "config") == tmp_path / "gov"
    _repo(tmp_path / "audit-only")
    assert find_audit_repo(tmp_path / "gov" / "config", tmp_path / "audit-only") == tmp_path / "audit-only"
    (tmp_path / "loose").mkdir()
    with pytest.raises(AuditRepoError, match=r"not in a Git repository.*audit_repo.*--no-audit"):
        find_audit_repo(tmp_path / "loose")


def test_source_commit_says_when_the_tree_has_uncommitted_changes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = repo.head.commit.hexsha
    assert source_commit(tmp_path, tmp_path / "config") == head
    (tmp_path / "notes.txt").write_text("outside the tree\n")
    assert source_commit(tmp_path, tmp_path / "config") == head
    (tmp_path / "config" / "projects.yaml").write_text("new: file\n")
    assert source_commit(tmp_path, tmp_path / "config") == f"{head}-dirty"
