"""References: every cluster, account, region, instance type and priority class named anywhere
exists where it is named."""

from __future__ import annotations

from collections.abc import Iterator

from hypergov.model.cluster import Cluster
from hypergov.model.common import PERSONAS, is_identity_center
from hypergov.model.org import Account
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.problems import Problem
from hypergov.rules.base import problem


def _names(items: set[str]) -> str:
    return ", ".join(sorted(items)) or "(none)"


def check_references(tree: GovernanceTree) -> Iterator[Problem]:
    yield from _org_and_clusters(tree)
    yield from _projects(tree)
    yield from _workloads(tree)
    yield from _identity_center(tree)


def _org_and_clusters(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    org = tree.org.model
    if org.home_region not in org.allowed_regions:
        yield problem(tree.org.pos("home_region"), "REF005",
                      f"home_region {org.home_region} is not in allowed_regions",
                      "add it to allowed_regions or pick an allowed region")
    accounts = {a.name for a in org.accounts}
    for name, cluster in sorted(tree.clusters.items()):
        if cluster.model.account not in accounts:
            yield problem(cluster.pos("account"), "REF005",
                          f"cluster '{name}' names account '{cluster.model.account}', which org.yaml does not list",
                          f"use one of: {_names(accounts)}")
        region = cluster.model.region or org.home_region
        if cluster.model.region is not None and region not in org.allowed_regions:
            yield problem(cluster.pos("region"), "REF005",
                          f"region {region} is not in the org's allowed_regions",
                          f"use one of: {_names(set(org.allowed_regions))}")
        yield from _hyperpod_arn(cluster, region, org.account(cluster.model.account))


def _hyperpod_arn(cluster: Sourced[Cluster], region: str, account: Account | None) -> Iterator[Problem]:
    """Compute quotas and the scheduler config bind to the cluster's ARN, whose last part
    SageMaker generates: a task-governance cluster must name it, and it must be this cluster's.
    A managed cluster need not: hypergov creates (or adopts) it and reads its ARN back."""
    arn = cluster.model.hyperpod.arn
    if arn is None:
        if cluster.model.task_governance and not cluster.model.hyperpod.managed:
            yield problem(cluster.pos("hyperpod", key=True), "REF007",
                          "a cluster with task governance needs its HyperPod ARN (hyperpod.arn)",
                          f"add 'arn:' from 'aws sagemaker describe-cluster --cluster-name "
                          f"{cluster.model.hyperpod.cluster_name} --query ClusterArn'")
        return
    _, _, _, arn_region, arn_account, _ = arn.split(":", 5)
    if account is not None and arn_account != account.id:
        yield problem(cluster.pos("hyperpod", "arn"), "REF007",
                      f"the ARN is in account {arn_account}, but the cluster's account '{account.name}' "
                      f"is {account.id}", "fix the ARN or the cluster's account")
    if arn_region != region:
        yield problem(cluster.pos("hyperpod", "arn"), "REF007",
                      f"the ARN is in region {arn_region}, but the cluster is in {region}",
                      "fix the ARN or the cluster's region")


def _projects(tree: GovernanceTree) -> Iterator[Problem]:
    for _team, project in sorted(tree.projects.items()):
        for cluster_name, quota in sorted(project.model.quotas.items()):
            if cluster_name not in tree.cluster_files:
                yield problem(project.pos("quotas", cluster_name, key=True), "REF001",
                              f"quota on unknown cluster '{cluster_name}'",
                              f"use one of: {_names(tree.cluster_files)} (files in clusters/)")
                continue
            cluster = tree.clusters.get(cluster_name)
            if cluster is None:
                continue  # its file is broken; that is reported there
            for field, types in (("instances", quota.instances), ("resources", quota.resources),
                                 ("absolute_borrow_limits", quota.absolute_borrow_limits)):
                for itype in sorted(types):
                    if itype not in cluster.model.capacity:
                        yield problem(project.pos("quotas", cluster_name, field, itype, key=True), "REF002",
                                      f"cluster '{cluster_name}' has no {itype} capacity",
                                      f"use one of: {_names(set(cluster.model.capacity))}")
            offered = cluster.model.priority_class_names()
            for i, pc in enumerate(project.model.allowed_priority_classes):
                if pc not in offered:
                    yield problem(project.pos("allowed_priority_classes", i), "REF003",
                                  f"priority class '{pc}' does not exist on cluster '{cluster_name}', "
                                  "where the team has quota",
                                  f"use one of: {_names(offered)}")


def _workloads(tree: GovernanceTree) -> Iterator[Problem]:
    for (team, cls), wl in sorted(tree.workloads.items()):
        if team not in tree.project_files:
            yield problem(wl.pos(), "REF004",
                          f"workload class '{cls}' is in workloads/{team}/, but there is no project '{team}'",
                          f"move it to workloads/<team>/ of an existing project: {_names(tree.project_files)}")
            continue
        project = tree.projects.get(team)
        if project is None:
            continue
        clusters = [tree.clusters[c] for c in project.model.quotas if c in tree.clusters]
        existing = set().union(*(c.model.priority_class_names() for c in clusters)) if clusters else set()
        pc = wl.model.priority_class
        if clusters and pc not in existing:
            yield problem(wl.pos("priority_class"), "REF003",
                          f"priority class '{pc}' exists on none of team '{team}''s clusters",
                          f"use one of: {_names(existing)}")
        elif pc not in project.model.allowed_priority_classes:
            yield problem(wl.pos("priority_class"), "REF006",
                          f"priority class '{pc}' is not in project '{team}''s allowed_priority_classes",
                          f"use one of: {_names(set(project.model.allowed_priority_classes))}, "
                          "or have the project lead allow it")
        offered = set().union(*(set(c.model.capacity) for c in clusters)) if clusters else set()
        quota_types = {t for q in project.model.quotas.values() for t in (*q.instance_types(),
                                                                          *q.absolute_borrow_limits)}
        for i, itype in enumerate(wl.model.instance_types):
            if itype not in quota_types:
                yield problem(wl.pos("instance_types", i), "REF002",
                              f"team '{team}' has no quota for {itype}"
                              + ("" if itype in offered else " on any of its clusters"),
                              f"use one of: {_names(quota_types)}")


def _identity_center(tree: GovernanceTree) -> Iterator[Problem]:
    """Identity Center members need the instance they come from; its account must be the org's."""
    if tree.org is None:
        return
    org = tree.org.model
    if org.identity_center is not None:
        if org.account(org.identity_center.account) is None:
            yield problem(tree.org.pos("identity_center", "account"), "REF005",
                          f"identity_center names account '{org.identity_center.account}', which org.yaml does "
                          f"not list", f"use one of: {_names({a.name for a in org.accounts})}")
        return
    hint = ("add 'identity_center:' to org.yaml (instance_arn, identity_store_id, region, account), "
            "or name the member by its IAM ARN")
    for i, principal in enumerate(org.platform_admins):
        if is_identity_center(principal):
            yield problem(tree.org.pos("platform_admins", i), "REF008",
                          f"{principal} is an Identity Center member, but org.yaml names no Identity Center", hint)
    for _, project in sorted(tree.projects.items()):
        for persona in PERSONAS:
            for i, principal in enumerate(project.model.members.of(persona)):
                if is_identity_center(principal):
                    yield problem(project.pos("members", persona, i), "REF008",
                                  f"{principal} is an Identity Center member, but org.yaml names no "
                                  f"Identity Center", hint)
