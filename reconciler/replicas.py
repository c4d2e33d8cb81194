"""Several reconcilers on one state bucket share a pass (`state_backend: s3://...`).

Each pass, every replica tries the leader lease (`engines.leases`, an S3 object written with
conditional writes). The leader plans and applies the org and cluster stacks (and destroys and
the clusters phase), then publishes the project stacks of the pass (`passes/<branch>.json`,
written under its epoch). Then every replica, the leader included, claims those stacks one lease
at a time (`leases/stacks/<stack>.json`), plans and applies what it claimed, and releases the
lease marked `done` (or `failed`) for the pass; a claimed stack is applied by one replica only.
The leader waits until every stack is finished, then records the head as applied (fenced: a
record written under a newer epoch is never overwritten) and marks the pass complete.

A replica that dies stops renewing; its leases expire after the lease duration (as the others
observe them) and its stacks are claimed by another at the next epoch and planned again; a new
leader continues the same pass (the same `base..head` and attempt): stacks finished stay
finished. A pass that ended with a failed stack is tried again as a new attempt.

Every audit record carries the epoch of the lease its stack was applied under (`LeaseStamp`).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from engines.leases import (
    LEADER,
    Held,
    HolderId,
    Keeper,
    Lease,
    Leases,
    LeaseTiming,
    Observed,
    StaleEpochError,
    expired,
    new_holder,
)
from engines.objects import RecordStore, update
from engines.outcomes import Failure, permanent, temporary
from engines.plan import ApplyResult, Plan, StackName
from engines.protocol import Engine
from hypergov.model.tree import GovernanceTree
from reconciler.pass_result import Scope
from reconciler.rollout import Carrying, Prepared, ReviewGate, Source, carry_out, prepare, stopped
from reconciler.write_ahead import LeaseStamp
from stacks.spec import plan_stacks

RUNNING, COMPLETE, FAILED, APPLIED = "running", "complete", "failed", "applied"


PASSES = "passes"  # the pass records: `passes/<branch>.json`


def pass_record(branch: str) -> str:
    """The record name of a branch's shared pass."""
    return f"{PASSES}/{branch.replace('/', '_')}.json"


def split_scope(plan: Sequence[StackName], tree: GovernanceTree) -> tuple[list[StackName], list[StackName]]:
    """Pure: (the leader's stacks: org and clusters, in order; the project stacks any replica
    claims). Projects depend only on the org and clusters, so once those are applied the project
    stacks are independent of each other."""
    kinds = {s.name: s.kind for s in plan_stacks(tree)}
    return [s for s in plan if kinds.get(s) != "project"], [s for s in plan if kinds.get(s) == "project"]


def finished(lease: Lease | None, pass_id: str) -> bool:
    """Pure: the stack's lease says it was done (or failed) in this pass."""
    return lease is not None and pass_id in (lease.extra.get("done"), lease.extra.get("failed"))


def next_pass(recorded: dict[str, Any], *, base: str | None, head: str, epoch: int) -> dict[str, Any] | None:
    """Pure: the pass record a leader publishes. The same transition still running (its leader
    died) continues under the same id; one that failed is tried again as the next attempt.
    None (write nothing) when a newer leader wrote it."""
    if int(recorded.get("epoch") or 0) > epoch:
        return None
    transition = f"{base or 'none'}..{head}"
    attempt = int(recorded.get("attempt") or 0)
    if recorded.get("transition") != transition:
        attempt = 1
    elif recorded.get("state") != RUNNING:
        attempt += 1
    return {"transition": transition, "attempt": attempt, "pass": f"{transition}#{attempt}", "head": head,
            "base": base, "epoch": epoch, "state": RUNNING, "stacks": []}


@dataclass
class Worked:
    """What one replica planned and applied of a pass's project stacks."""

    plans: list[Plan] = field(default_factory=list)
    results: list[ApplyResult] = field(default_factory=list)
    failures: dict[StackName, Failure] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    audit_error: str | None = None
    failed_elsewhere: list[StackName] = field(default_factory=list)  # failed to plan in another replica
    not_applied_elsewhere: dict[StackName, Failure] = field(default_factory=dict)  # the leader: others' shares
    stopped: bool = False


