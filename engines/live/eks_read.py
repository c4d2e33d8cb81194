"""The I/O of the live EKS access scan: one scan unit per governed EKS cluster (every cluster a
stack declares access entries on, and every cluster of the tree), compared by `engines.live.eks`.

Per cluster: ListAccessEntries (paginated, 100 a page) returns principal ARNs only, and EKS has no
call that lists entries with their groups, type or policies. So, per entry, DescribeAccessEntry
(groups, type, username, tags, modifiedAt) and, for STANDARD entries only (the only type that can
have access policies), ListAssociatedAccessPolicies (policyArn, accessScope): two calls per entry,
what the API forces; one for node entries.

A cluster that cannot be read makes the scan incomplete (the cluster is named), never "no drift".
"""

from __future__ import annotations

from typing import Any

from engines.live.eks import (
    ASSOCIATION,
    ENTRY,
    GovernedEksCluster,
    LiveEntry,
    LivePolicy,
    compare,
    governed_eks_clusters,
)
from engines.live.items import DriftItem, iso_time
from engines.live.runner import CallCounter, Pruner, ScanContext, ScanUnit
from hypergov import naming

PAGE_SIZE = 100  # the most ListAccessEntries and ListAssociatedAccessPolicies return a page (maxResults)


def read_entries(client: Any, cluster_name: str, calls: CallCounter) -> list[LiveEntry]:
    principals = [p for page in calls.pages(client, "list_access_entries", clusterName=cluster_name,
                                            PaginationConfig={"PageSize": PAGE_SIZE})
                  for p in page.get("accessEntries", [])]
    return [read_entry(client, cluster_name, principal, calls) for principal in principals]


def read_entry(client: Any, cluster_name: str, principal: str, calls: CallCounter) -> LiveEntry:
    entry = calls(client, "describe_access_entry", clusterName=cluster_name, principalArn=principal)["accessEntry"]
    policies: list[LivePolicy] = []
    if entry.get("type", "STANDARD") == "STANDARD":
        for page in calls.pages(client, "list_associated_access_policies", clusterName=cluster_name,
                                principalArn=principal, PaginationConfig={"PageSize": PAGE_SIZE}):
            policies += [LivePolicy(policy_arn=str(p["policyArn"]), scope_type=str(p["accessScope"].get("type")),
                                    namespaces=tuple(p["accessScope"].get("namespaces", [])),
                                    modified_at=iso_time(p.get("modifiedAt")))
                         for p in page.get("associatedAccessPolicies", [])]
    return LiveEntry(principal_arn=principal, type=str(entry.get("type", "STANDARD")),
                     kubernetes_groups=tuple(entry.get("kubernetesGroups", [])),
                     username=str(entry.get("username", "")), tags=dict(entry.get("tags", {})),
                     modified_at=iso_time(entry.get("modifiedAt") or entry.get("createdAt")), policies=tuple(policies))


def scan_cluster(client: Any, cluster: GovernedEksCluster, calls: CallCounter) -> list[DriftItem]:
    return compare(cluster, read_entries(client, cluster.cluster_name, calls))


def _tree_clusters(context: ScanContext) -> list[tuple[str, str, str, str]]:
    org = context.tree.org.model if context.tree.org else None
    found = []
    for name, loaded in sorted(context.tree.clusters.items()):
        cluster = loaded.model
        account = org.account(cluster.account) if org else None
        if account is not None and org is not None:
            found.append((name, cluster.eks.cluster_name, account.id, cluster.region or org.home_region))
    return found


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit per governed EKS cluster. Any stack's items may come from it (an unmanaged entry
    belongs to the project whose namespace it reaches), so it covers every stack."""
    clusters = governed_eks_clusters(context.desired, tree_clusters=_tree_clusters(context),
                                     caller_account=context.caller_account, stacks=[s.name for s in context.specs])
    return [cluster_unit(c) for c in clusters]


def cluster_unit(cluster: GovernedEksCluster) -> ScanUnit:
    stack = naming.cluster_stack(cluster.cluster) if cluster.cluster else naming.org_stack()
    return ScanUnit(service="eks", account=cluster.account, region=cluster.region, stack=stack,
                    what=f"EKS access entries of cluster {cluster.cluster_name} ({cluster.account} {cluster.region})",
                    read=lambda client, calls: scan_cluster(client, cluster, calls))


def _delete_entry(client: Any, item: DriftItem, calls: CallCounter) -> None:
    calls(client, "delete_access_entry", clusterName=item.ref["clusterName"], principalArn=item.ref["principalArn"])


def _disassociate(client: Any, item: DriftItem, calls: CallCounter) -> None:
    calls(client, "disassociate_access_policy", clusterName=item.ref["clusterName"],
          principalArn=item.ref["principalArn"], policyArn=item.ref["policyArn"])


PRUNERS = {ENTRY: Pruner(service="eks", delete=_delete_entry),
           ASSOCIATION: Pruner(service="eks", delete=_disassociate)}
