"""The live scan's I/O against the embedded endpoint (in this process): list calls, pages, the
calls counted (checked against the endpoint's own log of the calls it answered), Describe only
where the summaries carry no configuration or to attribute a drift, and a cluster that cannot
be read makes the scan incomplete while the other clusters are still reported."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from botocore.config import Config

from embedded_aws import EmbeddedAws, InstanceGroup
from engines.live import hyperpod_read
from engines.live.hyperpod import GovernedCluster
from engines.live.items import LiveScan
from engines.live.runner import ServiceClientFor, run_units

REGION = "us-west-2"
_accounts = itertools.count(300000000001)
ONE_TRY = Config(retries={"mode": "standard", "total_max_attempts": 1})


def quota(arn: str, team: str, cluster: str, count: int = 1) -> dict[str, Any]:
    return {"Name": f"{team}-on-{cluster}", "ClusterArn": arn, "Description": f"{team} on {cluster}",
            "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": count}],
                                   "ResourceSharingConfig": {"Strategy": "DontLend"}, "PreemptTeamTasks": "Never"},
            "ComputeQuotaTarget": {"TeamName": team, "FairShareWeight": 10}, "ActivationState": "Enabled"}


def scheduler(arn: str, cluster: str) -> dict[str, Any]:
    return {"Name": f"{cluster}-scheduler", "ClusterArn": arn,
            "SchedulerConfig": {"PriorityClasses": [{"Name": "training", "Weight": 60}], "FairShare": "Enabled",
                                "IdleResourceSharing": "Enabled"}}


def applied_cluster(aws: EmbeddedAws, name: str, teams: list[str]) -> tuple[GovernedCluster, Any]:
    """A seeded cluster in a fresh account whose declared objects were created, as an apply would."""
    account = f"{next(_accounts):012d}"
    arn = aws.seed_hyperpod_cluster(name, f"{name}-eks", account=account, region=REGION,
                                    instance_groups=[InstanceGroup("g5", "ml.g5.12xlarge", 4)])
    client = aws.client("sagemaker", account=account, region=REGION)
    declared = {f"{t}-on-{name}": quota(arn, t, name) for t in teams}
    client.create_cluster_scheduler_config(**scheduler(arn, name))
    for request in declared.values():
        client.create_compute_quota(**request)
    return GovernedCluster(stack=f"cluster-{name}", cluster=name, arn=arn, scheduler_config=scheduler(arn, name),
                           quotas=declared, owned_quota_suffix=f"-on-{name}"), client


def client_for(aws: EmbeddedAws) -> ServiceClientFor:
    return lambda service, account, region: aws.client(service, account=account, region=region, config=ONE_TRY)


def scan_hyperpod(clusters: list[GovernedCluster], client: ServiceClientFor, concurrency: int = 8) -> LiveScan:
    return run_units([hyperpod_read.cluster_unit(c) for c in clusters], client,
                     stacks=[c.stack for c in clusters], concurrency=concurrency)


def sagemaker_calls(aws: EmbeddedAws) -> list[str]:
    return [c["operation"] for c in aws.calls() if c["service"] == "sagemaker"]


def test_a_clean_cluster_is_read_with_two_lists_and_one_describe(aws: EmbeddedAws) -> None:
    cluster, _ = applied_cluster(aws, "clean", ["nlp", "vision", "speech"])
    aws.clear_calls()
    result = scan_hyperpod([cluster], client_for(aws))
    assert (result.items, result.complete, result.stacks) == ((), True, ("cluster-clean",))
    assert sorted(sagemaker_calls(aws)) == ["DescribeClusterSchedulerConfig", "ListClusterSchedulerConfigs",
                                            "ListComputeQuotas"]  # none per quota
    assert result.api_calls == 3


def test_pages_are_followed_and_only_drifted_quotas_are_described(aws: EmbeddedAws,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, client = applied_cluster(aws, "paged", ["a", "b", "c", "d"])
    client.create_compute_quota(**quota(cluster.arn, "e", "by-hand"))
    monkeypatch.setattr(hyperpod_read, "PAGE_SIZE", 2)
    aws.clear_calls()
    result = scan_hyperpod([cluster], client_for(aws))
    (item,) = result.items
    assert (item.kind, item.address) == ("unmanaged", "hyperpod:ComputeQuota:e-on-by-hand")
    who = aws.client("sts", account=cluster.account, region=REGION).get_caller_identity()["Arn"]
    assert item.changed_by == who  # the creator, as STS names the credentials that created it
    calls = sagemaker_calls(aws)
    assert calls.count("ListComputeQuotas") == 3  # 5 quotas, 2 a page
    assert calls.count("DescribeComputeQuota") == 1  # only the drifted one, for who made it
    assert result.api_calls == len(calls) == 6


def test_a_cluster_that_cannot_be_read_makes_the_scan_incomplete(aws: EmbeddedAws) -> None:
    readable, client = applied_cluster(aws, "readable", ["nlp"])
    client.update_compute_quota(ComputeQuotaId=client.list_compute_quotas(ClusterArn=readable.arn)[
        "ComputeQuotaSummaries"][0]["ComputeQuotaId"], TargetVersion=1,
        ComputeQuotaTarget={"TeamName": "nlp", "FairShareWeight": 99})
    throttled, _ = applied_cluster(aws, "throttled", ["nlp"])
    aws.inject_fault("sagemaker", "ListClusterSchedulerConfigs", kind="throttle", times=1)
    try:
        # Clusters are read in order with one worker: the fault hits the first one read.
        result = scan_hyperpod([throttled, readable], client_for(aws), concurrency=1)
    finally:
        aws.clear_faults()
    assert not result.complete
    (failure,) = result.failures
    assert (failure.stack, failure.failure.kind, failure.failure.reason) == ("cluster-throttled", "temporary",
                                                                              "throttled")
    assert [(i.stack, i.kind) for i in result.items] == [("cluster-readable", "changed")]