class _Either(threading.Event):
    """Set when any of the events is (SIGTERM, or a lease lost): the apply starts no more stacks."""

    def __init__(self, *events: threading.Event) -> None:
        super().__init__()
        self.events = events

    def is_set(self) -> bool:
        return super().is_set() or any(e.is_set() for e in self.events)


@dataclass
class Replica:
    """This reconciler among the others: its leases on the shared record store and their keeper."""

    leases: Leases
    keeper: Keeper
    parallelism: int = 2
    elected: Held | None = None  # the leader lease, while this replica holds it
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def start(cls, records: RecordStore, *, parallelism: int, timing: LeaseTiming | None = None) -> Replica:
        """A replica whose keeper renews its leases and, like client-go's candidates, tries the
        leader lease every retry period: a dead leader is replaced once its lease expires, also
        while this replica is busy with its share of a pass (it leads from its next pass on)."""
        leases = Leases(records, me=new_holder(), timing=timing or LeaseTiming())
        replica = cls(leases, Keeper(leases), parallelism)
        replica.keeper.campaign = replica.campaign
        replica.keeper.start()
        return replica

    def campaign(self) -> None:
        with self._lock:
            if self.elected is not None and not self.elected.lost.is_set():
                return
            self.elected = None
        held = self.leases.try_acquire(LEADER)
        if held is not None:
            with self._lock:
                self.elected = held
                self.keeper.keep(held)

    @property
    def records(self) -> RecordStore:
        return self.leases.store

    # --- the leader ------------------------------------------------------------------------------
    def lead(self) -> Held | None:
        """The leader lease, held already (elected by the keeper) or taken now; None: another leads.
        It is kept across passes while this replica lives (as client-go's leader keeps leading)."""
        with self._lock:
            if self.elected is not None and not self.elected.lost.is_set():
                return self.elected
        self.campaign()
        with self._lock:
            return self.elected

    def step_down(self) -> None:
        """Give the leader lease up at once (on shutdown): another replica leads without waiting."""
        with self._lock:
            held, self.elected = self.elected, None
        if held is not None:
            self.keeper.drop(held)
            self.leases.release(held)

    def publish(self, branch: str, *, base: str | None, head: str, leader: Held, stacks: Sequence[StackName],
                arns: Mapping[str, str], tree_id: str | None) -> str:
        """The pass's project stacks for every replica, with what they are planned from (the managed
        clusters' live ARNs as the leader's clusters phase left them; the config tree's Git id, by
        which the review is found); its id."""
        leader.check()
        written = update(self.records, pass_record(branch), lambda recorded: _with_stacks(
            next_pass(recorded, base=base, head=head, epoch=leader.epoch), stacks, arns=arns, tree_id=tree_id))
        if written is None:
            raise StaleEpochError(f"the pass record of {branch} was written by a newer leader; this one stops")
        return str(written["pass"])

    def conclude(self, branch: str, *, leader: Held, state: str) -> None:
        leader.check()

        def change(recorded: dict[str, Any]) -> dict[str, Any] | None:
            if int(recorded.get("epoch") or 0) > leader.epoch:
                return None
            return {**recorded, "state": state, "epoch": leader.epoch}

        update(self.records, pass_record(branch), change)

    def running_pass(self, branch: str) -> dict[str, Any] | None:
        found = self.records.read(pass_record(branch))
        return found.data if found is not None and found.data.get("state") == RUNNING else None

    def own_state(self, branch: str, pass_id: str) -> str | None:
        """The leader's own stacks in the pass (`ownApplied`): "applied", "failed" or None (not yet)."""
        found = self.records.read(pass_record(branch))
        if found is None or found.data.get("pass") != pass_id or found.data.get("state") != RUNNING:
            return FAILED  # a newer pass replaced it, or the leader concluded it: this one is over
        if found.data.get("own") in (APPLIED, FAILED):
            return str(found.data["own"])
        leader = self.leases.current(LEADER)
        if leader is not None and leader.epoch > int(found.data.get("epoch") or 0):
            return FAILED  # its leader is gone: the next one continues the pass (and plans every stack again)
        return None

    def own_done(self, branch: str, *, leader: Held, ok: bool) -> None:
        """The leader's own stacks (org, clusters, destroys) are applied: the project stacks may go."""
        leader.check()
        update(self.records, pass_record(branch), lambda recorded: None if int(recorded.get("epoch") or 0)
               > leader.epoch else {**recorded, "own": APPLIED if ok else FAILED})

    # --- every replica -----------------------------------------------------------------------------
    def work(self, share: Share) -> Worked:
        """Claim and plan the pass's stacks, holding each claimed lease, until every stack of the
        pass is planned (by any replica); apply nothing when one failed to plan; once all planned
        (and the leader's own stacks applied), apply what this replica claimed."""
        worked, mine, ready = Worked(), _Mine(), False
        try:
            ready = self._plan_share(share, worked, mine)
            if ready:
                self._apply(share, worked, mine)
        finally:
            for held in mine.held.values():
                self.keeper.drop(held)
                self.leases.release(held)  # not applied (stopped, or the pass failed): planned again later
        if ready and share.lead_first is not None:
            self._until_applied(share, worked)
        return worked

    def _until_applied(self, share: Share, worked: Worked) -> None:
        """The leader: wait until every replica applied the stacks it planned, before the pass is
        concluded (the head is recorded as applied only when all were, and a follower still waiting
        for the leader's own stacks would take a concluded pass as over and apply nothing). A
        stack failed or refused there, or let go unfinished (its holder stopped or died), was not
        applied in this pass."""
        mine = {r.stack for r in worked.results}
        while True:
            left: dict[StackName, Failure] = {}
            for stack in (s for s in share.stacks if s not in mine):
                seen = self.leases.look(_stack_lease(stack))
                extra = seen.lease.extra if seen.lease is not None else {}
                if extra.get("done") == share.pass_id:
                    continue
                if extra.get("failed") == share.pass_id:
                    left[stack] = permanent(f"{stack} was not applied in another reconciler's share of this pass "
                                            "(failed or refused: its audit record says why)", "replica")
                elif seen.lease is not None and seen.lease.holder and not seen_expired(self.leases, seen):
                    break  # being applied
                else:
                    left[stack] = temporary(f"{stack} was let go unapplied in another reconciler's share of this "
                                            "pass (stopped or gone); the next pass plans it again", "replica")
            else:
                worked.not_applied_elsewhere = left
                return
            if (share.how.stop or threading.Event()).wait(self.leases.timing.retry_s):
                worked.stopped = True
                return

    def _plan_share(self, share: Share, worked: Worked, mine: _Mine) -> bool:
        """Phase one: claim and plan until every stack is planned; True when the apply may start."""
        pending = _rotated(list(share.stacks), self.leases.me)
        while True:
            if (share.how.stop is not None and share.how.stop.is_set()) or mine.lost():
                worked.stopped = True
                return False
            waiting = False
            claimed: list[tuple[StackName, Held]] = []
            for stack in pending:
                if stack in mine.held:
                    continue
                seen = self.leases.look(_stack_lease(stack))
                lease = seen.lease
                if lease is not None and lease.extra.get("plan_failed") == share.pass_id:
                    worked.failed_elsewhere.append(stack)
                    return False  # a stack of the pass could not be planned: nothing is applied
                if finished(lease, share.pass_id):
                    continue
                if lease is not None and lease.holder and lease.extra.get("planned") == share.pass_id \
                        and not seen_expired(self.leases, seen):
                    continue  # planned by another replica, which holds it until the apply
                waiting = True
                if len(claimed) < self.parallelism:
                    held = self.leases.take(_stack_lease(stack), seen)
                    if held is not None:
                        self.keeper.keep(held)
                        claimed.append((stack, held))
            if claimed:
                if not self._plan_claimed(share, claimed, worked, mine):
                    return False
                continue
            if not waiting:
                return self._leader_went_first(share)
            (share.how.stop or threading.Event()).wait(self.leases.timing.retry_s)

    def _plan_claimed(self, share: Share, claimed: list[tuple[StackName, Held]], worked: Worked,
                      mine: _Mine) -> bool:
        break_dead_locks(share.engine, [(s, h) for s, h in claimed if h.taken_from])
        mine.held.update(claimed)
        prepared = prepare(share.engine, Scope(plan=tuple(s for s, _ in claimed), destroy=()), share.source,
                           gate=share.gate)
        worked.plans += prepared.plans
        worked.failures.update(prepared.failures)
        for stack, held in claimed:
            if stack in prepared.failures:
                self.keeper.drop(held)
                self.leases.release(held, plan_failed=share.pass_id)
                del mine.held[stack]
            else:
                self.leases.mark(held, planned=share.pass_id)
        mine.prepared.append(prepared)
        return not prepared.failures

    def _leader_went_first(self, share: Share) -> bool:
        """Every stack is planned: the leader applies its own stacks first (the project stacks
        depend on them); the others wait for that. False: they failed (nothing more is applied)."""
        if share.lead_first is not None:
            return share.lead_first()
        while True:
            state = self.own_state(share.branch, share.pass_id)
            if state is not None:
                return state == APPLIED
            if (share.how.stop or threading.Event()).wait(self.leases.timing.retry_s):
                return False

    def _apply(self, share: Share, worked: Worked, mine: _Mine) -> None:
        """Phase two: carry out what this replica planned, under its leases' epochs."""
        held = dict(mine.held)
        if not held:
            return
        stamp = LeaseStamp(holder=self.leases.me, epochs={s: h.epoch for s, h in held.items()},
                           check=lambda: _check_all(held.values()))
        halt = _Either(*(e for e in (share.how.stop,) if e is not None), *(h.lost for h in held.values()))
        how = replace(share.how, stop=halt, leases=stamp)
        ok: set[StackName] = set()
        failed: set[StackName] = set()
        for prepared in mine.prepared:
            try:
                applied = carry_out(share.engine, prepared, how)
            except StaleEpochError:
                continue  # a lease was lost before the intent: nothing applied, the new holder plans it
            worked.results += applied.results
            worked.records += applied.records
            worked.audit_error = worked.audit_error or applied.audit_error
            ok |= {r.stack for r in applied.results if r.ok} | {p.stack for p in prepared.plans if p.is_empty}
            worked.stopped |= stopped(applied.results)
            failed |= {r.stack for r in applied.results if _failed_in_the_pass(r)}
        # Released only now: a released lease counts as lost, which would halt this replica's
        # other stacks (one refused stack stopped the rest of its share before)
        for stack in [s for s in mine.held if s in failed]:
            self.keeper.drop(mine.held[stack])
            self.leases.release(mine.held.pop(stack), failed=share.pass_id)
        for stack in [s for s in mine.held if s in ok]:
            self.keeper.drop(mine.held[stack])
            self.leases.release(mine.held.pop(stack), done=share.pass_id)


