"""From a validated governance tree to the accounting's pools: per cluster, instance type and
kind, the capacity, each team's guarantee (in the kind's units), its sharing strategy and whether
the cluster lends capacity nobody is guaranteed; and each pool's price per unit-hour from the
org's `pricing`. The only module of the package that reads the config models (as
`capacity.adapter` is for the simulator)."""

from __future__ import annotations

from decimal import Decimal

from components import arns
from components.kueue import accelerator_resource
from hypergov.kube_resources import NVIDIA_GPU
from hypergov.model.cluster import Cluster, UnknownAccelerators
from hypergov.model.instance_specs import instance_spec
from hypergov.model.org import Pricing
from hypergov.model.project import QuotaAmount
from hypergov.model.tree import GovernanceTree
from hypergov.stack_views import EffectiveQuota, effective_quota
from usage.accounting import Pool
from usage.budget_alerts import AccountBudget, ProjectBudget, TreeBudgets
from usage.prices import InstanceRate, NoPrice, PoolKey, PoolPrices, UnitPrice, unit_price
from usage.resources import MILLICORES, UNITS, QuantityError, ResourceKind, mig_units


class AdapterError(Exception):
    """The tree lacks something the accounting needs (reported to the user as is)."""


def pools_for_tree(tree: GovernanceTree) -> list[Pool]:
    return [pool for name in sorted(tree.clusters) for pool in cluster_pools(tree, name)]


def cluster_pools(tree: GovernanceTree, cluster_name: str) -> list[Pool]:
    """One accelerator pool per GPU or Trainium instance type and one vCPU pool per instance type
    whose vCPUs are known (hypergov.model.instance_specs)."""
    sourced = tree.clusters.get(cluster_name)
    if sourced is None:
        raise AdapterError(f"cluster '{cluster_name}' is not in the tree; clusters: {', '.join(sorted(tree.clusters))}")
    cluster = sourced.model
    quotas = {team: effective_quota(team, project.model, cluster_name, cluster)
              for team, project in sorted(tree.projects.items()) if cluster_name in project.model.quotas}
    pools: list[Pool] = []
    for itype, capacity in sorted(cluster.capacity.items()):
        accelerators = _accelerators(cluster, itype)
        if accelerators > 0:
            kind = ResourceKind.GPU if accelerator_resource(itype) == NVIDIA_GPU else ResourceKind.NEURON_DEVICE
            guarantees = {team: _accelerator_units(q, itype, kind) for team, q in quotas.items()}
            pools.append(_pool(cluster, cluster_name, itype, kind, capacity.instances * accelerators * UNITS[kind],
                               guarantees, quotas))
        spec = instance_spec(itype)
        if spec is not None:
            guarantees = {team: _vcpu_units(q, itype, spec.vcpu, accelerators) for team, q in quotas.items()}
            pools.append(_pool(cluster, cluster_name, itype, ResourceKind.VCPU,
                               capacity.instances * spec.vcpu * MILLICORES, guarantees, quotas))
    return pools


def prices_for_tree(tree: GovernanceTree) -> PoolPrices:
    """Every pool of `pools_for_tree` with its price per
    unit-hour from org.yaml's `pricing`, or why it has none (SEMANTICS.md C1, C2). Without a
    `pricing` section every pool is unpriced, in the default currency."""
    pricing = (tree.org.model.pricing if tree.org is not None else None) or Pricing()
    rates = {itype: InstanceRate(p.per_instance_hour, p.purchase_option)
             for itype, p in pricing.instance_types.items()}
    found: dict[PoolKey, UnitPrice | NoPrice] = {}
    for pool in pools_for_tree(tree):
        cluster = tree.clusters[pool.cluster].model
        spec = instance_spec(pool.instance_type)
        found[pool.key] = unit_price(pool.key, rates.get(pool.instance_type), currency=pricing.currency,
                                     accelerators=_accelerators(cluster, pool.instance_type),
                                     vcpus=spec.vcpu if spec is not None else None)
    return PoolPrices(pricing.currency, found)


