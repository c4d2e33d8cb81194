"""A live HyperPod cluster as a cluster file, decided without I/O.

Referenced (the default): `hyperpod.arn` and `capacity` summed per instance type over
DescribeCluster's instance groups. With `adopt`: `managed: true`, `adopt: true` and the groups
themselves (the capacity is then derived from them). The scheduler policy is the cluster's one
scheduler config (SageMaker allows one per cluster); its tags, hypergov's own keys left out, are
the cluster's tags (hypergov tags a cluster's objects with the cluster's tags). A cluster with
neither a scheduler config nor a compute quota runs no task governance: it is written
`task_governance: false`, and its queues and priority classes, Kueue objects in Kubernetes, are
not read (kept from --keep-from, or a report item).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engines.importing.live import ClusterRead, LiveTaskObject
from engines.importing.report import ImportItem
from engines.importing.yaml_doc import Document, Path
from hypergov import naming

HYPERGOV_TAG_PREFIX = "hypergov:"


@dataclass(frozen=True)
class ClusterDecision:
    document: Document
    items: tuple[ImportItem, ...]
    priority_classes: tuple[str, ...]
    task_governance: bool


def own_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """Tags without hypergov's keys and AWS's reserved ones."""
    return {k: v for k, v in sorted(tags.items()) if not k.startswith((HYPERGOV_TAG_PREFIX, "aws:"))}


def _groups(read: ClusterRead) -> list[dict[str, Any]]:
    out = []
    for name, spec in sorted(read.cluster.groups.items()):
        group: dict[str, Any] = {"name": name, "instance_type": spec["InstanceType"],
                                 "instance_count": int(spec["InstanceCount"])}
        if spec.get("MinInstanceCount") is not None:
            group["min_count"] = int(spec["MinInstanceCount"])
        life = spec.get("LifeCycleConfig") or {}
        group["lifecycle_config"] = {"source_s3_uri": life.get("SourceS3Uri"), "on_create": life.get("OnCreate")}
        group["execution_role"] = spec.get("ExecutionRole")
        if spec.get("ThreadsPerCore") is not None:
            group["threads_per_core"] = int(spec["ThreadsPerCore"])
        volumes = [c["EbsVolumeConfig"]["VolumeSizeInGB"] for c in spec.get("InstanceStorageConfigs") or []
                   if "EbsVolumeConfig" in c]
        if volumes:
            group["volume_size_gb"] = int(volumes[0])
        out.append(group)
    return out


def _capacity(read: ClusterRead) -> dict[str, dict[str, int]]:
    counts: dict[str, int] = {}
    for spec in read.cluster.groups.values():
        counts[str(spec["InstanceType"])] = counts.get(str(spec["InstanceType"]), 0) + int(spec["InstanceCount"])
    return {t: {"instances": n} for t, n in sorted(counts.items())}


def _scheduler(config: LiveTaskObject, items: list[ImportItem], key: str) -> dict[str, Any]:
    fields = config.fields.get("SchedulerConfig") or {}
    classes = sorted(fields.get("PriorityClasses") or [], key=lambda c: (-int(c["Weight"]), str(c["Name"])))
    scheduler: dict[str, Any] = {"priority_classes": [{"name": c["Name"], "weight": int(c["Weight"])}
                                                      for c in classes]}
    scheduler["fair_share"] = fields.get("FairShare", "Enabled") == "Enabled"
    idle = fields.get("IdleResourceSharing")
    scheduler["idle_resource_sharing"] = idle != "Disabled"
    if idle is None:
        items.append(ImportItem(kind="not-expressible", object=f"ClusterSchedulerConfig {config.name} ({config.arn})",
                                why="IdleResourceSharing is not set live (AWS documents no default); hypergov always "
                                "writes it, so a plan sets it Enabled", live={"IdleResourceSharing": None},
                                file=f"clusters/{key}.yaml"))
    return scheduler


def decide_cluster(read: ClusterRead, *, account_name: str, owner: str, owner_source: str, adopt: bool,
                   kept: Mapping[str, Any] | None, kept_source: str) -> ClusterDecision:
    live = read.cluster
    key = live.name
    file = f"clusters/{key}.yaml"
    items: list[ImportItem] = []
    comments: dict[Path, str] = {("account",): f"the account of {live.arn}", ("owner",): owner_source}
    task_governance = bool(read.scheduler_configs or read.quotas)
    hyperpod: dict[str, Any] = {"cluster_name": live.name}
    if adopt:
        hyperpod.update(managed=True, adopt=True, instance_groups=_groups(read))
        if live.node_recovery:
            hyperpod["node_recovery"] = live.node_recovery
        comments[("hyperpod", "instance_groups")] = f"from DescribeCluster {live.name}"
    elif task_governance:
        hyperpod["arn"] = live.arn
    data: dict[str, Any] = {"account": account_name, "region": live.region, "owner": owner, "hyperpod": hyperpod,
                            "eks": {"cluster_name": live.eks_cluster_name}, "task_governance": task_governance}
    comments[("eks", "cluster_name")] = f"DescribeCluster Orchestrator.Eks.ClusterArn {live.eks_cluster_arn}"
    if not adopt:
        data["capacity"] = _capacity(read)
        comments[("capacity",)] = f"DescribeCluster {live.name}: instances per type over its instance groups"
    scheduler, tags = _policy(read, items, kept=kept, kept_source=kept_source, comments=comments, file=file)
    data["scheduler"] = scheduler
    data["tags"] = tags
    if not task_governance:
        comments[("task_governance",)] = "no scheduler config and no compute quota: plain EKS (Kueue) mode"
    document = Document(path=file, data=data, comments=comments, header=(
        f"Cluster layer, imported from the live HyperPod cluster {live.name} ({live.arn}, {live.status})."))
    classes = tuple(c["name"] for c in scheduler.get("priority_classes", []))
    return ClusterDecision(document=document, items=tuple(items), priority_classes=classes,
                           task_governance=task_governance)


def _policy(read: ClusterRead, items: list[ImportItem], *, kept: Mapping[str, Any] | None, kept_source: str,
            comments: dict[Path, str], file: str) -> tuple[dict[str, Any], dict[str, str]]:
    key = read.cluster.name
    configs = read.scheduler_configs
    if configs:
        config = configs[0]
        for extra in configs[1:]:
            items.append(ImportItem(kind="not-expressible", object=f"ClusterSchedulerConfig {extra.name} ({extra.arn})",
                                    why=f"a second scheduler config on {key}; the tree holds one (imported: "
                                    f"{config.name})", live=dict(extra.fields), file=file))
        if config.name != naming.scheduler_config_name(key):
            items.append(ImportItem(kind="renamed", object=f"ClusterSchedulerConfig {config.name} ({config.arn})",
                                    why=f"hypergov names the scheduler config of {key} "
                                    f"{naming.scheduler_config_name(key)}; a plan would replace it (delete, create)",
                                    live={"Name": config.name}, file=file))
        comments[("scheduler",)] = f"from ClusterSchedulerConfig {config.name} ({config.arn})"
        comments[("tags",)] = f"ListTags of {config.name}, hypergov's keys left out"
        return _scheduler(config, items, key), own_tags(config.tags)
    if kept is not None and "scheduler" in kept:
        comments[("scheduler",)] = f"kept from {kept_source}: Kueue priority classes in Kubernetes are not read"
        comments[("tags",)] = f"kept from {kept_source}"
        items.append(ImportItem(kind="not-read", object=f"HyperPod cluster {key} ({read.cluster.arn})", why=(
            f"no task-governance scheduler config: its priority classes are Kueue objects in Kubernetes, not read; "
            f"the scheduler policy is kept from {kept_source}"), file=file))
        return dict(kept["scheduler"]), dict(kept.get("tags") or {})
    items.append(ImportItem(kind="not-read", object=f"HyperPod cluster {key} ({read.cluster.arn})", why=(
        "no task-governance scheduler config and nothing to keep: the tree needs at least one priority class "
        "(write the cluster's Kueue WorkloadPriorityClasses in scheduler.priority_classes)"), file=file))
    return {"priority_classes": []}, {}
