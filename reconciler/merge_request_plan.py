"""The merge request's plan as a use case (`hypergov plan --base REF`): validate the base and the
head, plan only the stacks the change affects (plus destroys for stacks whose source left the
tree), from the live scan when more than `terraform_max_stacks` are affected, record what the
merge request shows as the reviewed plan (`reconciler.reviewed`), and gather the comment's
sections: what the change means and the head's validation results above the resource tables,
the approvals change_control requires, the declared clusters and the capacity impact below.

It returns a value; the CLI renders it, writes the comment and picks the exit status. Progress
lines go to `say` (None: quiet). Errors are typed (`hypergov.validate.InvalidTreeError` with the
comment for an invalid head, `BaseTreeInvalidError`, `IncompleteScanError`, Git's
`RefNotFoundError`), never the CLI's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engines.factory import build_engine, cluster_executor, warm_provider_pool
from engines.hyperpod.cluster_executor import (
    PlannedCluster,
    awaiting_cluster,
    cluster_plan,
    declared_clusters,
    live_arns,
    with_cluster_arns,
)
from engines.live.items import LiveScan
from engines.objects import RecordStore
from engines.outcomes import Failure, HypergovError, PermanentError
from engines.plan import Plan, PlanOutcome, ResourceChange, StackName, split_outcomes
from engines.protocol import Engine, Progress, TakesScannedChanges
from engines.settings import Settings
from hypergov.gitsource import NotInRepositoryError, config_tree_id, locate_tree, read_tree_at
from hypergov.identity_people import NotChecked, People
from hypergov.model.tree import GovernanceTree
from hypergov.tree_files import TreeEntry, read_tree_dir
from hypergov.validate import InvalidTreeError, ValidationReport
from reconciler.merge_request import (
    SAMPLE_TRACE,
    TERRAFORM_MAX_STACKS,
    PeopleOf,
    capacity_impact,
    identity_store_people,
    leading_sections,
    scope,
)
from reconciler.reviewed import LIVE_SCAN, record_reviewed
from reconciler.valid_trees import VALID_TREES_DIR, known_valid, remember_valid

Say = Callable[[str], None]


class InvalidMergeRequestError(InvalidTreeError):
    """The head is invalid (or removes a managed cluster); `comment` is the merge request's
    comment saying so (the problems, file:line), for the caller to post."""

    def __init__(self, report: ValidationReport, comment: str) -> None:
        super().__init__(report)
        self.comment = comment


class BaseTreeInvalidError(PermanentError):
    """The tree at the base ref fails validation: there is nothing valid to compare with."""

    reason = "invalid-base"


class IncompleteScanError(HypergovError):
    """The live scan a many-stack plan needs did not read everything; the message says how to go on."""

    reason = "incomplete-scan"

    def __init__(self, message: str, failure: Failure) -> None:
        super().__init__(message)
        self.kind = failure.kind
        self.retry_after_s = failure.retry_after_s


@dataclass(frozen=True)
class MergeRequestPlan:
    plans: list[Plan]  # the clusters' plan first, then the affected stacks'
    failures: dict[StackName, Failure]  # stacks that could not be planned
    leading: list[str]  # the comment's sections above the resource tables
    extra: list[str] = field(default_factory=list)  # and below them
    reviewed: str | None = None  # where the reviewed plan was recorded (None: not recorded)


def _say(say: Say | None, line: str) -> None:
    if say is not None:
        say(line)


def validated_base_and_head(config_dir: Path, base_ref: str, *, valid_trees: Path | None = None,
                            ) -> tuple[dict[str, TreeEntry], dict[str, TreeEntry], ValidationReport, ValidationReport]:
    """The base's and the head's files and reports, both valid (and the head removes no managed
    cluster), else the error: an invalid head's carries its comment (the problems, file:line).
    `valid_trees`: the trees known to pass every rule (`reconciler.valid_trees`; a passing head is
    noted there, the base it becomes once merged is then not checked again)."""
    from hypergov.loader import LoadedFiles
    from hypergov.rules.clusters import removed_managed_clusters
    from hypergov.validate import held_until_exit, shown_root, validate_files
    from hypergov.validation_markdown import invalid_tree_markdown

    # Base and head share all but the changed files: each file is parsed and checked once, and
    # the base's problems (never shown) name files as the head's do, so that they are shared.
    loaded, shown = LoadedFiles(), shown_root(config_dir)
    with held_until_exit():
        head_files = read_tree_dir(config_dir)
        head_report = validate_files(head_files, display_root=shown, reuse=loaded)
        if not head_report.ok:  # the merge request still gets its comment: the problems, file:line
            raise InvalidMergeRequestError(head_report, invalid_tree_markdown(head_report.problems))
        remember_valid(valid_trees, head_files)
        where = locate_tree(config_dir)
        base_files = read_tree_at(where.repo, base_ref, where.subdir)
        base_report = validate_files(base_files, display_root=shown, reuse=loaded,
                                     rules_passed=known_valid(valid_trees, base_files))
    if not base_report.ok:
        raise BaseTreeInvalidError(f"the tree at {base_ref} is invalid; cannot compare with it")
    remember_valid(valid_trees, base_files)
    removals = list(removed_managed_clusters(base_report.tree, head_report.tree))  # CLU003: base against head
    if removals:
        raise InvalidMergeRequestError(
            ValidationReport(tree=head_report.tree, problems=[*head_report.problems, *removals]),
            invalid_tree_markdown(removals))
    return base_files, head_files, base_report, head_report


def plan_merge_request(settings: Settings, base_ref: str, *, trace: Path | Callable[[], Path | None] | None = None,
                       terraform_max_stacks: int = TERRAFORM_MAX_STACKS, records: RecordStore | None = None,
                       say: Say | None = None, progress: Progress[PlanOutcome] | None = None) -> MergeRequestPlan:
    """The merge request's plan of the tree in `settings.config_dir` against `base_ref`; with
    `records` (and a clean, committed tree, no stack failed) what it shows is recorded there.
    `trace`: the jobs the capacity impact replays, or what finds them when the capacity changed
    (None from it, or no trace: the sample trace)."""
    from hypergov.change_control import approvals_markdown, required_approvals
    from reconciler.clusters import clusters_markdown

    pool = warm_provider_pool(settings)  # `engine: provider`: its first process starts while the trees are checked
    try:
        base_files, head_files, base_report, head_report = validated_base_and_head(
            settings.config_dir, base_ref, valid_trees=Path(settings.state_dir) / VALID_TREES_DIR)
        head = head_report.tree
        approvals = required_approvals(base_files, head_files, base_report.tree)
        mr = scope(base_report.tree, head)
        declared = declared_clusters(head)
        clusters = cluster_executor(settings, head).plan(declared) if declared else []
        arns = live_arns(clusters)  # the stacks bind to each managed cluster's live ARN
        waiting = awaiting_cluster(with_cluster_arns(head, arns))
        engine = build_engine(settings, with_cluster_arns(head, arns), pool=pool)
    except BaseException:
        if pool is not None:  # a daemon planning merge requests must not keep a process per refused one
            pool.close()
        raise
    _say(say, f"{len(mr.affected.to_plan)} stack(s) affected, {len(mr.affected.removed)} removed, "
              f"{mr.affected.unchanged} unchanged")
    to_plan = [s for s in mr.affected.to_plan if s not in waiting]
    scanned, scan_note = scanned_changes(settings, engine, with_cluster_arns(base_report.tree, arns),
                                         with_cluster_arns(head, arns), to_plan, limit=terraform_max_stacks, say=say)
    outcomes = (engine.plan_scanned(to_plan, scanned=scanned, destroy=mr.affected.removed, progress=progress)
                if scanned is not None and isinstance(engine, TakesScannedChanges) else
                engine.plan_many(to_plan, destroy=mr.affected.removed, progress=progress))
    plans, failures = split_outcomes(outcomes)
    plans = [*([cluster_plan(clusters)] if clusters else []), *plans,
             *(Plan(stack=s, engine=engine.name, changes=(), notes=(waiting[s],)) for s in mr.affected.to_plan
               if s in waiting)]
    recorded = (keep_reviewed(records, settings.config_dir, plans, scanned or {}, base_ref=base_ref, say=say)
                if records is not None and not failures else None)
    people_of = _reported(identity_store_people(settings.aws, base_report.tree, head), say)
    leading = [*leading_sections(base_report.tree, head_report, people_of=people_of),
               *([scan_note] if scan_note else [])]
    extra = [approvals_markdown(approvals), *_clusters_section(clusters, clusters_markdown)]
    _say(say, f"{len(approvals)} changed file(s) need approval (see the Markdown plan)")
    if mr.capacity_changed:
        jobs = trace() if callable(trace) else trace
        diff = capacity_impact(base_report.tree, head, trace=jobs or SAMPLE_TRACE, base_ref=base_ref,
                               head_ref="working tree")
        from capacity.render import render_markdown as capacity_markdown

        extra.append(capacity_markdown(diff))
        _say(say, f"capacity impact simulated on {diff.jobs} jobs: {len(diff.regressions)} team regression(s)")
    return MergeRequestPlan(plans=plans, failures=failures, leading=leading, extra=extra, reviewed=recorded)


def _reported(people_of: PeopleOf, say: Say | None) -> PeopleOf:
    """`people_of`, saying how many members it looked up, or why none was checked."""
    def looked_up(principals: Sequence[str]) -> People:
        people = people_of(principals)
        reasons = sorted({a.reason for a in people.values() if isinstance(a, NotChecked)})
        _say(say, f"{len(principals)} Identity Center member(s) of the change "
                  + (f"not checked: {'; '.join(reasons)}" if reasons else "looked up in the identity store"))
        return people

    return looked_up


def _clusters_section(clusters: Sequence[PlannedCluster],
                      markdown: Callable[[Sequence[PlannedCluster]], str]) -> list[str]:
    """What the declared clusters' instance groups become, and the GPUs (none declared: nothing)."""
    return [markdown(clusters)] if clusters else []


