"""The HyperPod driver's decisions (pure) and how it carries them out. The SageMaker API is the
boundary. Moto lacks its compute-quota and scheduler-config operations; the embedded endpoint
(`embedded_aws`) serves them, checked against botocore's models in tests/embedded_endpoint/
(test_compute_quota_contract.py, test_scheduler_config_contract.py), and the driver applies through
it over real HTTP in tests/engines/test_live_quota_fields.py and, under terraform's HyperPod
executor, in tests/integration/. Here `apply_change` runs against a small in-memory fake of the
scheduler-config operations instead, which records the writes the driver makes: one create, nothing
while converged, then one update."""

from __future__ import annotations

from typing import Any

import pytest

from engines.hyperpod import driver as d
from engines.pulumi.scheduler_config_provider import prop_change
from hypergov.hyperpod_requests import scheduler_config_request

ARN = "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdefabcdef"
DESIRED = scheduler_config_request(name="c-scheduler", cluster_arn=ARN, priority_classes={"a": 10, "b": 90},
                                   fair_share=True, idle_resource_sharing=True)


def _observed(**changes: Any) -> d.Observed:
    fields = {k: v for k, v in DESIRED.items() if k != "Name"}
    fields["SchedulerConfig"] = {**fields["SchedulerConfig"], **changes.pop("config", {})}
    fields.update(changes)
    return d.Observed(id="id1", arn="arn:x", version=3, fields=fields, tags={"t": "1"})


@pytest.mark.parametrize(("observed", "action", "changed"), [
    pytest.param(None, "create", ("ClusterArn", "Name", "SchedulerConfig"), id="absent"),
    pytest.param(_observed(), "none", (), id="equal"),
    pytest.param(_observed(config={"PriorityClasses": [{"Name": "b", "Weight": 90}, {"Name": "a", "Weight": 10}]}),
                 "none", (), id="reordered-is-equal"),
    pytest.param(_observed(config={"FairShare": "Disabled"}), "update", ("SchedulerConfig.FairShare",), id="changed"),
    pytest.param(_observed(ClusterArn="arn:other"), "replace", ("ClusterArn",), id="create-only-changed"),
])
def test_plan_change(observed: d.Observed | None, action: str, changed: tuple[str, ...]) -> None:
    change = d.plan_change(d.SCHEDULER_CONFIG, desired=DESIRED, desired_tags={"t": "1"}, observed=observed)
    assert (change.action, change.changed) == (action, changed)


def test_service_filled_fields_are_not_drift() -> None:
    desired = {"Name": "q", "ClusterArn": ARN, "ComputeQuotaConfig": {"ComputeQuotaResources": [
        {"InstanceType": "ml.p5.48xlarge", "Count": 2}]}}
    observed = d.Observed(id="q1", arn="a", version=1, tags={}, fields={"ClusterArn": ARN, "ComputeQuotaConfig": {
        "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": 2, "VCpu": 384.0}]}})
    assert d.plan_change(d.COMPUTE_QUOTA, desired=desired, desired_tags={}, observed=observed).action == "none"


def test_team_change_replaces_a_quota() -> None:
    desired = {"Name": "q", "ClusterArn": ARN, "ComputeQuotaTarget": {"TeamName": "new"}}
    observed = d.Observed(id="q1", arn="a", version=1, tags={},
                          fields={"ClusterArn": ARN, "ComputeQuotaTarget": {"TeamName": "old"}})
    assert d.plan_change(d.COMPUTE_QUOTA, desired=desired, desired_tags={}, observed=observed).action == "replace"


def test_tag_drift_is_an_update_of_tags_only() -> None:
    change = d.plan_change(d.SCHEDULER_CONFIG, desired=DESIRED, desired_tags={"t": "2", "n": "x"},
                           observed=_observed())
    assert (change.action, change.changed, change.tags_to_set) == ("update", (), {"t": "2", "n": "x"})


