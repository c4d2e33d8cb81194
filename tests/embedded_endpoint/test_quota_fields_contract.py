"""Contract of the newer compute-quota and cluster-policy fields through boto3 over HTTP:
`AbsoluteBorrowLimits`, quotas in `Accelerators` / `VCpu` / `MemoryInGiB`, `AcceleratorPartition`
(MIG profiles) and the scheduler's `IdleResourceSharing`. They are stored and returned as AWS
documents them (ratio-derived amounts filled in), and invalid ones get the documented errors.

Expected derived amounts are computed by hand from the API reference of
ComputeQuotaResourceConfig ("if you allocate 16 out of 32 total accelerators, SageMaker AI uses
the ratio of 0.5 and allocates values to vCPU and MemoryInGiB"; vCPU alone: memory by ratio,
"Accelerators are set to 0") and EC2's ml.g5.12xlarge: 4 GPUs, 48 vCPUs, 192 GiB per instance.
The seeded cluster has ml.g5.12xlarge x2 and ml.p5.48xlarge x4 (conftest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .conftest import assert_complete, error_of

Ctx = dict[str, str]
P5, G5 = "ml.p5.48xlarge", "ml.g5.12xlarge"


def request(cluster_arn: str, *, resources: list[dict[str, Any]], sharing: dict[str, Any] | None = None,
            name: str = "nlp-on-gpu") -> dict[str, Any]:
    return {"Name": name, "ClusterArn": cluster_arn,
            "ComputeQuotaConfig": {"ComputeQuotaResources": resources,
                                   "ResourceSharingConfig": sharing or {"Strategy": "LendAndBorrow"}},
            "ComputeQuotaTarget": {"TeamName": name.split("-")[0]}}


MIG = {"InstanceType": P5, "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 14}}
LIMITS = {"Strategy": "LendAndBorrow", "BorrowLimit": 100,
          "AbsoluteBorrowLimits": [{"InstanceType": P5, "Accelerators": 4}, {"InstanceType": G5, "Count": 1}]}


@pytest.fixture
def sagemaker(client: Callable[..., Any]) -> Any:
    return client("sagemaker")


def test_partitions_and_absolute_limits_round_trip(sagemaker: Any, hyperpod_arn: str) -> None:
    created = sagemaker.create_compute_quota(**request(hyperpod_arn, resources=[MIG], sharing=LIMITS))

    described = sagemaker.describe_compute_quota(ComputeQuotaId=created["ComputeQuotaId"])
    listed = sagemaker.list_compute_quotas(ClusterArn=hyperpod_arn)["ComputeQuotaSummaries"]

    assert_complete("sagemaker", "DescribeComputeQuota", described)
    assert described["ComputeQuotaConfig"]["ComputeQuotaResources"] == [MIG]  # no documented derivation
    assert described["ComputeQuotaConfig"]["ResourceSharingConfig"] == LIMITS
    assert listed[0]["ComputeQuotaConfig"] == described["ComputeQuotaConfig"]


@pytest.mark.parametrize(("given", "stored"), [
    pytest.param({"Accelerators": 2}, {"Accelerators": 2, "VCpu": 24.0, "MemoryInGiB": 96.0},
                 id="accelerators-derive-vcpu-and-memory"),  # 2 of 4 GPUs: ratio 0.5 of 48 vCPU, 192 GiB
    pytest.param({"VCpu": 12.0}, {"VCpu": 12.0, "MemoryInGiB": 48.0, "Accelerators": 0},
                 id="vcpu-alone-derives-memory-accelerators-zero"),  # 12 of 48: 0.25 of 192 GiB
    pytest.param({"MemoryInGiB": 96.0}, {"MemoryInGiB": 96.0, "VCpu": 24.0, "Accelerators": 0},
                 id="memory-alone-derives-vcpu-accelerators-zero"),
    pytest.param({"Accelerators": 2, "VCpu": 10.0}, {"Accelerators": 2, "VCpu": 10.0},
                 id="given-amounts-are-kept"),
    pytest.param({"Count": 1}, {"Count": 1}, id="whole-instances-as-given"),
])
def test_ratio_derived_amounts_are_filled_in(sagemaker: Any, hyperpod_arn: str, given: dict[str, Any],
                                             stored: dict[str, Any]) -> None:
    created = sagemaker.create_compute_quota(**request(hyperpod_arn, resources=[{"InstanceType": G5, **given}]))

    described = sagemaker.describe_compute_quota(ComputeQuotaId=created["ComputeQuotaId"])

    assert described["ComputeQuotaConfig"]["ComputeQuotaResources"] == [{"InstanceType": G5, **stored}]


def test_update_replaces_and_removes_absolute_limits(sagemaker: Any, hyperpod_arn: str) -> None:
    created = sagemaker.create_compute_quota(**request(hyperpod_arn, resources=[MIG], sharing=LIMITS))
    quota_id = created["ComputeQuotaId"]
    fewer = {"Strategy": "LendAndBorrow", "AbsoluteBorrowLimits": [{"InstanceType": P5, "Accelerators": 8}]}
    config = {"ComputeQuotaResources": [MIG], "ResourceSharingConfig": fewer}

    sagemaker.update_compute_quota(ComputeQuotaId=quota_id, TargetVersion=1, ComputeQuotaConfig=config)
    changed = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)["ComputeQuotaConfig"]
    sagemaker.update_compute_quota(ComputeQuotaId=quota_id, TargetVersion=2, ComputeQuotaConfig={
        "ComputeQuotaResources": [MIG], "ResourceSharingConfig": {"Strategy": "LendAndBorrow"}})
    removed = sagemaker.describe_compute_quota(ComputeQuotaId=quota_id)["ComputeQuotaConfig"]

    assert changed["ResourceSharingConfig"]["AbsoluteBorrowLimits"] == [{"InstanceType": P5, "Accelerators": 8}]
    assert "AbsoluteBorrowLimits" not in removed["ResourceSharingConfig"]


def _sixteen_limits() -> list[dict[str, Any]]:
    return [{"InstanceType": G5, "Count": 1}] * 16


INVALID: list[Any] = [
    pytest.param([{**MIG, "AcceleratorPartition": {"Type": "mig-8g.99gb", "Count": 1}}], None,
                 "enum value set", id="partition-profile-not-in-the-enum"),
    pytest.param([{**MIG, "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": -1}}], None,
                 "greater than or equal to 0", id="partition-count-negative"),
    pytest.param([{**MIG, "AcceleratorPartition": {"Count": 1}}], None,
                 "Value null at 'computeQuotaConfig.computeQuotaResources.1.member.acceleratorPartition.type'",
                 id="partition-without-type"),
    pytest.param([{"InstanceType": G5, "Accelerators": 10_000_001}], None,
                 "less than or equal to 10000000", id="accelerators-over-the-model-range"),
    pytest.param([{"InstanceType": P5, "AcceleratorPartition": {"Type": "mig-1g.5gb", "Count": 7}}], None,
                 "mig-1g.5gb is not supported on instance type ml.p5.48xlarge", id="profile-of-another-gpu"),
    pytest.param([{"InstanceType": G5, "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 1}}], None,
                 "does not support accelerator partitions", id="partition-on-a-gpu-without-mig"),
    pytest.param([MIG], {"Strategy": "Lend", "AbsoluteBorrowLimits": [{"InstanceType": P5, "Accelerators": 1}]},
                 "AbsoluteBorrowLimits is only allowed with the LendAndBorrow", id="absolute-limit-without-borrowing"),
    pytest.param([MIG], {"Strategy": "LendAndBorrow", "AbsoluteBorrowLimits": _sixteen_limits()},
                 "less than or equal to 15", id="sixteen-absolute-limits"),
    pytest.param([MIG], {"Strategy": "LendAndBorrow",
                         "AbsoluteBorrowLimits": [{"InstanceType": "ml.trn1.32xlarge", "Count": 1}]},
                 "Instance type ml.trn1.32xlarge is not in cluster", id="absolute-limit-type-not-in-cluster"),
    pytest.param([MIG, {"InstanceType": P5, "Count": 1}], None,
                 "appears more than once in ComputeQuotaResources", id="instance-type-twice"),
]


@pytest.mark.parametrize(("resources", "sharing", "message"), INVALID)
def test_invalid_fields_get_a_validation_exception(client: Callable[..., Any], hyperpod_arn: str,
                                                  resources: list[dict[str, Any]], sharing: dict[str, Any] | None,
                                                  message: str) -> None:
    unchecked = client("sagemaker", checked=False)

    code, status, got = error_of(unchecked.create_compute_quota,
                                 **request(hyperpod_arn, resources=resources, sharing=sharing))

    assert (code, status) == ("ValidationException", 400)
    assert message in got


@pytest.mark.parametrize("sharing", ["Enabled", "Disabled"])
def test_idle_resource_sharing_round_trips(sagemaker: Any, hyperpod_arn: str, sharing: str) -> None:
    config = {"PriorityClasses": [{"Name": "training", "Weight": 50}], "FairShare": "Enabled",
              "IdleResourceSharing": sharing}
    created = sagemaker.create_cluster_scheduler_config(Name="gpu-scheduler", ClusterArn=hyperpod_arn,
                                                        SchedulerConfig=config)

    config_id = created["ClusterSchedulerConfigId"]

    described = sagemaker.describe_cluster_scheduler_config(ClusterSchedulerConfigId=config_id)

    assert described["SchedulerConfig"]["IdleResourceSharing"] == sharing


def test_idle_resource_sharing_outside_the_enum_is_refused(client: Callable[..., Any], hyperpod_arn: str) -> None:
    unchecked = client("sagemaker", checked=False)

    code, status, message = error_of(unchecked.create_cluster_scheduler_config, Name="p", ClusterArn=hyperpod_arn,
                                     SchedulerConfig={"IdleResourceSharing": "On"})

    assert (code, status) == ("ValidationException", 400)
    assert "'schedulerConfig.idleResourceSharing' failed to satisfy constraint: Member must satisfy enum value set: " \
           "[Enabled, Disabled]" in message