def scanned_changes(settings: Settings, engine: Engine, base: GovernanceTree, head: GovernanceTree,
                    stacks: list[StackName], *, limit: int,
                    say: Say | None = None) -> tuple[dict[str, tuple[ResourceChange, ...]] | None, str | None]:
    """Terraform's changes from the live scan when more than `limit` stacks are affected (an
    engine that takes them only), and the comment's note saying so; (None, None) otherwise."""
    from engines.live.scan import scanned_terraform_changes

    if len(stacks) <= limit or not isinstance(engine, TakesScannedChanges):
        return None, None
    changes, scan = scanned_terraform_changes(settings.aws, base, head, stacks,
                                              cache_dir=Path(settings.state_dir) / "graphs")
    if not scan.complete:
        failure = scan.failures[0]
        raise IncompleteScanError(
            f"the live scan for the plan is incomplete ({failure.what}: {failure.failure.kind}: "
            f"{failure.failure.message}); plan again, or with --terraform-max-stacks {len(stacks)} to run "
            "terraform for every stack", failure.failure)
    _say(say, f"{len(stacks)} stacks affected (more than --terraform-max-stacks {limit}): terraform's changes "
              f"from one live scan, {scan.api_calls} API calls in {scan.seconds:.1f} s")
    return changes, _scan_note(len(stacks), limit, scan)


