"""The I/O of `hypergov import`: the live org read with the drift scan's readers, clients passed in.

Per cluster ARN (in its account and region): DescribeCluster and its ListTags
(`cluster_driver.observe_cluster`), the compute quotas and the scheduler config
(`live.hyperpod_read.read_live`: ListComputeQuotas' summaries carry config and target;
the scheduler config is described), ListTags per quota and scheduler config (the summaries carry no
tags, and a team's tags and cost centre are on its quotas), the EKS access entries and their
access-policy associations (`live.eks_read.read_entries`). Per account of the clusters and of
org.yaml: the budgets and their notifications (botocore's paginators through the scan's
`CallCounter`, as `live.budgets` reads them), and, where an access entry names one of hypergov's
persona roles, IAM's roles with their trust policies (`live.iam_read.read_account`). The tree
kept with --keep-from is read with hypergov's own directory reader (regular files only).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

import yaml

from engines.hyperpod import driver
from engines.hyperpod.cluster_driver import ClusterClient, observe_cluster
from engines.importing.live import ClusterRead, KeptTree, LiveBudget, LiveHyperPodCluster, LiveOrg, LiveTaskObject
from engines.live import eks_read, hyperpod_read, iam_read
from engines.live.budgets import PAGE_SIZE as BUDGET_PAGE
from engines.live.eks import LiveEntry
from engines.live.hyperpod import LiveObject
from engines.live.runner import CallCounter
from hypergov import naming
from hypergov.tree_files import NotAFile, read_tree_dir


class Clients(Protocol):
    """`engines.aws_clients.AwsClients` fits."""

    def client(self, service: str, *, region: str, account: str | None = None) -> Any: ...


class ClusterNotFoundError(LookupError):
    """A --cluster ARN names no HyperPod cluster (in its account and region)."""


def split_arn(arn: str) -> tuple[str, str, str]:
    """(account, region, cluster name or id) of a HyperPod cluster ARN."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[2] != "sagemaker" or not parts[5].startswith("cluster/"):
        raise ValueError(f"{arn} is not a HyperPod cluster ARN (arn:<partition>:sagemaker:<region>:<account>:"
                         "cluster/<id>)")
    return parts[4], parts[3], parts[5].removeprefix("cluster/")


def _tagged(client: Any, objects: Sequence[LiveObject], calls: CallCounter) -> tuple[LiveTaskObject, ...]:
    out = []
    for o in objects:
        tags = calls(client, "list_tags", ResourceArn=o.arn).get("Tags", []) if o.arn else []
        out.append(LiveTaskObject(name=o.name, arn=o.arn, fields=dict(o.fields),
                                  tags={t["Key"]: t.get("Value", "") for t in tags}))
    return tuple(out)


def read_cluster(clients: Clients, arn: str, calls: CallCounter) -> ClusterRead:
    account, region, _ = split_arn(arn)
    sagemaker = clients.client("sagemaker", region=region, account=account)
    observed = observe_cluster(cast(ClusterClient, sagemaker), arn)
    if observed is None:
        raise ClusterNotFoundError(f"no HyperPod cluster {arn} (DescribeCluster in {account} {region})")
    found = calls(sagemaker, "describe_cluster", ClusterName=arn)
    eks_arn = (observed.settings.get("Orchestrator") or {}).get("Eks", {}).get("ClusterArn")
    cluster = LiveHyperPodCluster(name=str(found["ClusterName"]), arn=observed.arn, status=observed.status,
                                  eks_cluster_arn=eks_arn, groups=dict(observed.specs),
                                  node_recovery=observed.settings.get("NodeRecovery"), tags=dict(observed.tags))
    quotas = hyperpod_read.read_live(sagemaker, driver.COMPUTE_QUOTA, observed.arn, calls)
    configs = hyperpod_read.read_live(sagemaker, driver.SCHEDULER_CONFIG, observed.arn, calls)
    entries: tuple[LiveEntry, ...] = ()
    if cluster.eks_cluster_name:
        eks = clients.client("eks", region=region, account=account)
        entries = tuple(eks_read.read_entries(eks, cluster.eks_cluster_name, calls))
    return ClusterRead(cluster=cluster, scheduler_configs=_tagged(sagemaker, configs, calls),
                       quotas=_tagged(sagemaker, quotas, calls), access_entries=entries)


def read_budgets(client: Any, account: str, calls: CallCounter) -> list[LiveBudget]:
    live = [b for page in calls.pages(client, "describe_budgets", AccountId=account,
                                      PaginationConfig={"PageSize": BUDGET_PAGE}) for b in page.get("Budgets", [])]
    notifications: dict[str, list[Any]] = {}
    if live:
        for page in calls.pages(client, "describe_budget_notifications_for_account", AccountId=account,
                                PaginationConfig={"PageSize": BUDGET_PAGE}):
            notifications.update({str(b["BudgetName"]): list(b.get("Notifications", []))
                                  for b in page.get("BudgetNotificationsForAccount", [])})
    return [LiveBudget(account=account, name=str(b["BudgetName"]), amount=str(b.get("BudgetLimit", {}).get("Amount")),
                       unit=str(b.get("BudgetLimit", {}).get("Unit")), time_unit=str(b.get("TimeUnit")),
                       budget_type=str(b.get("BudgetType")),
                       cost_filters={k: tuple(v) for k, v in (b.get("CostFilters") or {}).items()},
                       notifications=tuple(notifications.get(str(b["BudgetName"]), ())))
            for b in live]


