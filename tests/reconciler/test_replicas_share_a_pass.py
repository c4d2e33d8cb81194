"""Several reconcilers share a pass through leases in S3 (`reconciler.replicas`): three replicas in
threads, each with its own state directory and audit repository, on the embedded endpoint's S3
(in process), with a stand-in engine (the `Engine` Protocol is our own seam; real terraform and
real processes killed with SIGKILL: tests/integration/test_replicas.py). The engine counts who
applies what: every stack of the pass is applied once, never by two replicas at once; one leader
records the head as applied, under its epoch; every outcome record carries its lease's epoch; a
stack whose holder died is taken after the lease duration at the next epoch and applied.

Issue 28's divergences of the replicas' copy of the rollout, each pinned by a test that fails on
main's `reconciler/replicas.py`: a project stack whose plan differs from the reviewed one is
refused by the replica that planned it (not only by the leader), and no replica applies anything of
a pass one of whose stacks failed to plan."""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import git
import pytest

import engines.leases
from embedded_aws import EmbeddedAws
from engines.leases import LEADER, Keeper, Lease, Leases, LeaseTiming, Observed
from engines.objects import S3Records
from engines.outcomes import Failure, permanent
from engines.plan import Action, ApplyResult, AttributeChange, Plan, ResourceChange, StackName
from hypergov.gitsource import tree_id_at
from hypergov.model.tree import GovernanceTree
from reconciler.applied_record import STATE_FILE, applied_commit
from reconciler.audit import AuditLog
from reconciler.pass_result import PassResult
from reconciler.reconcile import PassOptions, reconcile_once
from reconciler.replicas import RUNNING, Replica, _rotated, pass_record
from reconciler.reviewed import record_reviewed
from stacks.spec import plan_stacks
from tests.audit_trail import records_at
from tests.example_tree import CONFIG

ACTOR = git.Actor("dev", "dev@example.com")
FAST = LeaseTiming(duration_s=6.0, renew_deadline_s=4.0, retry_s=0.5)  # client-go's 15/10/2, scaled down


AMOUNT = "120000.00"  # every stack's budget, as the stand-in engine plans it


def planned(stack: StackName, head: str, *, amount: str = AMOUNT) -> Plan:
    """One role and one budget created per stack: a first pass."""
    return Plan(stack=stack, engine="terraform", source_commit=head, changes=(
        ResourceChange(f"aws_iam_role.{stack}", "aws_iam_role", stack, Action.CREATE, "terraform"),
        ResourceChange(f"aws_budgets_budget.{stack}", "aws_budgets_budget", stack, Action.CREATE, "terraform",
                       attributes=(AttributeChange("limit_amount", None, amount),))))


class Ledger:
    """What the stand-in engines applied, across replicas (and the stacks they fail to plan)."""

    def __init__(self, cannot_plan: frozenset[str] = frozenset()) -> None:
        self.cannot_plan = cannot_plan
        self.lock = threading.Lock()
        self.running: Counter[str] = Counter()
        self.applied: list[tuple[str, str]] = []  # (replica, stack)
        self.overlaps: list[str] = []


class Engine:
    name = "terraform"

    def __init__(self, tree: GovernanceTree, head: str, *, who: str, ledger: Ledger) -> None:
        self.stacks = [s.name for s in plan_stacks(tree)]
        self.head, self.who, self.ledger = head, who, ledger

    def plan_many(self, stacks: Sequence[StackName], *, destroy: Sequence[StackName] = (),
                  **_: Any) -> dict[StackName, Plan | Failure]:
        time.sleep(0.2 * len(stacks))  # planning takes time (terraform: seconds): the others claim meanwhile
        return {s: permanent(f"{s}: the stand-in engine cannot plan it", "test") if s in self.ledger.cannot_plan
                else planned(s, self.head) for s in stacks}

    def apply_many(self, plans: Sequence[Plan], *, on_start: Callable[[StackName], None] | None = None,
                   on_done: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None) -> list[ApplyResult]:
        results = []
        for plan in plans:
            with self.ledger.lock:
                self.ledger.running[plan.stack] += 1
                if self.ledger.running[plan.stack] > 1:
                    self.ledger.overlaps.append(plan.stack)
            if on_start:
                on_start(plan.stack)
            time.sleep(0.2)
            with self.ledger.lock:
                self.ledger.running[plan.stack] -= 1
                self.ledger.applied.append((self.who, plan.stack))
            result = ApplyResult(stack=plan.stack, applied=plan.changes)
            results.append(result)
            if on_done:
                on_done(result)
        return results

    def known_stacks(self) -> list[StackName]:
        return []