@dataclass(frozen=True)
class Share:
    """One replica's part in a shared pass: the pass, its stacks, what they are planned from and
    how they are carried out (`reconciler.rollout`)."""

    branch: str
    pass_id: str
    stacks: tuple[StackName, ...]
    engine: Engine
    source: Source
    gate: ReviewGate | None
    how: Carrying
    lead_first: Callable[[], bool] | None = None  # the leader: apply its own stacks once all are planned


@dataclass
class _Mine:
    """The stacks this replica holds in the pass, and their plans."""

    held: dict[StackName, Held] = field(default_factory=dict)
    prepared: list[Prepared] = field(default_factory=list)

    def lost(self) -> bool:
        return any(h.lost.is_set() for h in self.held.values())


def _failed_in_the_pass(result: ApplyResult) -> bool:
    """Tried and not applied for good in this pass: an error, or refused by the review (a new
    commit is needed). A stack not started (stopping, a lost lease) is not: another takes it."""
    if result.refusal is not None:
        return result.refusal.kind in ("plan changed", "not reviewed")
    return not result.ok


def seen_expired(leases: Leases, seen: Observed) -> bool:
    return expired(seen, now=leases.clock())


@runtime_checkable
class LockBreaker(Protocol):
    """An engine that can free a stack's state lock left by a dead holder (terraform's S3 lock)."""

    def break_dead_lock(self, stack: StackName, *, lease_taken_at: datetime) -> str | None: ...


