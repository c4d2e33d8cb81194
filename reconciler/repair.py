"""Drift repair as a use case: `hypergov drift --remediate/--prune-unmanaged` and the daemon's
scheduled repair both run it. The tree compared (the one last applied, else the working tree),
the live scan, then the repairs: a remediation rolls out through `reconciler.rollout` like every
apply (every stack to repair planned first, nothing applied otherwise; audited with the drift it
restores; the records published), a prune deletes exactly the objects listed between its intent
and its record (`reconciler.drift_repair`).

The caller wires and renders: it passes how to ask (`confirm`: the CLI asks unless --yes, the
daemon never asks) and where lines go (`say`: stderr, or the daemon's event log)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engines.factory import build_engine, cluster_executor, reconciler_records
from engines.hyperpod.cluster_executor import declared_clusters, live_arns, with_cluster_arns
from engines.kube import KubeApi
from engines.live.items import DriftItem, LiveScan
from engines.live.kubernetes import kube_apis_of
from engines.live.runner import ServiceClientFor
from engines.live.scan import PRUNERS, org_clients, scan_tree
from engines.outcomes import PermanentError
from engines.plan import StackName, failure_lines
from engines.protocol import Engine
from engines.settings import Settings
from hypergov.gitsource import NotInRepositoryError, locate_tree, read_tree_at
from hypergov.model.tree import GovernanceTree
from hypergov.validate import load_valid_tree, validate_files
from reconciler.applied_record import applied_commit
from reconciler.audit import AuditLog, commit_author, source_commit
from reconciler.drift_repair import REPAIR_REASON, Pruned, prune, record_prune, record_prune_intent, repair_plan
from reconciler.drift_report import filtered
from reconciler.pass_result import Scope
from reconciler.render import apply_line, audit_lines, render_text
from reconciler.rollout import Carrying, Source, carry_out, prepare, publish
from stacks.spec import plan_stacks

Confirm = Callable[[str], bool]  # asked before anything is changed; False: nothing is
Say = Callable[[str], None]


@dataclass(frozen=True)
class ComparedTree:
    tree: GovernanceTree
    commit: str | None
    described: str  # "the tree last applied to main" / "the working tree at config"


class AppliedTreeInvalidError(PermanentError):
    """The tree last applied no longer validates: the scan has nothing to compare with."""

    reason = "drift-tree"


def with_live_arns(settings: Settings, tree: GovernanceTree) -> GovernanceTree:
    """`tree` as its stacks are declared: each managed cluster with its live cluster's ARN (what
    apply and the reconciler declare the stacks with, so that drift compares the same thing)."""
    declared = declared_clusters(tree)
    if not declared:
        return tree
    return with_cluster_arns(tree, live_arns(cluster_executor(settings, tree).plan(declared)))


def compared_tree(settings: Settings, *, against: str, branch: str, repo: Path | None = None) -> ComparedTree:
    """The tree whose desired state the scan compares with: the one the reconciler last applied to
    `branch` (its shared record; read from `repo` when given, the reconciler's repository), else
    the working tree."""
    applied = applied_commit(reconciler_records(settings), branch) if against == "applied" else None
    try:
        where = locate_tree(settings.config_dir, repo=repo)
    except NotInRepositoryError:
        where = None
    if applied and where is not None:
        report = validate_files(read_tree_at(where.repo, applied, where.subdir))
        if report.ok and report.tree is not None:
            return ComparedTree(with_live_arns(settings, report.tree), applied, f"the tree last applied to {branch}")
        raise AppliedTreeInvalidError(f"the tree last applied to {branch} ({applied[:12]}) no longer validates; "
                                      "compare with the working tree: --against tree")
    commit = source_commit(where.repo, settings.config_dir) if where is not None else None
    return ComparedTree(with_live_arns(settings, load_valid_tree(settings.config_dir)), commit,
                        f"the working tree at {settings.config_dir}")


def live_scan(settings: Settings, tree: GovernanceTree, *, only: Sequence[str] | None = None,
              clusters: Sequence[str] = ()) -> LiveScan:
    """The live scan of `tree` (the caller holds the state directory's lock: the graph cache)."""
    return filtered(scan_tree(settings.aws, tree, cache_dir=Path(settings.state_dir) / "graphs", only=only,
                              kube_apis=kube_apis_of(settings.kubeconfigs)), clusters=clusters)


def repair(settings: Settings, compared: ComparedTree, scan: LiveScan, *, remediate: bool, prune_unmanaged: bool,
           audit: AuditLog, confirm: Confirm, say: Say) -> bool:
    """Repair what the scan found (the caller repairs only a complete scan and holds the state
    directory's lock); False when a repair failed or was declined (what is left is then what a
    new scan finds)."""
    plan = repair_plan(scan.items, [s.name for s in plan_stacks(compared.tree)], PRUNERS)
    ok = True
    if remediate and plan.stacks:
        engine = build_engine(settings, compared.tree, source_commit=compared.commit)
        ok &= remediated(engine, compared, plan.stacks, plan.items, audit, confirm=confirm, say=say)
    if prune_unmanaged and plan.unmanaged:
        _, client_for, _ = org_clients(settings.aws, compared.tree)
        ok &= pruned(plan.unmanaged, client_for, audit, kube_apis=kube_apis_of(settings.kubeconfigs),
                     commit=compared.commit, confirm=confirm, say=say)
    for item in plan.unprunable if prune_unmanaged else ():
        say(f"not pruned: {item.address} ({item.type}): hypergov deletes no object of this type; {item.fix}")
    return ok


def remediated(engine: Engine, compared: ComparedTree, stacks: Sequence[str], items: Mapping[str, tuple[str, ...]],
               audit: AuditLog, *, confirm: Confirm, say: Say) -> bool:
    """The stacks holding drift, rolled out again from the compared tree (reason "drift repair",
    with the items each restores on its records)."""
    source = Source(compared.tree, compared.commit, commit_author(audit.store.repo, compared.commit))
    prepared = prepare(engine, Scope(plan=tuple(StackName(s) for s in stacks), destroy=()), source)
    shown = render_text(prepared.plans).rstrip("\n")
    if shown:
        say(shown)
    if not prepared.ready:
        for line in failure_lines(prepared.failures):
            say(f"ERROR {line}")
        say("nothing repaired: every stack to repair must plan first")
        return False
    if not prepared.pending:
        say("the plans show nothing to restore")
        return True
    if not confirm(f"repair {len(prepared.pending)} stack(s)?"):
        return False
    applied = carry_out(engine, prepared, Carrying(audit=audit, on_apply=lambda r: say(apply_line(r)),
                                                   reason=REPAIR_REASON, drift=items))
    for line, _ in audit_lines(audit, applied.audit_error, applied.records, applied.push):
        say(line)
    return applied.audit_error is None and all(r.ok for r in applied.results)


def pruned(items: Sequence[DriftItem], client_for: ServiceClientFor, audit: AuditLog, *,
           kube_apis: Mapping[str, Callable[[], KubeApi]], commit: str | None, confirm: Confirm, say: Say) -> bool:
    """Delete exactly the unmanaged objects listed, between the prune's intent and its record."""
    say(f"{len(items)} unmanaged object(s) to delete:")
    for item in items:
        say(f"  - {item.address} ({item.account} {item.region}, stack {item.stack})")
    if not confirm(f"delete these {len(items)} object(s)?"):
        return False

    def done(p: Pruned) -> None:
        say(f"{'deleted' if p.error is None else 'FAILED'} {p.item.address}{f': {p.error.message}' if p.error else ''}")

    intent_id = record_prune_intent(audit, items, source_commit=commit)  # no intent, no delete
    deleted = prune(items, PRUNERS, client_for, kube_apis=kube_apis, on_done=done)
    try:
        record_prune(audit, deleted, source_commit=commit, intent_id=intent_id)
    except Exception as exc:  # the objects are gone: say the record is not written, loudly
        say(f"ERROR the objects were deleted but the prune's audit record could not be written: {exc}")
        return False
    for line, _ in audit_lines(audit, None, [], publish(audit)):
        say(line)
    return all(p.error is None for p in deleted)
