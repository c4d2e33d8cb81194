"""The replicas' side of a pass (`reconciler.replicas` decides who does what): the leader's part
(`SharedPass`: the org and cluster stacks and the destroys are its own, the project stacks are
published for every replica to claim) and a follower's (`follow`: claim, plan and apply stacks of
the running pass). Both roll out through `reconciler.rollout`, as a lone reconciler does: the
review gate and "nothing is applied unless every stack of the pass planned" hold for every replica.

The leader plans its own stacks first (a failure there publishes nothing), publishes the project
stacks with the managed clusters' live ARNs and the config tree's id, then claims and plans its
share with the others; once every stack of the pass planned it applies its own stacks, and only
then does any replica apply a project stack (they depend on the org and cluster stacks).

A new leader that takes over a running pass plans its own stacks again: the dead leader may have
died inside their apply (planned again, a finished stack's plan is empty), and the same pass
continues: project stacks finished by anyone stay finished."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import git

from engines.hyperpod.cluster_executor import with_cluster_arns
from engines.leases import Held
from engines.outcomes import permanent
from engines.plan import ApplyResult, Plan, StackName
from engines.protocol import Engine
from hypergov.gitsource import read_tree_at, tree_id_at
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from reconciler.audit import commit_author
from reconciler.pass_result import PassResult, Scope, concluded
from reconciler.replicas import COMPLETE, FAILED, Replica, Share, Worked, split_scope
from reconciler.rollout import Carrying, Prepared, ReviewGate, Source, carry_out
from reconciler.write_ahead import AuditedApply, LeaseStamp

EngineFactory = Callable[[GovernanceTree, str], Engine]  # (tree, source commit) -> engine


def follow(repo_path: Path, subdir: str, engine_for: EngineFactory, *, replica: Replica, branch: str,
           gate: ReviewGate | None, how: Carrying) -> PassResult:
    """Not the leader: claim, plan and apply stacks of the pass the leader published, if one runs
    (else nothing to do: "up to date" for this replica; the leader reports the pass)."""
    running = replica.running_pass(branch)
    try:
        head = str(git.Repo(repo_path).commit(str(running["head"]) if running else branch).hexsha)
    except (git.BadName, ValueError):  # the leader's head is not fetched here yet: the next pass helps
        head, running = str(git.Repo(repo_path).commit(branch).hexsha), None
    if running is None:
        return PassResult(head=head, base=None, status="up to date")
    report = validate_files(read_tree_at(repo_path, head, subdir), display_root=subdir)
    if report.tree is None or not report.ok:  # the leader validated it; today's rules may not: leave it
        return PassResult(head=head, base=None, status="invalid", problems=tuple(report.problems))
    tree = with_cluster_arns(report.tree, running.get("arns") or {})  # the stacks bind as the leader's did
    source = Source(tree, head, commit_author(repo_path, head), running.get("tree_id") or
                    tree_id_at(repo_path, head, subdir))
    worked = replica.work(Share(branch, str(running["pass"]), tuple(StackName(s) for s in running.get("stacks", [])),
                                engine_for(tree, head), source, gate, how))
    result = worked_into(PassResult(head=head, base=running.get("base"), status="applied"), worked)
    result.status = concluded(result)
    return result


def worked_into(result: PassResult, worked: Worked) -> PassResult:
    """`result` with what this replica planned and applied of the pass (the pass fails when any
    stack failed, here or elsewhere)."""
    result.plans += worked.plans
    result.results += worked.results
    result.records += worked.records
    result.failures.update(worked.failures)
    result.audit_error = result.audit_error or worked.audit_error
    for stack in worked.failed_elsewhere:
        result.failures[stack] = permanent(f"{stack} failed to plan in another reconciler's share of this pass "
                                           "(its log says why); nothing of the pass is applied; the next pass "
                                           "tries it again", "replica")
    result.results += [ApplyResult(stack, error=why) for stack, why in worked.not_applied_elsewhere.items()]
    if worked.stopped:
        result.status = "stopped"
    return result


@dataclass
class SharedPass:
    """The leader's part in a shared pass: the org and cluster stacks and the destroys are its own,
    the project stacks are published for every replica to claim (`reconciler.replicas`)."""

    replica: Replica
    leader: Held
    scope: Scope  # the leader's own stacks
    projects: list[StackName]
    published: bool = False

    @classmethod
    def of(cls, replica: Replica | None, leader: Held | None, scope: Scope, tree: GovernanceTree) -> SharedPass | None:
        if replica is None or leader is None:
            return None
        own, projects = split_scope(scope.plan, tree)
        return cls(replica, leader, Scope(plan=tuple(own), destroy=scope.destroy), projects)

    def stamp(self, plans: list[Plan]) -> LeaseStamp:
        """The leader's own stacks are applied under the leader lease: its epoch on their records."""
        return LeaseStamp(holder=self.replica.leases.me, epochs={p.stack: self.leader.epoch for p in plans},
                          check=self.leader.check)

    def run(self, result: PassResult, own: Prepared, *, branch: str, engine: Engine, gate: ReviewGate | None,
            how: Carrying, arns: dict[str, str]) -> AuditedApply | None:
        """Publish the project stacks; claim and plan them with the others; once all planned, apply
        the leader's own stacks (`own`, planned already), then this replica's share. What the own
        apply did (None: it was not reached); the share is merged into `result`."""
        own_applied: list[AuditedApply] = []

        def lead_first() -> bool:
            applied = carry_out(engine, own, replace(how, leases=self.stamp(own.pending)))
            own_applied.append(applied)
            ok = applied.audit_error is None and all(r.ok for r in applied.results)
            self.replica.own_done(branch, leader=self.leader, ok=ok)
            return ok

        pass_id = self.replica.publish(branch, base=result.base, head=result.head, leader=self.leader,
                                       stacks=self.projects, arns=arns, tree_id=own.source.tree_id)
        self.published = True
        worked = self.replica.work(Share(branch, pass_id, tuple(self.projects), engine, own.source, gate, how,
                                         lead_first=lead_first))
        applied = own_applied[0] if own_applied else None
        if applied is not None:
            result.results += applied.results
            result.records += applied.records
            result.audit_error = applied.audit_error
        worked_into(result, worked)
        return applied

    def conclude(self, branch: str, *, ok: bool) -> None:
        if self.published:
            self.replica.conclude(branch, leader=self.leader, state=COMPLETE if ok else FAILED)