def _scan_note(stacks: int, limit: int, scan: LiveScan) -> str:
    return (f"> **Resource changes from the live scan.** {stacks} stacks are affected, more than "
            f"`--terraform-max-stacks` ({limit}): terraform's changes were decided from one scan of the live objects "
            f"the base applied ({scan.api_calls} API calls in {scan.seconds:.1f} s), diffed with this tree, not by "
            "`terraform plan` per stack. Before applying, the reconciler plans each stack with terraform and refuses "
            "any whose plan differs from what is shown here.")


def keep_reviewed(records: RecordStore, config_dir: Path, plans: Sequence[Plan],
                  scanned: Mapping[str, Sequence[ResourceChange]], *, base_ref: str,
                  say: Say | None = None) -> str | None:
    """Record what this merge request shows, by its config tree's Git id (a clean tree only).
    Where it went, or None."""
    try:
        tree_id = config_tree_id(locate_tree(config_dir))
    except NotInRepositoryError:
        return None
    if tree_id is None:
        _say(say, "reviewed plan not recorded: the tree has uncommitted changes")
        return None
    where = record_reviewed(records, tree_id, plans, base_ref=base_ref,
                            method={p.stack: LIVE_SCAN if p.stack in scanned else p.engine for p in plans})
    _say(say, f"reviewed plan recorded: {where} (the reconciler refuses a stack whose plan of this tree differs)")
    return where
