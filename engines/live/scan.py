"""The live scan of a whole org: every stack's desired objects (its captured graph, cached per
stack input) compared with what list calls return, service by service.

Each service module contributes the units that read its part of the org (`SERVICES`); they all
start from the same `ScanContext`, which holds every stack's desired objects whatever the
filters, because "declared nowhere" (unmanaged) can only be said against all of them. A filter
(stacks) skips the units that cannot report on the chosen stacks and keeps their items only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

from engines.aws_clients import AwsClients
from engines.live import budgets, eks_read, hyperpod_read, iam_read, organizations, sns
from engines.live.desired import desired_objects
from engines.live.graphs import stack_graphs
from engines.live.items import LiveScan
from engines.live.runner import DEFAULT_CONCURRENCY, Pruner, ScanContext, ScanUnit, ServiceClientFor, run_units
from engines.settings import AwsSettings
from hypergov.model.tree import GovernanceTree
from stacks.spec import plan_stacks

ServiceScan = Callable[[ScanContext], list[ScanUnit]]
SERVICES: tuple[ServiceScan, ...] = (
    hyperpod_read.units,
    iam_read.units,
    eks_read.units,
    organizations.units,
    budgets.units,
    sns.units,
)
PRUNERS: dict[str, Pruner] = {  # DriftItem.type -> how an unmanaged one is deleted
    **hyperpod_read.PRUNERS,
    **eks_read.PRUNERS,
    **organizations.PRUNERS,
    **budgets.PRUNERS,
    **iam_read.PRUNERS,
}


def scan_context(tree: GovernanceTree, *, cache_dir: Path | None, caller_account: str | None = None) -> ScanContext:
    specs = tuple(plan_stacks(tree))
    graphs = stack_graphs(tree, specs, cache_dir)
    desired = tuple(o for spec in specs for o in desired_objects(graphs[spec.name]))
    return ScanContext(tree=tree, specs=specs, desired=desired, caller_account=caller_account)


def scan_with(context: ScanContext, client_for: ServiceClientFor, *, only: Collection[str] | None = None,
              services: Sequence[ServiceScan] = SERVICES, concurrency: int = DEFAULT_CONCURRENCY) -> LiveScan:
    """Run every service's units (those that can report on `only`, when given) and keep the items
    of the chosen stacks."""
    chosen = frozenset(only) if only is not None else frozenset(s.name for s in context.specs)
    units = [u for service in services for u in service(context) if u.covers is None or u.covers & chosen]
    scan = run_units(units, client_for, stacks=sorted(chosen), concurrency=concurrency)
    if only is None:
        return scan
    # Every unit run could report on a chosen stack: its failure leaves the scan incomplete, whichever
    # stack it names.
    return replace(scan, items=tuple(i for i in scan.items if i.stack in chosen))


def scan_tree(settings: AwsSettings, tree: GovernanceTree, *, cache_dir: Path | None,
              only: Collection[str] | None = None, concurrency: int = DEFAULT_CONCURRENCY) -> LiveScan:
    """The live scan of the org, with clients as the settings say (the embedded endpoint or AWS;
    a role assumed in member accounts)."""
    org = tree.org.model if tree.org else None
    clients = AwsClients(settings=settings, partition=org.partition if org else "aws")
    home = org.home_region if org else "us-east-1"
    clients.require_credentials()
    context = scan_context(tree, cache_dir=cache_dir, caller_account=clients.caller_account(home))
    return scan_with(context, lambda service, account, region: clients.client(service, region=region or home,
                                                                                account=account),
                     only=only, concurrency=concurrency)