def trusted_principals(document: Any) -> tuple[str, ...]:
    """The AWS principals an IAM trust policy lets assume the role (Allow statements)."""
    found: list[str] = []
    statements = (document or {}).get("Statement", [])
    for statement in statements if isinstance(statements, list) else [statements]:
        if statement.get("Effect") != "Allow":
            continue
        aws = (statement.get("Principal") or {}).get("AWS", [])
        found += [aws] if isinstance(aws, str) else list(aws)
    return tuple(sorted(set(found)))


def read_roles(clients: Clients, accounts: Sequence[str], region: str, calls: CallCounter) -> tuple[
        dict[str, tuple[str, ...]], dict[str, dict[str, str]]]:
    """hypergov's roles (path /hypergov/) of `accounts`: role ARN -> who its trust policy allows, and its tags."""
    trust: dict[str, tuple[str, ...]] = {}
    tags: dict[str, dict[str, str]] = {}
    for account in sorted(set(accounts)):
        iam = iam_read.read_account(clients.client("iam", region=region, account=account), calls, listed_prefix=None)
        own = [r for r in iam.roles.values() if r.path == naming.ROLE_PATH]
        trust.update({r.arn: trusted_principals(r.assume_role_policy) for r in own})
        tags.update({r.arn: dict(r.tags) for r in own})
    return trust, tags


def read_live_org(clients: Clients, cluster_arns: Sequence[str], *, org: Mapping[str, Any],
                  calls: CallCounter) -> LiveOrg:
    reads = tuple(read_cluster(clients, arn, calls) for arn in cluster_arns)
    home = str(org.get("home_region") or reads[0].cluster.region if reads else "us-east-1")
    accounts = sorted({r.cluster.account for r in reads} | {str(a["id"]) for a in org.get("accounts") or []})
    budgets = [b for account in accounts
               for b in read_budgets(clients.client("budgets", region=home, account=account), account, calls)]
    role_accounts = sorted({e.principal_arn.split(":")[4] for r in reads for e in r.access_entries
                            if f":role{naming.ROLE_PATH}" in e.principal_arn})
    trust, tags = read_roles(clients, role_accounts, home, calls) if role_accounts else ({}, {})
    return LiveOrg(clusters=reads, budgets=tuple(budgets), role_trust=trust, role_tags=tags)


def read_kept_org(path: str | os.PathLike[str]) -> KeptTree:
    """Only an org.yaml (--org): the org-wide policy, nothing of projects or clusters kept."""
    with open(path, "rb") as f:
        org = yaml.safe_load(f.read()) or {}
    return KeptTree(source=os.path.normpath(os.path.dirname(os.fspath(path)) or "."), org=org)


def read_kept(path: str | os.PathLike[str]) -> KeptTree:
    """The tree given with --keep-from: org.yaml, clusters/ and projects/ parsed, workloads/ as bytes."""
    files = read_tree_dir(path)
    parsed: dict[str, Any] = {}
    for rel, data in files.items():
        if isinstance(data, NotAFile) or not rel.endswith(".yaml"):
            continue
        parsed[rel] = yaml.safe_load(data) or {}
    if "org.yaml" not in parsed:
        raise FileNotFoundError(f"{os.fspath(path)} has no org.yaml")

    def of(folder: str) -> dict[str, Mapping[str, Any]]:
        return {rel[len(folder) + 1:-5]: v for rel, v in parsed.items()
                if rel.startswith(f"{folder}/") and rel.count("/") == 1}
    other = {rel: bytes(data) for rel, data in files.items()
             if not isinstance(data, NotAFile) and rel.startswith("workloads/")}
    return KeptTree(source=os.path.normpath(os.fspath(path)), org=parsed["org.yaml"], clusters=of("clusters"),
                    projects=of("projects"), other_files=other)


def cluster_arn(clients: Clients, cluster: str, *, account: str | None, region: str) -> str:
    """The ARN of `cluster` (an ARN already, or a name in `account` and `region`)."""
    if cluster.startswith("arn:"):
        split_arn(cluster)
        return cluster
    sagemaker = clients.client("sagemaker", region=region, account=account)
    observed = observe_cluster(cast(ClusterClient, sagemaker), cluster)
    if observed is None:
        raise ClusterNotFoundError(f"no HyperPod cluster {cluster} in {account or 'the caller account'} {region}")
    return observed.arn
