"""The terraform engine: plan / apply / refresh of one stack.

Per stack: capture the Pulumi graph (in-process, under mocks), translate its `aws:*` resources
to Terraform JSON in the stack's own directory (own state, own saved plan), run the real
`terraform`; HyperPod task-governance objects go through the boto3 driver and Kubernetes objects
through server-side apply (or are reported as not applied without a kubeconfig). Apply runs
exactly the saved plan and the decisions shown: it refuses when their hash is not the one that
was reviewed. What a stack owns outside terraform's state is kept in its inventory
(`engines.inventory`), so that a destroy removes it too.

Graph capture touches Pulumi's process-global runtime: `plan_many` takes its stacks' graphs from
`engines.graphs.stack_graphs` first (cached under `<state_dir>/graphs/` by stack input, the
misses captured in worker processes; shared with the live scan), then prepares the stacks one
after the other; the terraform processes then run in parallel, bounded by the settings.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from engines.desired import desired_objects as aws_objects
from engines.graphs import capture, stack_graphs
from engines.hyperpod.executor import HyperPodExecutor, HyperPodRef, PlannedObject, desired_objects, to_change
from engines.identity_members import Exists, identity_store_exists, missing_message, stack_members
from engines.identity_store import identity_store_client
from engines.inventory import Inventory, owned, read_inventory, write_inventory
from engines.kube import KubeApi, KubeDecision, KubeObject, apply_decisions, declared_objects, plan_objects
from engines.outcomes import Failure, Refusal, classify, guarded, permanent
from engines.plan import Action, ApplyResult, Drift, DriftOutcome, Plan, PlanOutcome, ResourceChange, StackName
from engines.protocol import Progress
from engines.schedule import apply_in_dependency_order, run_in_parallel
from engines.settings import Settings
from engines.showplan import changes_from_show, drift_from_show, unchanged_from_config
from engines.terraform.adoption import IMPORTS_FILE, Clients, find_imports, imports_config
from engines.terraform.backend import S3State
from engines.terraform.errors import TerraformError
from engines.terraform.runner import Runner
from engines.terraform.state_home import CONFIG_FILE, StateHome
from engines.terraform.translate import translate
from engines.terraform.workspace import Workspace
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import ClusterView, StackView, stack_view
from stacks.resource_graph import ResourceGraph
from stacks.spec import StackSpec, find_stack, plan_stacks

T = TypeVar("T")
PLAN_FILE = "hypergov.tfplan"
GRAPHS_DIR = "graphs"  # under the state directory: `engines.graphs`' cache
MEMBER_CHECKS_AT_ONCE = 4  # stacks whose Identity Center members are looked up at once, beside their plans
REMOVED = "stack removed from the tree"
FROM_LIVE_SCAN = ("terraform's changes from the live scan, not `terraform plan` (more stacks affected than "
                  "--terraform-max-stacks); the reconciler's terraform plan is compared with them before applying")
NO_INVENTORY = ("no inventory (last applied by a hypergov that kept none): only terraform's state is destroyed; "
                "delete the stack's HyperPod and Kubernetes objects by hand")


@dataclass
class PreparedStack:
    stack: StackName
    directory: Path
    graph: ResourceGraph
    view: StackView | None = None  # None for a stack that left the tree (a destroy)
    kube_objects: dict[str, list[KubeObject]] = field(default_factory=dict)  # cluster -> objects
    terraform_resources: int = 0


@dataclass
class _PlanState:
    """What apply carries out: exactly the decisions that were shown."""

    plan: Plan
    hyperpod: list[PlannedObject]
    kube: list[KubeDecision]


@dataclass
class TerraformEngine:
    """The `Engine` of the real `terraform`, the HyperPod driver and server-side apply."""

    settings: Settings
    tree: GovernanceTree
    workspace: Workspace
    runner: Runner  # the terraform binary, or the AWS provider spoken to directly (`provider_runner`)
    hyperpod: HyperPodExecutor
    kube_api_for: Callable[[str], KubeApi | None]
    source_commit: str | None = None
    # Reads whether an object terraform would create is live already (then it is imported,
    # `engines.terraform.adoption`); None: never adopt (every create is a create).
    adopt_with: Clients | None = None
    # Every stack's state in S3 (`engines.terraform.backend`) and the client that reads it; None: local.
    state: S3State | None = None
    s3: Any = None
    name: str = "terraform"  # "provider" with the provider runner: recorded in plans and audit records
    _planned: dict[str, _PlanState] = field(default_factory=dict)
    _specs: dict[str, StackSpec] = field(default_factory=dict)  # the tree's stacks by name, built once
    _member_exists: Exists | None = None  # the identity store's answers, made once (`_unknown_members`)
    _member_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def stacks_at_once(self) -> int:
        """Stacks planned or applied at once (`Settings.stacks_at_once` of this engine's name)."""
        return self.settings.stacks_at_once(self.name)

    @property
    def home(self) -> StateHome:
        return StateHome(self.state, self.s3)

    def _spec(self, stack: StackName) -> StackSpec:
        if not self._specs:
            self._specs.update((s.name, s) for s in plan_stacks(self.tree))
        spec = self._specs.get(stack)
        return spec if spec is not None else find_stack(self.tree, stack)  # find_stack says which exist

    # --- plan ----------------------------------------------------------------------------------
    def prepare(self, stack: StackName, graph: ResourceGraph | None = None) -> PreparedStack:
        """`graph`: the stack's graph when already captured (`graphs`), else captured here."""
        spec = self._spec(stack)
        view = stack_view(self.tree, spec.kind, spec.subject)
        if graph is None:
            graph = capture(view, stack, assume_role_name=self.settings.aws.account_access_role)
        translation = translate(graph.resources, aws=self.settings.aws,
                                provider_version=self.settings.terraform.provider_version,
                                default_region=view.org.home_region)
        if self.state is not None:
            translation.config["terraform"]["backend"] = self.state.backend_block(stack, self.settings.aws)
        directory = self.workspace.stack_dir(stack)
        _write_if_changed(directory / CONFIG_FILE, translation.json())
        return PreparedStack(stack=stack, directory=directory, graph=graph, view=view,
                             kube_objects=declared_objects(graph.resources, stack=stack),
                             terraform_resources=sum(len(v) for v in translation.config.get("resource", {}).values()))

    def graphs(self, stacks: Sequence[StackName]) -> dict[str, ResourceGraph]:
        """The stacks' graphs from the shared cache, misses captured in worker processes; empty when
        that fails (e.g. an unknown stack): each stack is then captured in its own boundary, which
        says what failed for which."""
        try:
            return stack_graphs(self.tree, [self._spec(s) for s in stacks], Path(self.settings.state_dir) / GRAPHS_DIR,
                                assume_role_name=self.settings.aws.account_access_role)
        except Exception:  # the boundary is per stack, below
            return {}

    def plan(self, stack: StackName) -> Plan:
        """One stack, raising on failure (tests and scripts; runs use `plan_many`)."""
        return self.plan_prepared(self.prepare(stack))

    def plan_many(self, stacks: Sequence[StackName], *, destroy: Sequence[StackName] = (),
                  progress: Progress[PlanOutcome] | None = None,
                  scanned: Mapping[str, Sequence[ResourceChange]] | None = None) -> dict[StackName, PlanOutcome]:
        """`scanned`: per stack, terraform's changes as the live scan decided them
        (`engines.live.scan_plan`); those stacks run no terraform and their plans are for review
        only (apply refuses them)."""
        # Graph capture touches Pulumi's process-global runtime: batched in worker processes, then
        # prepared one after the other, each inside its own boundary; terraform then runs in parallel.
        graphs = self.graphs(stacks)
        prepared = {s: guarded(lambda stack: self.prepare(stack, graphs.get(stack)), s) for s in stacks}

        def work(stack: StackName, checks: ThreadPoolExecutor) -> Plan:
            if stack in destroy:
                return self.plan_destroy(stack)
            ready = prepared[stack]
            if isinstance(ready, Failure):
                raise _Failed(ready)
            # The identity store is asked beside the plan (its client's first answer costs a fresh
            # process ~0.1-0.3 s, a third of a one-stack plan on the provider engine). A member it
            # lacks is the stack's outcome whatever the plan did: its lookups fail then too.
            unknown = checks.submit(self._unknown_members, stack)
            try:
                plan = self.plan_prepared(ready, scanned=(scanned or {}).get(stack))
            except Exception:
                _fail_if_unknown(unknown.result())
                raise
            _fail_if_unknown(unknown.result())
            return plan

        with ThreadPoolExecutor(max_workers=MEMBER_CHECKS_AT_ONCE, thread_name_prefix="members") as checks:
            return run_in_parallel([*stacks, *destroy], lambda stack: work(stack, checks),
                                   parallelism=self.stacks_at_once, progress=progress)

    def _unknown_members(self, stack: StackName) -> Failure | None:
        """The stack's Identity Center members the identity store lacks, as a failure naming where
        the tree names them (`engines.identity_members`); None when all exist (or none is named)."""
        org = self.tree.org.model if self.tree.org else None
        members = stack_members(self.tree, self._spec(stack))
        if not members or org is None or org.identity_center is None or self.adopt_with is None:
            return None
        ic = org.identity_center
        with self._member_lock:  # stacks are checked side by side: one client for them all
            if self._member_exists is None:
                client = identity_store_client(self.adopt_with, org)
                self._member_exists = identity_store_exists(client, ic.identity_store_id)
            exists = self._member_exists
        missing = [m for m in members if not exists(m.principal)]
        if not missing:
            return None
        return permanent(missing_message(missing, store=ic.identity_store_id), "unknown-member")

    def plan_scanned(self, stacks: Sequence[StackName], *, scanned: Mapping[str, Sequence[ResourceChange]],
                     destroy: Sequence[StackName] = (),
                     progress: Progress[PlanOutcome] | None = None) -> dict[StackName, PlanOutcome]:
        """`engines.protocol.TakesScannedChanges`: `plan_many` with the live scan's changes."""
        return self.plan_many(stacks, destroy=destroy, progress=progress, scanned=scanned)

    def break_dead_lock(self, stack: StackName, *, lease_taken_at: datetime) -> str | None:
        """`terraform force-unlock -force <ID>` of the stack's S3 `.tflock` when its holder is
        provably dead (`StateHome.dead_lock`: the caller took the stack's lease from a holder whose
        lease expired, and the lock is older than that). The ID unlocked, or None."""
        lock = self.home.dead_lock(stack, lease_taken_at=lease_taken_at)
        if lock is None:
            return None
        directory = self.workspace.stack_dir(stack)
        if not (directory / CONFIG_FILE).exists():
            self.prepare(stack)
        self.runner.init(directory)
        self.runner.force_unlock(directory, lock.id)
        return lock.id

    def plan_prepared(self, prepared: PreparedStack, *, scanned: Sequence[ResourceChange] | None = None) -> Plan:
        directory = prepared.directory
        if scanned is not None:
            (directory / PLAN_FILE).unlink(missing_ok=True)  # no terraform plan of this tree exists to apply
            tf_changes: Sequence[ResourceChange] = tuple(scanned)
        else:  # nothing for terraform (e.g. a cluster stack: driver objects only): skip its ~5 s start
            _forget_imports(directory)  # decided again below, from what is live now
            tf_changes = self._terraform_plan(directory,
                                              run=bool(prepared.terraform_resources) or self._has_state(directory))
            tf_changes = self._adopt(prepared, tf_changes)
        inventory = read_inventory(directory)
        known = inventory or Inventory()
        hyperpod = self._plan_hyperpod(prepared.view, prepared.graph, known.hyperpod)
        kube = self._plan_kube(prepared.stack, prepared.kube_objects, known)
        if inventory is None:  # applied by a hypergov that kept none (or never): record what is live now
            write_inventory(directory, owned(((p, p.observed is not None) for p in hyperpod),
                                             ((d, _live_or_unseen(d)) for d in kube)))
        return self._remember(prepared.stack, directory, tf_changes, hyperpod, kube,
                              notes=(FROM_LIVE_SCAN,) if scanned is not None else ())

    def _adopt(self, prepared: PreparedStack, tf_changes: tuple[ResourceChange, ...]) -> tuple[ResourceChange, ...]:
        """The plan again with `import` blocks when objects it would create are live already;
        the first plan unchanged when none is (one read per create, no second terraform plan)."""
        creates = [c.address for c in tf_changes if c.action is Action.CREATE]
        if self.adopt_with is None or not creates:
            return tf_changes
        directory = prepared.directory
        partition = self.tree.org.model.partition if self.tree.org else "aws"
        found = find_imports(creates, json.loads((directory / CONFIG_FILE).read_text()),
                             {o.address: o for o in aws_objects(prepared.graph)},
                             clients=self.adopt_with, partition=partition)
        if not found:
            return tf_changes
        (directory / IMPORTS_FILE).write_text(json.dumps(imports_config(found), indent=2, sort_keys=True) + "\n")
        return self._terraform_plan(directory, run=True)

    def plan_destroy(self, stack: StackName) -> Plan:
        """Plan the removal of everything a stack that lost its source in the tree still owns:
        terraform's `plan -destroy` of its state, and a delete of every object of its inventory
        that is still live (HyperPod objects through the driver, Kubernetes objects by label).
        Its directory keeps the last configuration, state and inventory."""
        directory = self.workspace.stack_dir(stack)
        self.home.restore(directory)
        inventory = read_inventory(directory)
        if not (directory / CONFIG_FILE).exists() and inventory is None:
            return self._remember(stack, directory, (), [], [], notes=("nothing was ever applied",))
        _forget_imports(directory)
        tf_changes = self._terraform_plan(directory, run=self._has_state(directory), destroy=True)
        known = inventory or Inventory()
        hyperpod = self.hyperpod.plan([], owned_suffixes={}, inventoried=known.hyperpod) if known.hyperpod else []
        kube = self._plan_kube(stack, {}, known)
        return self._remember(stack, directory, tf_changes, hyperpod, kube,
                              notes=(REMOVED,) if inventory is not None else (REMOVED, NO_INVENTORY))

    def _terraform_plan(self, directory: Path, *, run: bool, destroy: bool = False) -> tuple[ResourceChange, ...]:
        if not run:
            (directory / PLAN_FILE).unlink(missing_ok=True)  # no stale plan file may be applied or hashed
            return ()
        self.runner.init(directory)
        if not self.runner.plan(directory, out=PLAN_FILE, destroy=destroy,
                                lock=self.settings.terraform.lock_while_planning,
                                refresh=self.settings.terraform.refresh_while_planning):
            # `-detailed-exitcode` 0: nothing to do. `show -json` (a provider start, ~2-3 s) would
            # only list every configured resource as a no-op; a destroy with nothing left, none.
            return () if destroy else unchanged_from_config(json.loads((directory / CONFIG_FILE).read_text()))
        return changes_from_show(self.runner.show_json(directory, PLAN_FILE))

    def _remember(self, stack: StackName, directory: Path, tf_changes: Sequence[ResourceChange],
                  hyperpod: list[PlannedObject], kube: list[KubeDecision], *, notes: tuple[str, ...] = ()) -> Plan:
        """The plan of these decisions, kept (with the decisions) for `apply`."""
        changes = (*tf_changes, *(to_change(p) for p in hyperpod), *(d.change for d in kube))
        plan = Plan(stack=stack, engine=self.name, changes=changes, source_commit=self.source_commit,
                    artifact_sha256=_artifact_hash(directory, hyperpod, kube), notes=notes)
        self._planned[stack] = _PlanState(plan, hyperpod, kube)
        return plan

    def _has_state(self, directory: Path) -> bool:
        return self.home.holds_resources(directory)

    def known_stacks(self) -> list[StackName]:
        """Stacks planned or applied at some point (`StateHome.stacks`)."""
        return sorted(StackName(s) for s in self.home.stacks(self.workspace.root / "stacks"))

    def _plan_hyperpod(self, view: StackView | None, graph: ResourceGraph,
                       inventoried: Sequence[HyperPodRef]) -> list[PlannedObject]:
        desired = desired_objects(graph.resources)
        suffixes = {}
        if isinstance(view, ClusterView) and view.hyperpod_arn:
            # Quotas of teams that left the cluster, also those no inventory names (applied
            # before inventories were kept, or by hand under hypergov's name).
            suffixes[view.hyperpod_arn] = view.owned_quota_suffix
        if not (desired or suffixes or inventoried):
            return []
        return self.hyperpod.plan(desired, owned_suffixes=suffixes, inventoried=inventoried)

    def _plan_kube(self, stack: StackName, declared: dict[str, list[KubeObject]],
                   known: Inventory) -> list[KubeDecision]:
        """Per cluster the stack declares objects on or has inventoried objects on (a project that
        left a cluster still owns its objects there until they are pruned)."""
        return [d for cluster in sorted({*declared, *known.clusters()})
                for d in plan_objects(declared.get(cluster, []), cluster=cluster, stack=stack,
                                      api=self.kube_api_for(cluster), inventoried=known.kube_on(cluster))]

    # --- apply ---------------------------------------------------------------------------------
    def apply(self, stack: StackName, plan: Plan) -> ApplyResult:
        state = self._planned.get(stack)
        directory = self.workspace.stack_dir(stack)
        if state is None or state.plan.fingerprint() != plan.fingerprint():
            return ApplyResult(stack=stack, refusal=Refusal("stale plan",
                                                            "this plan was not made by this run; plan again"))
        if FROM_LIVE_SCAN in plan.notes:
            return ApplyResult(stack=stack, refusal=Refusal(
                "review only", "a plan from the live scan is for review only; plan with terraform to apply"))
        if _artifact_hash(directory, state.hyperpod, state.kube) != plan.artifact_sha256:
            return ApplyResult(stack=stack, refusal=Refusal(
                "stale plan", "the saved plan changed since it was reviewed; plan again"))
        skipped = tuple(c for c in plan.changes if c.note)
        if plan.is_empty:
            return ApplyResult(stack=stack, skipped=skipped)
        failed: list[tuple[ResourceChange, Failure]] = []
        tf_changes = [c for c in plan.actionable if c.executor == "terraform"]
        if tf_changes:
            try:
                self.runner.apply(directory, PLAN_FILE)
                _forget_imports(directory)  # the imported objects are in the state now
            except TerraformError as exc:
                # Terraform records what it did create in the stack's state; the next plan
                # shows exactly what is left, so the error is reported once, not per resource.
                return ApplyResult(stack=stack, error=exc.failure)
        deleted: set[HyperPodRef] = set()
        for item, error in self.hyperpod.apply(state.hyperpod):
            if error:
                failed.append((to_change(item), error))
            elif item.change.action == "delete":
                deleted.add(item.ref)
        applied_kube = self._apply_kube(state.kube, failed)
        pruned = {(cluster, c.address) for cluster, c in applied_kube if c.action is Action.DELETE}
        applied = tuple(c for c in plan.actionable if c.executor in ("terraform", "hyperpod")
                        and c.address not in {f.address for f, _ in failed}) + tuple(c for _, c in applied_kube)
        # What exists now: everything planned but what was deleted (a failed delete is retried).
        error = _record(directory, owned(((p, p.ref not in deleted) for p in state.hyperpod),
                                         ((d, (d.cluster, d.change.address) not in pruned) for d in state.kube)))
        if error is None:
            try:
                self.home.keep(directory)
            except Exception as exc:
                error = permanent(f"applied, but keeping the stack's configuration beside its S3 state failed: "
                                  f"{classify(exc).message}", "state-backend")
        return ApplyResult(stack=stack, applied=applied, failed=tuple(failed), skipped=skipped, error=error)

    def apply_many(self, plans: Sequence[Plan], *, on_start: Callable[[StackName], None] | None = None,
                   on_done: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None) -> list[ApplyResult]:
        """In dependency order: the org, then the clusters side by side, then the projects."""
        return apply_in_dependency_order(
            plans, depends_on={s.name: s.depends_on for s in plan_stacks(self.tree)},
            apply_one=lambda plan: self.apply(plan.stack, plan), parallelism=self.stacks_at_once,
            on_start=on_start, on_done=on_done, stop=stop)

    def _apply_kube(self, decisions: Sequence[KubeDecision],
                    failed: list[tuple[ResourceChange, Failure]]) -> list[tuple[str, ResourceChange]]:
        """(cluster, change) of every Kubernetes change carried out; failures appended to `failed`."""
        applied: list[tuple[str, ResourceChange]] = []
        for cluster in sorted({d.cluster for d in decisions}):
            api = self.kube_api_for(cluster)
            if api is not None:  # without one every decision is marked not applied
                done, errors = apply_decisions([d for d in decisions if d.cluster == cluster], api)
                applied += [(cluster, c) for c in done]
                failed += errors
        return applied

    # --- drift ---------------------------------------------------------------------------------
    def refresh(self, stack: StackName) -> Drift:
        """One stack, raising on failure (tests and scripts; runs use `refresh_many`)."""
        return self._refresh(self._prepared_dir(stack))

    def refresh_many(self, stacks: Sequence[StackName], *,
                     progress: Progress[DriftOutcome] | None = None) -> dict[StackName, DriftOutcome]:
        """Drift of many stacks, their refresh-only plans `terraform.parallelism` at a time."""
        directories = {s: guarded(self._prepared_dir, s) for s in stacks}  # graph capture: one at a time

        def work(stack: StackName) -> Drift:
            ready = directories[stack]
            if isinstance(ready, Failure):
                raise _Failed(ready)
            return self._refresh(ready)

        return run_in_parallel(stacks, work, parallelism=self.stacks_at_once, progress=progress)

    def _prepared_dir(self, stack: StackName) -> Path:
        directory = self.workspace.stack_dir(stack)
        if not (directory / CONFIG_FILE).exists():
            self.prepare(stack)
        return directory

    def _refresh(self, directory: Path) -> Drift:
        stack = StackName(directory.name)
        if not self._has_state(directory):  # never applied: nothing live to drift (its plan shows the creates)
            return Drift(stack=stack)
        _forget_imports(directory)  # a refresh reads what the state holds, it adopts nothing
        self.runner.init(directory)
        self.runner.plan(directory, out="hypergov-refresh.tfplan", refresh_only=True,
                         lock=self.settings.terraform.lock_while_planning)
        drift = drift_from_show(self.runner.show_json(directory, "hypergov-refresh.tfplan"),
                                declared=_declared_attributes(directory / CONFIG_FILE))
        return Drift(stack=stack, changes=drift)


def _fail_if_unknown(unknown: Failure | None) -> None:
    if unknown is not None:
        raise _Failed(unknown)


class _Failed(Exception):
    """Carries a failure already classified in an earlier phase (e.g. graph capture) into the next."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _live_or_unseen(decision: KubeDecision) -> bool:
    """Whether a planned object may exist now: all but a create on a cluster hypergov can see."""
    return not (decision.change.action is Action.CREATE and decision.change.note is None)


def _record(directory: Path, inventory: Inventory) -> Failure | None:
    """Write the inventory after an apply; failing to is the stack's error (a later destroy
    would not know what the apply created), not a reason to hide what was applied."""
    try:
        write_inventory(directory, inventory)
    except OSError as exc:
        return permanent(f"applied, but recording the stack's inventory failed: {classify(exc).message}",
                         "inventory")
    return None


def _declared_attributes(config_file: Path) -> dict[str, frozenset[str]]:
    config = json.loads(config_file.read_text())
    return {f"{rtype}.{name}": frozenset(body) for rtype, bodies in config.get("resource", {}).items()
            for name, body in bodies.items()}


def _forget_imports(directory: Path) -> None:
    (directory / IMPORTS_FILE).unlink(missing_ok=True)


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _artifact_hash(directory: Path, hyperpod: Sequence[PlannedObject], kube: Sequence[KubeDecision]) -> str:
    """What apply must find unchanged: terraform's config and saved plan, the driver's decisions
    and the Kubernetes decisions with the exact bodies they send."""
    digest = hashlib.sha256()
    for name in (CONFIG_FILE, IMPORTS_FILE, PLAN_FILE):
        target = directory / name
        digest.update(target.read_bytes() if target.exists() else b"")
    decisions: list[Any] = [[p.kind.noun, p.name, p.change.action, list(p.change.changed)] for p in hyperpod]
    decisions += [d.digest() for d in kube]
    digest.update(json.dumps(decisions, sort_keys=True).encode())
    return digest.hexdigest()
