"""Seeding: the HyperPod clusters (and their EKS clusters) that exist before hypergov runs.

hypergov governs clusters the platform team created; it does not create them. For the demo and
the tests the endpoint must therefore hold them first. Seeding goes through the endpoint's own
API (EKS CreateCluster with an API authentication mode, SageMaker CreateCluster orchestrated by
it), so the seeded state is exactly what a client would have created. The IAM roles the clusters
reference are deliberately not created (the endpoint does not check them), so drift detection
sees only objects hypergov itself made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from botocore.exceptions import ClientError

from hypergov.model.tree import GovernanceTree


@dataclass(frozen=True)
class InstanceGroup:
    """One instance group of a seeded HyperPod cluster."""

    name: str
    instance_type: str
    count: int
    threads_per_core: int | None = None


@dataclass(frozen=True)
class SeededCluster:
    name: str
    eks_cluster_name: str
    account: str
    region: str
    arn: str


class SeedTarget(Protocol):
    """A running endpoint: boto3 clients, and reserving a HyperPod cluster id (see
    `EndpointHandle.reserve_hyperpod_cluster_id`)."""

    def client(self, service: str, *, account: str, region: str) -> Any: ...

    def reserve_hyperpod_cluster_id(self, name: str, cluster_id: str, *, account: str, region: str) -> None: ...


DEFAULT_INSTANCE_GROUPS = (InstanceGroup(name="workers", instance_type="ml.g5.12xlarge", count=2),)


def seed_hyperpod_cluster(endpoint: SeedTarget, *, name: str, eks_cluster_name: str, account: str, region: str,
                          instance_groups: Sequence[InstanceGroup] = DEFAULT_INSTANCE_GROUPS,
                          cluster_id: str | None = None) -> str:
    """The ARN of HyperPod cluster `name` on EKS cluster `eks_cluster_name`, creating both if
    missing (idempotent: seeding twice leaves one of each). `cluster_id` fixes the id at the end
    of the ARN (for a config tree that records it); by default the endpoint picks one, as AWS does."""
    eks = endpoint.client("eks", account=account, region=region)
    eks_arn = _eks_cluster(eks, name=eks_cluster_name, account=account)
    sagemaker = endpoint.client("sagemaker", account=account, region=region)
    try:
        existing = sagemaker.describe_cluster(ClusterName=name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceNotFound":
            raise
    else:
        orchestrator = existing.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn")
        if orchestrator != eks_arn:
            raise ValueError(f"HyperPod cluster {name} already exists on {orchestrator}, not on {eks_arn}")
        if cluster_id is not None and not existing["ClusterArn"].endswith(f"/{cluster_id}"):
            raise ValueError(f"HyperPod cluster {name} already exists as {existing['ClusterArn']}, not with id "
                             f"{cluster_id}")
        return str(existing["ClusterArn"])
    if cluster_id is not None:
        endpoint.reserve_hyperpod_cluster_id(name, cluster_id, account=account, region=region)
    response = sagemaker.create_cluster(
        ClusterName=name,
        InstanceGroups=[_group_spec(group, cluster=name, account=account) for group in instance_groups],
        VpcConfig={"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]},
        Orchestrator={"Eks": {"ClusterArn": eks_arn}},
        NodeRecovery="Automatic",
    )
    return str(response["ClusterArn"])


def seed_tree_clusters(tree: GovernanceTree, endpoint: SeedTarget) -> list[SeededCluster]:
    """Seed every cluster of a (valid) config tree in the org account and region it names, with
    the ARN its ``hyperpod.arn`` records when it records one."""
    if tree.org is None:
        raise ValueError("the config tree has no valid org.yaml; run 'hypergov validate'")
    org = tree.org.model
    seeded = []
    for cluster_name in sorted(tree.clusters):
        cluster = tree.clusters[cluster_name].model
        account = org.account(cluster.account)
        if account is None:
            raise ValueError(f"cluster {cluster_name} names account {cluster.account!r}, which org.yaml does not list")
        region = cluster.region or org.home_region
        # A cluster that declares its groups runs with those names (what adopting it compares by);
        # otherwise one group per instance type of its capacity.
        groups = [InstanceGroup(name=g.name, instance_type=g.instance_type, count=g.instance_count)
                  for g in cluster.hyperpod.instance_groups] if cluster.hyperpod.instance_groups else [
            InstanceGroup(name=instance_group_name(itype), instance_type=itype, count=capacity.instances)
            for itype, capacity in sorted(cluster.capacity.items())]
        arn = seed_hyperpod_cluster(endpoint, name=cluster.hyperpod.cluster_name,
                                    eks_cluster_name=cluster.eks.cluster_name, account=account.id, region=region,
                                    instance_groups=groups,
                                    cluster_id=_recorded_id(cluster.hyperpod.arn, account=account.id, region=region))
        seeded.append(SeededCluster(name=cluster.hyperpod.cluster_name, eks_cluster_name=cluster.eks.cluster_name,
                                    account=account.id, region=region, arn=arn))
    return seeded


def _recorded_id(arn: str | None, *, account: str, region: str) -> str | None:
    if arn is None:
        return None
    prefix = f":sagemaker:{region}:{account}:cluster/"
    if prefix not in arn:
        raise ValueError(f"hyperpod.arn {arn} is not in the cluster's account {account} and region {region}")
    return arn.rsplit("/", 1)[1]


def instance_group_name(instance_type: str) -> str:
    """'ml.p5.48xlarge' -> 'p5-48xlarge' (instance group names allow only letters, digits, '-')."""
    return instance_type.removeprefix("ml.").replace(".", "-")


def _eks_cluster(eks: Any, *, name: str, account: str) -> str:
    try:
        return str(eks.describe_cluster(name=name)["cluster"]["arn"])
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceNotFoundException":
            raise
    created = eks.create_cluster(
        name=name,
        roleArn=f"arn:aws:iam::{account}:role/{name}-cluster",
        resourcesVpcConfig={"subnetIds": ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"],
                            "securityGroupIds": ["sg-0123456789abcdef0"]},
        accessConfig={"authenticationMode": "API_AND_CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions": False},
    )
    return str(created["cluster"]["arn"])


def _group_spec(group: InstanceGroup, *, cluster: str, account: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "InstanceGroupName": group.name,
        "InstanceType": group.instance_type,
        "InstanceCount": group.count,
        "ExecutionRole": f"arn:aws:iam::{account}:role/{cluster}-hyperpod-execution",
        "LifeCycleConfig": {"SourceS3Uri": f"s3://{cluster}-lifecycle/scripts/", "OnCreate": "on_create.sh"},
    }
    if group.threads_per_core is not None:
        spec["ThreadsPerCore"] = group.threads_per_core
    return spec