@pytest.fixture(scope="module")
def aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws() as endpoint:
        yield endpoint


@pytest.fixture
def records(aws: EmbeddedAws, tmp_path: Path) -> S3Records:
    s3 = aws.client("s3", region="us-east-1")
    bucket = f"replicas-{abs(hash(str(tmp_path))) % 10**12}"
    s3.create_bucket(Bucket=bucket)
    return S3Records(s3, bucket=bucket, prefix="prod/reconciler")


@pytest.fixture
def governance(tmp_path: Path) -> Path:
    root = tmp_path / "gov"
    repo = git.Repo.init(root, initial_branch="main")
    shutil.copytree(CONFIG, root / "config")
    repo.index.add([str(p.relative_to(root)) for p in (root / "config").rglob("*") if p.is_file()])
    repo.index.commit("the governance tree", author=ACTOR, committer=ACTOR)
    return root


def _replica_pass(governance: Path, root: Path, *, replica: Replica, who: str, ledger: Ledger,
                  records: S3Records) -> PassResult:
    clone = root / who / "repo"  # its own clone: its audit records are pushed to `governance`
    if not clone.exists():
        git.Repo.clone_from(str(governance), str(clone))
    audit = AuditLog.open(clone, state_dir=root / who / "state", branch="hypergov/audit", shared=records)
    return reconcile_once(clone, "origin/main", "config", root / who / "state",
                          lambda tree, head: Engine(tree, head, who=who, ledger=ledger),  # type: ignore[arg-type,return-value]
                          audit=audit, options=PassOptions(records=records, replica=replica))


def _outcomes(clone: Path) -> list[dict[str, Any]]:
    return [r for r in records_at(clone, "hypergov/audit") if r["type"] == "outcome"]


def _run_three(governance: Path, tmp_path: Path, records: S3Records, ledger: Ledger,
               replicas: list[Replica], until: Callable[[], bool] | None = None) -> dict[str, list[PassResult]]:
    """Each replica runs passes until the head is recorded as applied (as the daemon's loop would),
    or until `until` says so; then their lease keepers stop."""
    head = git.Repo(governance).head.commit.hexsha
    done: dict[str, list[PassResult]] = {}
    until = until or (lambda: applied_commit(records, "origin/main") == head)

    def loop(i: int) -> None:
        who = f"r{i}"
        for _ in range(60):
            done.setdefault(who, []).append(_replica_pass(governance, tmp_path, replica=replicas[i], who=who,
                                                          ledger=ledger, records=records))
            if until():
                return
            time.sleep(0.1)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(replicas))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        for r in replicas:
            r.keeper.stop()
    return done