class FakeSageMaker:
    """In-memory ClusterSchedulerConfig operations (see module docstring)."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []

    def list_cluster_scheduler_configs(self, **kw: Any) -> dict[str, Any]:
        return {"ClusterSchedulerConfigSummaries": [
            {"Name": i["Name"], "ClusterSchedulerConfigId": k, "Status": "Created"} for k, i in self.items.items()
            if kw["NameContains"] in i["Name"] and i["ClusterArn"] == kw["ClusterArn"]]}

    def describe_cluster_scheduler_config(self, **kw: Any) -> dict[str, Any]:
        item = self.items[kw["ClusterSchedulerConfigId"]]
        return {**item, "ClusterSchedulerConfigId": kw["ClusterSchedulerConfigId"],
                "ClusterSchedulerConfigArn": f"arn:{kw['ClusterSchedulerConfigId']}",
                "ClusterSchedulerConfigVersion": 1}

    def create_cluster_scheduler_config(self, **kw: Any) -> dict[str, Any]:
        self.calls.append("create")
        new_id = f"id{len(self.items) + 1}"
        self.items[new_id] = dict(kw)
        return {"ClusterSchedulerConfigId": new_id}

    def update_cluster_scheduler_config(self, **kw: Any) -> dict[str, Any]:
        self.calls.append("update")
        self.items[kw["ClusterSchedulerConfigId"]]["SchedulerConfig"] = kw["SchedulerConfig"]
        return {}

    def delete_cluster_scheduler_config(self, **kw: Any) -> dict[str, Any]:
        self.calls.append("delete")
        del self.items[kw["ClusterSchedulerConfigId"]]
        return {}

    def list_tags(self, **kw: Any) -> dict[str, Any]:
        item = self.items[kw["ResourceArn"].removeprefix("arn:")]
        return {"Tags": item.get("Tags", [])}

    def add_tags(self, **kw: Any) -> dict[str, Any]:
        self.calls.append("add_tags")
        return {}


def test_apply_creates_then_converges() -> None:
    client = FakeSageMaker()
    for _ in range(2):
        observed = d.observe(client, d.SCHEDULER_CONFIG, name="c-scheduler", cluster_arn=ARN)  # type: ignore[arg-type]
        change = d.plan_change(d.SCHEDULER_CONFIG, desired=DESIRED, desired_tags={"t": "1"}, observed=observed)
        d.apply_change(client, d.SCHEDULER_CONFIG, change=change, desired=DESIRED,  # type: ignore[arg-type]
                       desired_tags={"t": "1"}, observed=observed)
    assert client.calls == ["create"]
    changed = {**DESIRED, "SchedulerConfig": {**DESIRED["SchedulerConfig"], "FairShare": "Disabled"}}
    observed = d.observe(client, d.SCHEDULER_CONFIG, name="c-scheduler", cluster_arn=ARN)  # type: ignore[arg-type]
    change = d.plan_change(d.SCHEDULER_CONFIG, desired=changed, desired_tags={"t": "1"}, observed=observed)
    d.apply_change(client, d.SCHEDULER_CONFIG, change=change, desired=changed,  # type: ignore[arg-type]
                   desired_tags={"t": "1"}, observed=observed)
    assert client.calls == ["create", "update"]
    assert client.items["id1"]["SchedulerConfig"]["FairShare"] == "Disabled"


@pytest.mark.parametrize(("news", "action"), [
    pytest.param({"request": DESIRED, "tags": {}}, "none", id="same"),
    pytest.param({"request": {**DESIRED, "Name": "renamed"}, "tags": {}}, "replace", id="renamed"),
    pytest.param({"request": {**DESIRED, "ClusterArn": "arn:b"}, "tags": {}}, "replace", id="moved"),
])
def test_dynamic_provider_diff_uses_the_driver(news: dict[str, Any], action: str) -> None:
    assert prop_change({"request": DESIRED, "tags": {}}, news).action == action


QUOTA = {"Name": "q", "ClusterArn": ARN, "ComputeQuotaConfig": {
    "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 8}],
    "ResourceSharingConfig": {"Strategy": "LendAndBorrow"}}}


@pytest.mark.parametrize(("live_sharing", "action", "changed"), [
    pytest.param({"Strategy": "LendAndBorrow"}, "none", (), id="none-either-side"),
    pytest.param({"Strategy": "LendAndBorrow", "AbsoluteBorrowLimits": []}, "none", (), id="empty-is-absent"),
    pytest.param({"Strategy": "LendAndBorrow", "AbsoluteBorrowLimits": [{"InstanceType": "ml.p5.48xlarge",
                                                                         "Accelerators": 4}]},
                 "update", ("ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits",), id="added-live"),
])
def test_absolute_limits_absent_compare_as_empty(live_sharing: dict[str, Any], action: str,
                                                 changed: tuple[str, ...]) -> None:
    live_config = {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 8, "VCpu": 192.0,
                                              "MemoryInGiB": 2048.0}], "ResourceSharingConfig": live_sharing}
    observed = d.Observed(id="q1", arn="a", version=1, tags={},
                          fields={"ClusterArn": ARN, "ComputeQuotaConfig": live_config})

    change = d.plan_change(d.COMPUTE_QUOTA, desired=QUOTA, desired_tags={}, observed=observed)

    assert (change.action, change.changed) == (action, changed)
