"""The replicas' side of a pass (`reconciler.replicas` decides who does what): the leader's part
(`SharedPass`: the org and cluster stacks are its own, the project stacks are published for every
replica to claim) and a follower's (`follow`: claim and apply stacks of the running pass).

A new leader that takes over a running pass plans the org and cluster stacks again: the dead
leader may have died inside their apply (planned again, a finished stack's plan is empty), and the
same pass continues: project stacks finished by anyone stay finished."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import git

from engines.hyperpod.cluster_executor import ClusterExecutor, declared_clusters, live_arns, with_cluster_arns
from engines.leases import Held
from engines.outcomes import permanent
from engines.plan import ApplyResult, Plan, StackName
from engines.protocol import Engine
from engines.schedule import STOPPING
from hypergov.gitsource import read_tree_at
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from reconciler.audit import AuditLog, commit_author
from reconciler.pass_result import PassResult, Scope
from reconciler.replicas import COMPLETE, FAILED, Replica, split_scope
from reconciler.write_ahead import LeaseStamp

EngineFactory = Callable[[GovernanceTree, str], Engine]  # (tree, source commit) -> engine


def follow(repo_path: Path, subdir: str, engine_for: EngineFactory, *, replica: Replica, branch: str,
           audit: AuditLog | None, on_apply: Callable[[ApplyResult], None] | None, stop: threading.Event | None,
           clusters: Callable[[GovernanceTree], ClusterExecutor] | None) -> PassResult:
    """Not the leader: claim and apply stacks of the pass the leader published, if one runs
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
    tree = report.tree
    declared = declared_clusters(tree)
    if clusters is not None and declared:  # the stacks bind to the live clusters' ARNs, as the leader's did
        tree = with_cluster_arns(tree, live_arns(clusters(tree).plan(declared)))
    worked = replica.work(engine=engine_for(tree, head), stacks=[StackName(s) for s in running.get("stacks", [])],
                          pass_id=str(running["pass"]), audit=audit, stop=stop, on_apply=on_apply,
                          source_author=commit_author(repo_path, head))
    result = PassResult(head=head, base=running.get("base"), status="applied", plans=worked.plans,
                        results=worked.results, failures=worked.failures, records=worked.records,
                        audit_error=worked.audit_error)
    result.status = "stopped" if worked.stopped else "apply failed" if result.errors else "applied"
    return result



@dataclass
class SharedPass:
    """The leader's part in a shared pass: the org and cluster stacks are its own, the project
    stacks are published for every replica to claim (`reconciler.replicas`)."""

    replica: Replica
    leader: Held
    scope: Scope  # the leader's own stacks
    projects: list[StackName]
    base: str | None = None
    published: bool = False

    @classmethod
    def of(cls, replica: Replica | None, leader: Held | None, scope: Scope, tree: GovernanceTree) -> SharedPass | None:
        if replica is None or leader is None:
            return None
        own, projects = split_scope(scope.plan, tree)
        return cls(replica, leader, Scope(plan=tuple(own), destroy=scope.destroy), projects)

    def run(self, result: PassResult, *, branch: str, engine: Engine, audit: AuditLog | None,
            stop: threading.Event | None, on_apply: Callable[[ApplyResult], None] | None, author: str | None) -> None:
        """Publish the project stacks, claim and apply them with the others, merge what this
        replica did into `result` (the pass fails when any stack failed, here or elsewhere)."""
        if audit is not None and result.records:
            audit.push()  # the leader's own records, before the shared part (a dead leader keeps none)
        pass_id = self.replica.publish(branch, base=result.base, head=result.head, leader=self.leader,
                                       stacks=self.projects)
        self.published = True
        worked = self.replica.work(engine=engine, stacks=self.projects, pass_id=pass_id, audit=audit, stop=stop,
                                   on_apply=on_apply, source_author=author)
        result.plans += worked.plans
        result.results += worked.results
        result.records += worked.records
        result.failures.update(worked.failures)
        result.audit_error = result.audit_error or worked.audit_error
        for stack in worked.failed_elsewhere:
            result.failures[stack] = permanent(f"{stack} failed in another reconciler's share of this pass (its "
                                               "audit records say why); the next pass tries it again", "replica")
        if worked.stopped:
            result.results.append(ApplyResult(stack=StackName(self.projects[0]), refusal=STOPPING))

    def stamp(self, plans: Sequence[Plan]) -> LeaseStamp:
        """The leader's own stacks are applied under the leader lease: its epoch on their records."""
        return LeaseStamp(holder=self.replica.leases.me, epochs={p.stack: self.leader.epoch for p in plans},
                          check=self.leader.check)

    def conclude(self, branch: str, *, ok: bool) -> None:
        if self.published:
            self.replica.conclude(branch, leader=self.leader, state=COMPLETE if ok else FAILED)


