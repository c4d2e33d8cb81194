"""`hypergov status [--json]`: what the state directory's records say, checked against what the
test made happen: commits made after the applied one (counted by Git), a drift summary written
as the daemon writes it, and the state directory's lock held by this process, by nobody, and by
a process killed with SIGKILL (its record stays; the pid is dead)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner

from cli.main import main
from engines.leases import LEADER, HolderId, Keeper, Leases
from engines.live.items import DriftItem, LiveScan
from engines.objects import LocalRecords
from engines.plan import StackName
from reconciler.audit import AuditLog
from reconciler.drift_schedule import save_summary, summary_of
from reconciler.reconcile import exclusive
from reconciler.replicas import Replica
from reconciler.status import gather_status, status_lines
from tests.example_tree import CONFIG

ACTOR = git.Actor("admin", "admin@example.com")


def _commit(repo: git.Repo, name: str) -> str:
    path = Path(repo.working_dir) / name
    path.write_text(name)
    repo.index.add([name])
    return str(repo.index.commit(name, author=ACTOR, committer=ACTOR).hexsha)


@pytest.fixture
def gov(tmp_path: Path) -> git.Repo:
    shutil.copytree(CONFIG, tmp_path / "gov" / "config")
    repo = git.Repo.init(tmp_path / "gov", initial_branch="main")
    repo.index.add([str(p.relative_to(tmp_path / "gov")) for p in (tmp_path / "gov" / "config").rglob("*")
                    if p.is_file()])
    repo.index.commit("tree", author=ACTOR, committer=ACTOR)
    return repo


def _applied(state: Path, commit: str) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / "reconciler.json").write_text(json.dumps(
        {"branches": {"main": {"applied_commit": commit, "at": "2026-01-02T03:04:05Z"}}}))


def _status(tmp_path: Path, *args: str) -> dict[str, Any]:
    env = {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_CONFIG_DIR": str(tmp_path / "gov" / "config")}
    result = CliRunner().invoke(main, ["status", "--json", *args], env=env)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_applied_commit_commits_waiting_drift_and_a_free_lock(gov: git.Repo, tmp_path: Path) -> None:
    applied = gov.head.commit.hexsha
    _commit(gov, "a.txt")
    head = _commit(gov, "b.txt")
    _applied(tmp_path / "state", applied)
    item = DriftItem(kind="changed", stack="cluster-gpu-west", address="hyperpod:ComputeQuota:speech-on-gpu-west",
                     type="sagemaker:ComputeQuota", account="111122223333", region="us-west-2", fix="apply")
    scan = LiveScan(items=(item,), failures=(), api_calls=12, seconds=1.25, scanned_at="2026-01-02T04:00:00+00:00",
                    stacks=("org", "cluster-gpu-west"))
    save_summary(tmp_path / "state", summary_of(scan, commit=applied))

    status = _status(tmp_path)
    assert status["branches"] == [{"branch": "main", "applied_commit": applied, "applied_at": "2026-01-02T03:04:05Z",
                                   "head": head, "commits_waiting": 2, "note": None}]
    drift = status["last_drift_scan"]
    assert (drift["at"], drift["commit"], drift["complete"], drift["api_calls"]) == (
        "2026-01-02T04:00:00+00:00", applied, True, 12)
    assert drift["counts"] == {"changed": 1, "missing": 0, "unmanaged": 0, "unbounded": 0}
    assert status["audit_records_unpushed"] == 0  # no audit branch, and no remote to push it to
    assert status["lock"] is None
    assert status["repo"] == str(tmp_path / "gov")


def test_the_lock_holder_and_whether_it_runs(gov: git.Repo, tmp_path: Path) -> None:
    _applied(tmp_path / "state", gov.head.commit.hexsha)
    with exclusive(tmp_path / "state"):
        held = _status(tmp_path)["lock"]
    assert (held["pid"], held["alive"]) == (os.getpid(), True)
    assert _status(tmp_path)["lock"] is None  # released: its record goes with it

    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from reconciler.reconcile import exclusive\n"
        f"with exclusive(Path({str(tmp_path / 'state')!r})):\n    print('locked', flush=True); time.sleep(600)\n")],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        assert _status(tmp_path)["lock"]["pid"] == child.pid
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    dead = _status(tmp_path)["lock"]
    assert (dead["pid"], dead["alive"]) == (child.pid, False)  # the record stayed; the kernel freed the flock
    env = {"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_CONFIG_DIR": str(tmp_path / "gov" / "config")}
    text = CliRunner().invoke(main, ["status"], env=env)
    assert text.exit_code == 0 and f"lock: free (the recorded holder, pid {child.pid}" in text.stdout, text.output
    with exclusive(tmp_path / "state"):  # and indeed the lock is free
        pass


def test_the_reconcilers_clone_counts_what_it_fetched(gov: git.Repo, tmp_path: Path) -> None:
    """A daemon following a remote keeps its clone under <state_dir>/repo; what it fetched and has
    not applied (origin/main ahead of the applied commit) is what waits."""
    applied = gov.head.commit.hexsha
    clone = git.Repo.clone_from(gov.working_dir, tmp_path / "state" / "repo")
    for name in ("c.txt", "d.txt", "e.txt"):
        _commit(gov, name)
    clone.remotes.origin.fetch()
    _applied(tmp_path / "state", applied)
    status = _status(tmp_path)
    assert status["repo"] == str(tmp_path / "state" / "repo")
    assert status["branches"][0]["commits_waiting"] == 3
    assert status["branches"][0]["head"] == gov.head.commit.hexsha


def test_nothing_applied_and_an_unknown_commit(gov: git.Repo, tmp_path: Path) -> None:
    status = _status(tmp_path, "--branch", "main")
    assert status["branches"][0]["applied_commit"] is None and status["branches"][0]["commits_waiting"] == 1
    _applied(tmp_path / "state", "f" * 40)
    (branch,) = _status(tmp_path)["branches"]
    assert branch["commits_waiting"] is None and "not in" in branch["note"]


def test_an_unreadable_record_is_an_error_exit_1(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "reconciler.json").write_text("{not json")
    result = CliRunner().invoke(main, ["status"], env={"HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"),
                                                      "HYPERGOV_STATE_DIR": str(tmp_path / "state")})
    assert result.exit_code == 1 and "reconciler.json is unreadable" in result.output, result.output
    assert "Traceback" not in result.output


def test_audit_records_waiting_are_those_the_remote_lacks(gov: git.Repo, tmp_path: Path) -> None:
    """The count is the audit branch against its remote's (a real bare remote): records written
    here wait until pushed; a push empties the count; one more written waits again."""
    remote = tmp_path / "remote.git"
    git.Repo.init(remote, bare=True, initial_branch="main")
    gov.create_remote("origin", str(remote))
    _applied(tmp_path / "state", gov.head.commit.hexsha)
    audit = AuditLog.open(Path(gov.working_dir), state_dir=tmp_path / "state", branch="hypergov/audit")
    audit.write([{"type": "prune", "subject": "prune", "outcome": "applied"}], subject="one")
    audit.write([{"type": "rejected", "outcome": "rejected"}], subject="two")
    assert _status(tmp_path)["audit_records_unpushed"] == 2
    assert audit.push().error is None
    assert _status(tmp_path)["audit_records_unpushed"] == 0
    audit.write([{"type": "rejected", "outcome": "rejected", "note": "again"}], subject="three")
    assert _status(tmp_path)["audit_records_unpushed"] == 1


def test_replicas_show_the_leader_and_the_shared_pass(gov: git.Repo, tmp_path: Path) -> None:
    """With replicas on one record store: the leader lease, and the branch's pass with each
    project stack done, applied now (by whom, under which epoch) or waiting. The records are
    written by the lease code itself (a leader publishes, two replicas claim), on the local store."""
    records = LocalRecords(tmp_path / "state")
    leader_leases = Leases(records, me=HolderId("node-a:11:aaaa"))
    leader = leader_leases.try_acquire(LEADER)
    assert leader is not None
    replica = Replica(leader_leases, Keeper(leader_leases))
    head = gov.head.commit.hexsha
    pass_id = replica.publish("main", base=None, head=head, leader=leader,
                              stacks=[StackName("project-a"), StackName("project-b"), StackName("project-c")],
                              arns={}, tree_id=None)
    other = Leases(records, me=HolderId("node-b:22:bbbb"))
    done = other.try_acquire("stacks/project-a")
    assert done is not None
    other.release(done, done=pass_id)
    assert other.try_acquire("stacks/project-b") is not None  # being applied by node-b

    status = gather_status(tmp_path / "state", Path(gov.working_dir), records=records, shared=True)
    assert status.leader is not None and (status.leader.holder, status.leader.epoch) == ("node-a:11:aaaa", 1)
    [shown] = status.passes
    assert (shown.pass_id, shown.state, shown.stacks, shown.done, shown.failed) == (
        f"none..{head}#1", "running", 3, 1, 0)
    assert [(h.name, h.holder, h.epoch) for h in shown.held] == [("project-b", "node-b:22:bbbb", 1)]
    text = "\n".join(status_lines(status))
    assert f"pass none..{head}#1 of main (epoch 1): running; 3 project stack(s): 1 done, 0 failed, 1 applying, " \
           "1 waiting" in text
    assert "  project-b: node-b:22:bbbb, epoch 1, renewed " in text
    assert status.as_dict()["leader"]["holder"] == "node-a:11:aaaa"
    assert status.as_dict()["passes"][0]["applying"][0]["name"] == "project-b"
    alone = gather_status(tmp_path / "state", Path(gov.working_dir), records=records)
    assert alone.leader is None and alone.passes == ()  # one reconciler: no leases shown