def test_three_replicas_apply_every_stack_once_and_one_leader_records_the_head(
        governance: Path, tmp_path: Path, records: S3Records) -> None:
    ledger = Ledger()
    replicas = [Replica.start(records, parallelism=1, timing=FAST) for _ in range(3)]
    _run_three(governance, tmp_path, records, ledger, replicas)
    tree_stacks = sorted(s.name for s in plan_stacks(_tree()))
    applied = [stack for _, stack in ledger.applied]
    assert sorted(set(applied)) == tree_stacks, ledger.applied  # every stack applied
    assert ledger.overlaps == []  # never by two replicas at once
    # A replica starved past the renew deadline (a loaded machine) loses its lease: if that happens
    # after its outcome was written but before it marked the stack done, the stack's next holder
    # (the next epoch) applies it again and writes its own outcome. Fencing means no two outcomes of
    # a stack under one epoch, and a stack applied again has one under a later epoch. Otherwise
    # each stack is applied, and recorded, exactly once.
    again = {s for s in applied if applied.count(s) > 1}
    head = git.Repo(governance).head.commit.hexsha
    record = records.read(STATE_FILE)
    assert record is not None and record.data["branches"]["origin/main"]["applied_commit"] == head
    assert record.data["epoch"] >= 1
    outcomes = _outcomes(governance)  # every replica pushed its records to the shared remote
    assert sorted({o["stack"] for o in outcomes}) == tree_stacks  # every stack's outcome recorded
    assert all(isinstance(o["epoch"], int) and o["epoch"] >= 1 and o["holder"] for o in outcomes)
    epochs = {s: [o["epoch"] for o in outcomes if o["stack"] == s] for s in tree_stacks}
    assert all(len(e) == len(set(e)) for e in epochs.values()), epochs  # never two under one epoch
    assert all(len(e) == 1 for s, e in epochs.items() if s not in again), (again, epochs)
    assert all(max(epochs[s]) >= 2 for s in again if len(epochs[s]) > 1), (again, epochs)  # a later holder's
    assert len({o["holder"] for o in outcomes if o["stack"].startswith("project-")}) >= 2  # the work was shared


def test_a_stack_held_by_a_dead_replica_is_taken_after_the_lease_duration_at_the_next_epoch(
        governance: Path, tmp_path: Path, records: S3Records, monkeypatch: pytest.MonkeyPatch) -> None:
    project = next(s.name for s in plan_stacks(_tree()) if s.kind == "project")
    dead = Leases(records, me="gone:4242:dead", timing=FAST)  # type: ignore[arg-type]
    held = dead.try_acquire(f"stacks/{project}")  # claimed, then the process died: never renewed
    assert held is not None and held.epoch == 1
    # Every decision to take the dead holder's lease, with the clock readings it was made on (the
    # lease code's own monotonic clock: when the replica first saw that record, and now).
    takeovers: list[tuple[Observed, float]] = []
    claim = engines.leases.claim

    def recorded_claim(seen: Observed, *, now: float, **kwargs: Any) -> Lease | None:
        wanted = claim(seen, now=now, **kwargs)
        if wanted is not None and seen.lease is not None and seen.lease.holder == dead.me:
            takeovers.append((seen, now))
        return wanted

    monkeypatch.setattr(engines.leases, "claim", recorded_claim)
    ledger = Ledger()
    replicas = [Replica.start(records, parallelism=2, timing=FAST) for _ in range(3)]
    _run_three(governance, tmp_path, records, ledger, replicas)
    # It waited for the lease to expire: each replica that decided to take it had seen the dead
    # holder's record unchanged for the whole lease duration, from a first sight after it was
    # written (held.renewed: the dead holder's clock read after its write, the same clock here).
    assert takeovers
    assert all(seen.since >= held.renewed and now - seen.since >= FAST.duration_s for seen, now in takeovers), \
        [(seen.since - held.renewed, now - seen.since) for seen, now in takeovers]
    assert [stack for _, stack in ledger.applied].count(project) == 1 and ledger.overlaps == []
    outcomes = _outcomes(governance)
    [taken] = [o for o in outcomes if o["stack"] == project]
    assert taken["epoch"] == 2 and taken["holder"] != "gone:4242:dead"


