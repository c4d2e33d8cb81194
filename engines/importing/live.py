"""What an import read from the live org, as plain values (the input of `engines.importing.decide`).

Shapes are the APIs' own: a compute quota's `ComputeQuotaConfig` and `ComputeQuotaTarget` as
ListComputeQuotas returns them, a scheduler config's `SchedulerConfig` as
DescribeClusterSchedulerConfig does, instance groups as DescribeCluster does (with the request's
`InstanceCount`, as `cluster_driver.observe_cluster` gives them), access entries as the drift
scan's `LiveEntry`. Tags are read per object with ListTags (the summaries carry none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.live.eks import LiveEntry


@dataclass(frozen=True)
class LiveTaskObject:
    """A compute quota or the cluster scheduler config."""

    name: str
    arn: str
    fields: Mapping[str, Any]  # request-shaped keys: ComputeQuotaConfig, ComputeQuotaTarget / SchedulerConfig
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LiveHyperPodCluster:
    name: str
    arn: str
    status: str
    eks_cluster_arn: str | None
    groups: Mapping[str, Mapping[str, Any]]  # group name -> its specification (request keys)
    node_recovery: str | None
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def account(self) -> str:
        return self.arn.split(":")[4]

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]

    @property
    def eks_cluster_name(self) -> str | None:
        return self.eks_cluster_arn.rsplit("/", 1)[-1] if self.eks_cluster_arn else None


@dataclass(frozen=True)
class ClusterRead:
    """One HyperPod cluster and its governance objects."""

    cluster: LiveHyperPodCluster
    scheduler_configs: tuple[LiveTaskObject, ...] = ()
    quotas: tuple[LiveTaskObject, ...] = ()
    access_entries: tuple[LiveEntry, ...] = ()


@dataclass(frozen=True)
class LiveBudget:
    account: str
    name: str
    amount: str
    unit: str
    time_unit: str
    budget_type: str
    cost_filters: Mapping[str, tuple[str, ...]]
    notifications: tuple[Mapping[str, Any], ...]  # DescribeBudgetNotificationsForAccount's Notification objects


@dataclass(frozen=True)
class LiveOrg:
    clusters: tuple[ClusterRead, ...]
    budgets: tuple[LiveBudget, ...] = ()
    role_trust: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """role ARN -> the AWS principals its trust policy allows (hypergov's persona roles: their members)."""
    role_tags: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """role ARN -> its tags (hypergov tags a persona role with the project's tags and cost centre)."""


@dataclass(frozen=True)
class KeptTree:
    """The tree given with --keep-from, as parsed YAML: what the live org does not hold (org.yaml's
    policy; a project's description, allowed priority classes, extra permissions, Git-host handles,
    Identity Center members; a cluster's owner). `source` names it in comments."""

    source: str
    org: Mapping[str, Any]
    clusters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    projects: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    other_files: Mapping[str, bytes] = field(default_factory=dict)  # workloads/...: copied as they are
