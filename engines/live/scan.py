"""The live scan of a whole org: every stack's desired objects (its captured graph, cached per
stack input) compared with what list calls return, service by service.

Each service module contributes the units that read its part of the org (`SERVICES`); they all
start from the same `ScanContext`, which holds every stack's desired objects whatever the
filters, because "declared nowhere" (unmanaged) can only be said against all of them. A filter
(stacks) skips the units that cannot report on the chosen stacks and keeps their items only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from engines.aws_clients import AwsClients
from engines.desired import desired_kube_objects, desired_lookups, desired_objects
from engines.graphs import stack_graphs
from engines.kube import KubeApi
from engines.live import (
    budgets,
    eks_read,
    hyperpod_clusters,
    hyperpod_read,
    iam_read,
    identity_center_read,
    kubernetes,
    organizations,
    sns,
)
from engines.live.items import LiveScan
from engines.live.lookups import read_lookups, resolved
from engines.live.runner import (
    DEFAULT_CONCURRENCY,
    CallCounter,
    Pruner,
    ScanContext,
    ScanUnit,
    ServiceClientFor,
    one_client_per_place,
    run_units,
)
from engines.live.scan_plan import scan_changes
from engines.plan import ResourceChange
from engines.settings import AwsSettings
from hypergov.model.tree import GovernanceTree
from stacks.spec import plan_stacks

ServiceScan = Callable[[ScanContext], list[ScanUnit]]
SERVICES: tuple[ServiceScan, ...] = (
    hyperpod_read.units,
    hyperpod_clusters.units,
    iam_read.units,
    eks_read.units,
    identity_center_read.units,
    organizations.units,
    budgets.units,
    sns.units,
    kubernetes.units,
)
PRUNERS: dict[str, Pruner] = {  # DriftItem.type -> how an unmanaged one is deleted
    **hyperpod_read.PRUNERS,
    **eks_read.PRUNERS,
    **organizations.PRUNERS,
    **budgets.PRUNERS,
    **kubernetes.PRUNERS,
    **iam_read.PRUNERS,
    **identity_center_read.PRUNERS,
}
# What a scan leaves unread by design (LiveScan.not_read): not failures.
NOT_READ: tuple[Callable[[ScanContext], list[str]], ...] = (
    kubernetes.not_read,
)


# What terraform manages, read for a plan from the scan (`scan_plan`); the engine plans HyperPod and
# Kubernetes objects itself, without terraform.
TERRAFORM_SERVICES: tuple[ServiceScan, ...] = (
    iam_read.units, eks_read.units, identity_center_read.units, organizations.units, budgets.units, sns.units)


def scan_context(tree: GovernanceTree, *, cache_dir: Path | None, caller_account: str | None = None,
                 kube_apis: Mapping[str, Callable[[], KubeApi]] | None = None,
                 stacks: Collection[str] | None = None, assume_role_name: str = "") -> ScanContext:
    """`kube_apis`: the clusters whose Kubernetes objects are read (`kubernetes.kube_apis_of`);
    `stacks`: only these stacks' desired objects (a plan's; a drift scan needs every stack's);
    `assume_role_name`: the graphs' provider role (the settings' `account_access_role`: the cache
    entries the terraform engine uses too; the desired objects do not depend on it)."""
    specs = tuple(s for s in plan_stacks(tree) if stacks is None or s.name in stacks)
    graphs = stack_graphs(tree, specs, cache_dir, assume_role_name=assume_role_name)
    desired = tuple(o for spec in specs for o in desired_objects(graphs[spec.name]))
    kube = tuple(o for spec in specs for o in desired_kube_objects(graphs[spec.name]))
    lookups = tuple(lk for spec in specs for lk in desired_lookups(graphs[spec.name]))
    return ScanContext(tree=tree, specs=specs, desired=desired, caller_account=caller_account, kube=kube,
                       kube_apis=dict(kube_apis or {}), lookups=lookups)


def scan_with(context: ScanContext, client_for: ServiceClientFor, *, only: Collection[str] | None = None,
              services: Sequence[ServiceScan] = SERVICES, concurrency: int = DEFAULT_CONCURRENCY) -> LiveScan:
    """Run every service's units (those that can report on `only`, when given) and keep the items
    of the chosen stacks."""
    chosen = frozenset(only) if only is not None else frozenset(s.name for s in context.specs)
    calls, client_for = CallCounter(), one_client_per_place(client_for)
    # The programs' reads first (terraform reads its data sources before it plans): the objects
    # made from them are compared with what the reads found.
    # Only AWS units compare objects made from them: a scan of Kubernetes objects alone reads none.
    aws_units = any(u.client is None for service in services for u in service(context)
                    if u.covers is None or u.covers & chosen)
    results, lookup_failures = read_lookups(context.lookups if aws_units else (), client_for, calls,
                                                concurrency=concurrency)
    context = replace(context, desired=resolved(context.desired, results))
    units = [u for service in services for u in service(context) if u.covers is None or u.covers & chosen]
    scan = run_units(units, client_for, stacks=sorted(chosen), concurrency=concurrency, calls=calls)
    scan = replace(scan, failures=(*lookup_failures, *scan.failures),
                   not_read=tuple(note for unread in NOT_READ for note in unread(context)))
    if only is None:
        return scan
    # Every unit run could report on a chosen stack: its failure leaves the scan incomplete, whichever
    # stack it names.
    return replace(scan, items=tuple(i for i in scan.items if i.stack in chosen))


def org_clients(settings: AwsSettings, tree: GovernanceTree) -> tuple[AwsClients, ServiceClientFor, str]:
    """The org's AWS clients as the settings say (the embedded endpoint or AWS; a role assumed in
    member accounts), credentials checked once, as a `ServiceClientFor`, and the home region."""
    org = tree.org.model if tree.org else None
    clients = AwsClients(settings=settings, partition=org.partition if org else "aws")
    home = org.home_region if org else "us-east-1"
    clients.require_credentials()
    return clients, lambda service, account, region: clients.client(service, region=region or home,
                                                                    account=account), home


def scan_tree(settings: AwsSettings, tree: GovernanceTree, *, cache_dir: Path | None,
              only: Collection[str] | None = None, concurrency: int = DEFAULT_CONCURRENCY,
              kube_apis: Mapping[str, Callable[[], KubeApi]] | None = None) -> LiveScan:
    """The live scan of the org, with clients as the settings say (the embedded endpoint or AWS;
    a role assumed in member accounts) and the clusters' Kubernetes APIs of `kube_apis`
    (`kubernetes.kube_apis_of(settings.kubeconfigs)`)."""
    clients, client_for, home = org_clients(settings, tree)
    context = scan_context(tree, cache_dir=cache_dir, caller_account=clients.caller_account(home),
                           kube_apis=kube_apis, assume_role_name=settings.account_access_role)
    return scan_with(context, client_for, only=only, concurrency=concurrency)


def scanned_terraform_changes(settings: AwsSettings, base: GovernanceTree | None, head: GovernanceTree,
                              stacks: Sequence[str], *, cache_dir: Path | None,
                              concurrency: int = DEFAULT_CONCURRENCY) -> tuple[dict[str, tuple[ResourceChange, ...]],
                                                                              LiveScan]:
    """Terraform's changes for `stacks` of `head` decided from one live scan (`scan_plan`): the base
    tree's desired objects stand for terraform's state (what was applied) and are what the scan
    reads back, as terraform's refresh does; the head's are its configuration. The base's graphs
    are cached (its plan made them), so the scan starts at once, while the head's graphs, new
    after an edit, are captured in worker processes beside it. The scan is returned too: an
    incomplete one decides nothing."""
    role = settings.account_access_role  # the engine's graphs: it plans the same stacks from the cache next
    head_specs = [s for s in plan_stacks(head) if s.name in set(stacks)]
    scan = LiveScan(items=(), failures=(), api_calls=0, seconds=0.0, scanned_at="", stacks=tuple(sorted(stacks)))
    context: ScanContext | None = None  # no base: nothing applied, every object a create
    if base is not None:  # credentials checked and the base's cached graphs read before the capture starts
        clients, client_for, home = org_clients(settings, base)
        context = scan_context(base, cache_dir=cache_dir, caller_account=clients.caller_account(home), stacks=stacks,
                               assume_role_name=role)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="head-graphs") as background:
        head_graphs = background.submit(stack_graphs, head, head_specs, cache_dir, assume_role_name=role)
        if context is not None:
            scan = scan_with(context, client_for, only=stacks, services=TERRAFORM_SERVICES, concurrency=concurrency)
        desired = [o for g in head_graphs.result().values() for o in desired_objects(g)]
    applied = context.desired if context is not None else ()
    return scan_changes(stacks, applied, desired, scan.items), scan