def test_a_pass_whose_leader_died_before_its_own_stacks_is_continued_by_the_next_leader(
        governance: Path, tmp_path: Path, records: S3Records) -> None:
    """The leader published the pass and died before it applied the org and cluster stacks (as
    tests/integration/test_replicas.py kills it). The others claim and plan the project stacks,
    then wait for the leader's own stacks; once another replica holds the leader lease (a newer
    epoch than the pass's) they stop waiting and let their stacks go, and the new leader continues
    the same pass: every stack is applied and the head recorded under the new epoch. (On branch
    rollout before this, the followers waited for the dead leader for ever, the one elected among
    them too: it leads only from its next pass.)"""
    head = git.Repo(governance).head.commit.hexsha
    dead = Leases(records, me="gone:4242:dead", timing=FAST)  # type: ignore[arg-type]
    leader = dead.try_acquire(LEADER)
    assert leader is not None
    pass_id = Replica(dead, Keeper(dead)).publish("origin/main", base=None, head=head, leader=leader,
                                                  stacks=_projects(), arns={}, tree_id=None)
    ledger = Ledger()
    replicas = [Replica.start(records, parallelism=2, timing=FAST) for _ in range(3)]
    _run_three(governance, tmp_path, records, ledger, replicas)
    assert sorted({stack for _, stack in ledger.applied}) == sorted(s.name for s in plan_stacks(_tree()))
    assert ledger.overlaps == []
    record = records.read(STATE_FILE)
    assert record is not None and record.data["branches"]["origin/main"]["applied_commit"] == head
    assert record.data["epoch"] > leader.epoch
    found = records.read(pass_record("origin/main"))
    assert found is not None and (found.data["pass"], found.data["state"]) == (pass_id, "complete")


def _tree() -> GovernanceTree:
    from hypergov.validate import load_valid_tree

    return load_valid_tree(CONFIG)


def _leader_and(records: S3Records, followers: int) -> list[Replica]:
    """A leader that claims no project stack itself (`parallelism=0`), so each project stack is
    planned and applied by one of the other replicas, then those."""
    leader = Replica.start(records, parallelism=0, timing=FAST)
    deadline = time.monotonic() + 10
    while leader.lead() is None:  # its keeper campaigns at once; the lease is free
        assert time.monotonic() < deadline, "the first replica did not become the leader"
        time.sleep(0.1)
    return [leader, *(Replica.start(records, parallelism=1, timing=FAST) for _ in range(followers))]


def _leader_and_two(records: S3Records) -> list[Replica]:
    return _leader_and(records, 2)


def _first_pass_over(records: S3Records) -> Callable[[], bool]:
    """The leader concluded the first attempt of the pass (complete or failed)."""
    def over() -> bool:
        found = records.read(pass_record("origin/main"))
        return found is not None and (found.data["state"] != RUNNING or int(found.data["attempt"]) > 1)
    return over


def _projects() -> list[StackName]:
    return [s.name for s in plan_stacks(_tree()) if s.kind == "project"]


def test_a_replica_refuses_a_project_stack_whose_plan_differs_from_the_reviewed_one(
        governance: Path, tmp_path: Path, records: S3Records) -> None:
    """Divergence "the reviewed-plan gate runs only in the pass" (issue 28). On main a replica
    applied the project stacks it claimed through `apply_audited` without any `refused` (only the
    leader's own `_pass` compared plans with the review, read from its own state directory, by
    (address, action) only): a budget amount changed between review and merge was applied by
    whichever replica claimed the stack. Here the review is recorded in the shared record store
    the replicas use, for the config tree's id; one project stack's budget was reviewed at 90,000
    and is now planned at 120,000. The leader claims no project stack, so the replica that refuses
    it is not the leader; every other stack is applied, and the pass is not recorded as applied
    (a refused stack needs a new commit)."""
    repo = git.Repo(governance)
    head = repo.head.commit.hexsha
    tree_id = tree_id_at(governance, head, "config")
    assert tree_id is not None
    changed = _projects()[0]
    everything = [s.name for s in plan_stacks(_tree())]
    record_reviewed(records, tree_id, [planned(s, head, amount="90000.00" if s == changed else AMOUNT)
                                       for s in everything], method={}, base_ref="main")
    ledger = Ledger()
    replicas = _leader_and_two(records)
    leader = replicas[0].leases.me
    _run_three(governance, tmp_path, records, ledger, replicas, until=_first_pass_over(records))
    applied = [stack for _, stack in ledger.applied]
    assert changed not in applied, ledger.applied  # by no replica
    assert sorted(set(applied)) == sorted(s for s in everything if s != changed), ledger.applied
    assert ledger.overlaps == []
    [refused] = [o for o in _outcomes(governance) if o["stack"] == changed]
    assert (refused["outcome"], refused["refusal_kind"], refused["applied"]) == ("refused", "plan changed", [])
    assert refused["holder"] != leader  # a replica ran the gate, not only the leader
    budget = f"aws_budgets_budget.{changed}"
    assert f'only in the new plan: create {budget} [limit_amount="{AMOUNT}"]' in refused["refusal"]
    assert f'only in the reviewed one: create {budget} [limit_amount="90000.00"]' in refused["refusal"]
    others = {o["stack"] for o in _outcomes(governance) if o["outcome"] == "applied"}
    assert others == {s for s in everything if s != changed}
    assert applied_commit(records, "origin/main") != head  # not recorded as applied: a stack was refused