def break_dead_locks(engine: Engine, taken: Sequence[tuple[StackName, Held]]) -> list[str]:
    """For stacks whose lease was taken from an expired holder: its terraform lock, if it left one
    (else the next plan would wait -lock-timeout and fail). The lock IDs freed. A failure to free
    one is left to the plan, which then says who holds the lock."""
    if not isinstance(engine, LockBreaker):
        return []
    freed = []
    for stack, lease in taken:
        try:
            found = engine.break_dead_lock(stack, lease_taken_at=lease.taken_at)
        except Exception:
            found = None
        if found:
            freed.append(found)
    return freed


def _check_all(held: Sequence[Held] | Any) -> None:
    for lease in held:
        lease.check()


def _with_stacks(record: dict[str, Any] | None, stacks: Sequence[StackName], *, arns: Mapping[str, str],
                 tree_id: str | None) -> dict[str, Any] | None:
    return None if record is None else {**record, "stacks": list(stacks), "arns": dict(arns), "tree_id": tree_id}


def _stack_lease(stack: str) -> str:
    return f"stacks/{stack}"


def _rotated(stacks: list[StackName], me: str) -> list[StackName]:
    """Each replica starts at another place in the list: fewer collisions on the same lease."""
    if not stacks:
        return stacks
    start = zlib.crc32(me.encode()) % len(stacks)
    return stacks[start:] + stacks[:start]