def org_rates(tree: GovernanceTree) -> tuple[str, dict[str, tuple[Decimal, str]]]:
    """org.yaml's currency, and its (price per instance-hour, purchase option) per instance type."""
    pricing = (tree.org.model.pricing if tree.org is not None else None) or Pricing()
    return pricing.currency, {itype: (p.per_instance_hour, p.purchase_option)
                              for itype, p in pricing.instance_types.items()}


def instance_type_regions(tree: GovernanceTree) -> dict[str, set[str]]:
    """Every instance type the tree's clusters run, with the regions of the clusters that run it."""
    found: dict[str, set[str]] = {}
    if tree.org is None:
        return found
    for pool in pools_for_tree(tree):
        region = arns.cluster_region(tree.org.model, tree.clusters[pool.cluster].model)
        found.setdefault(pool.instance_type, set()).add(region)
    return found


def budgets_for_tree(tree: GovernanceTree) -> TreeBudgets:
    """Every project budget, split over its accounts and routed to the topics exactly as the
    project's AWS Budgets are (`components.project.budget_limits`, `arns.budget_topic_arn`), and
    every cluster's account (SEMANTICS.md C9)."""
    # The project component imports Pulumi: loaded only when budgets are asked for, not by reports.
    from components.project import budget_limits
    from hypergov.stack_views import ProjectView, stack_view

    if tree.org is None:
        return TreeBudgets((), {})
    org = tree.org.model
    clusters = {name: arns.account_id(org, c.model.account) for name, c in sorted(tree.clusters.items())}
    projects: list[ProjectBudget] = []
    for team, project in sorted(tree.projects.items()):
        budget = project.model.budget
        if budget is None:
            continue
        view = stack_view(tree, "project", team)
        assert isinstance(view, ProjectView)  # a project's stack view is one
        parts = tuple(AccountBudget(acct, Decimal(limit), arns.budget_topic_arn(view.org, acct))
                      for acct, limit in budget_limits(view).items())
        projects.append(ProjectBudget(team, Decimal(budget.monthly_usd), tuple(sorted(set(budget.alert_at_percent))),
                                      parts))
    return TreeBudgets(tuple(projects), clusters)


def _pool(cluster: Cluster, cluster_name: str, itype: str, kind: ResourceKind, capacity: int,
          guarantees: dict[str, int], quotas: dict[str, EffectiveQuota]) -> Pool:
    return Pool(cluster=cluster_name, instance_type=itype, kind=kind, capacity=capacity,
                guarantees={team: units for team, units in guarantees.items() if units > 0},
                sharing={team: q.sharing for team, q in quotas.items()},
                shares_idle=cluster.scheduler.idle_resource_sharing)


def _accelerators(cluster: Cluster, itype: str) -> int:
    try:
        return cluster.known_accelerators(itype)
    except UnknownAccelerators as error:
        raise AdapterError(str(error)) from error


def _accelerator_units(quota: EffectiveQuota, itype: str, kind: ResourceKind) -> int:
    """Whole accelerators, or MIG partitions as their share of a GPU (SEMANTICS.md U3)."""
    amount = quota.resources.get(itype)
    if kind is ResourceKind.GPU and amount is not None and amount.partition is not None:
        try:
            return amount.partition.count * mig_units(itype, amount.partition.profile)
        except QuantityError as error:
            raise AdapterError(str(error)) from error
    return quota.gpus(itype) * UNITS[kind]


def _vcpu_units(quota: EffectiveQuota, itype: str, vcpus: int, accelerators: int) -> int:
    """Millicores guaranteed: vCPU as written; whole instances' vCPUs; accelerators by SageMaker's
    ratio (accelerators / accelerators per instance of the instance's vCPUs); none for MIG
    partitions or memory alone (their vCPU share is SageMaker's to derive, not written)."""
    if itype in quota.instances:
        return quota.instances[itype] * vcpus * MILLICORES
    amount: QuotaAmount | None = quota.resources.get(itype)
    if amount is None:
        return 0
    if amount.vcpu is not None:
        return int(amount.vcpu * MILLICORES)
    if amount.accelerators is not None and accelerators > 0:
        return amount.accelerators * vcpus * MILLICORES // accelerators
    return 0