def test_a_refused_stack_does_not_stop_the_rest_of_its_replicas_share(
        governance: Path, tmp_path: Path, records: S3Records) -> None:
    """Regression (found as a flaky run of the test above): a replica released a refused stack's
    lease at once, and a released lease counts as lost, which halted the replica's other stacks
    ("stopping"); the leader then concluded the pass with them unapplied. Here one replica besides
    the leader holds every project stack, and the one reviewed at another amount is the first it
    applies (its own claim order): the others are applied all the same."""
    repo = git.Repo(governance)
    head = repo.head.commit.hexsha
    tree_id = tree_id_at(governance, head, "config")
    assert tree_id is not None
    replicas = _leader_and(records, 1)
    changed = _rotated(_projects(), replicas[1].leases.me)[0]
    everything = [s.name for s in plan_stacks(_tree())]
    record_reviewed(records, tree_id, [planned(s, head, amount="90000.00" if s == changed else AMOUNT)
                                       for s in everything], method={}, base_ref="main")
    ledger = Ledger()
    _run_three(governance, tmp_path, records, ledger, replicas, until=_first_pass_over(records))
    # A replica's loop may start the pass's next attempt before it sees the first one concluded, and
    # apply a stack again there (its own later claim, never at the same time as another's).
    applied = sorted({stack for _, stack in ledger.applied})
    assert applied == sorted(s for s in everything if s != changed), ledger.applied
    assert ledger.overlaps == []
    [refused] = [o for o in _outcomes(governance) if o["stack"] == changed]
    assert (refused["outcome"], refused["refusal_kind"]) == ("refused", "plan changed")


def test_no_replica_applies_anything_while_a_stack_of_the_pass_failed_to_plan(
        governance: Path, tmp_path: Path, records: S3Records) -> None:
    """Divergence "nothing is applied unless every stack planned" (issue 28). On main each replica
    planned and applied the stacks it claimed batch by batch (`Replica._apply`): a stack that
    failed to plan was released as failed while the other replicas applied theirs, so a pass was
    half applied. Here a project stack cannot be planned (a permanent failure, as `plan_many`
    returns one) by the replica that claimed it (never the leader, which claims no project stack):
    no stack of the pass is applied by any replica (the leader's org and cluster stacks neither),
    no outcome is recorded, and the commit applied last stays what it was (none: a first pass)."""
    broken = _projects()[-1]
    ledger = Ledger(cannot_plan=frozenset({broken}))
    replicas = _leader_and_two(records)
    done = _run_three(governance, tmp_path, records, ledger, replicas, until=_first_pass_over(records))
    assert ledger.applied == []
    assert _outcomes(governance) == []
    assert applied_commit(records, "origin/main") is None
    found = records.read(pass_record("origin/main"))
    assert found is not None and (found.data["state"], found.data["attempt"]) == ("failed", 1)
    statuses = {r.status for results in done.values() for r in results}
    assert "applied" not in statuses and "plan failed" in statuses