@dataclass(frozen=True)
class LeaseView:
    """A lease as `hypergov status` shows it (`renewed_at` is the holder's wall clock: for people)."""

    name: str
    holder: str  # "" when released
    epoch: int
    renewed_at: str
    duration_s: float

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "holder": self.holder or None, "epoch": self.epoch, "renewed_at": self.renewed_at,
                "duration_s": self.duration_s}


@dataclass(frozen=True)
class PassView:
    """A branch's shared pass: its id and state, and where its project stacks are."""

    branch: str
    pass_id: str
    state: str
    epoch: int
    stacks: int
    done: int
    failed: int
    held: tuple[LeaseView, ...]  # stacks being applied now, and by whom

    def as_dict(self) -> dict[str, Any]:
        return {"branch": self.branch, "pass": self.pass_id, "state": self.state, "epoch": self.epoch,
                "stacks": self.stacks, "done": self.done, "failed": self.failed,
                "applying": [h.as_dict() for h in self.held]}


def _view(name: str, lease: Lease) -> LeaseView:
    return LeaseView(name, lease.holder, lease.epoch, lease.renewed_at, lease.duration_s)


def lease_status(records: RecordStore, branches: Sequence[str], *,
                 parallelism: int = 16) -> tuple[LeaseView | None, tuple[PassView, ...]]:
    """Read only: the leader lease and, per branch with a pass record (`branches`, and any other
    pass in the store), the pass and its stacks' leases (read concurrently: a pass of 1,000 stacks
    is 1,000 small reads)."""
    from concurrent.futures import ThreadPoolExecutor

    reader = Leases(records, me=HolderId(""))  # reads only (`current`): the lease names have one source
    leader = reader.current(LEADER)
    recorded = {n.removeprefix(f"{PASSES}/").removesuffix(".json") for n in records.names(PASSES)}
    passes = []
    for branch in [*branches, *sorted(recorded - {b.replace("/", "_") for b in branches})]:
        found = records.read(pass_record(branch))
        if found is None:
            continue
        data, stacks = found.data, [str(s) for s in found.data.get("stacks", [])]
        with ThreadPoolExecutor(max_workers=parallelism) as pool:
            read = list(pool.map(lambda s: reader.current(_stack_lease(s)), stacks))
        leases = [(s, lease) for s, lease in zip(stacks, read, strict=True) if lease is not None]
        pass_id = str(data.get("pass", ""))
        passes.append(PassView(
            branch=branch, pass_id=pass_id, state=str(data.get("state", "")), epoch=int(data.get("epoch") or 0),
            stacks=len(stacks), done=sum(1 for _, lease in leases if lease.extra.get("done") == pass_id),
            failed=sum(1 for _, lease in leases if lease.extra.get("failed") == pass_id),
            held=tuple(_view(s, lease) for s, lease in leases if lease.holder and not finished(lease, pass_id))))
    return (_view(LEADER, leader) if leader else None), tuple(passes)
