"""Property: any single-cluster org a console user could make, imported, plans no change to any
object it imported.

Real: the embedded endpoint (botocore-validated, SageMaker's ratio derivation), the objects made
with boto3 from Hypothesis' draws (quotas in every unit CreateComputeQuota's model takes: Count,
Accelerators, VCpu, MemoryInGiB, AcceleratorPartition; Lend / LendAndBorrow / DontLend; borrow
limits in percent and absolute; priority classes, fair share, idle-resource sharing), the
import's reads (`engines.importing.read`) and decisions, hypergov's loader, and the HyperPod
driver's own plan of each declared object against the live one (`driver.observe` +
`driver.plan_change`, what `hypergov plan` and `apply` run for these objects). Not run per example:
terraform (the IAM, EKS and budget objects of the project stacks; the round-trip test plans those).
What hypergov adds is allowed and named: its Description on each object and its tags (tags are
not in `changed`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedded_aws import EmbeddedAwsProcess
from engines.hyperpod import driver
from engines.importing.decide import ImportOptions, decide_import
from engines.importing.live import KeptTree
from engines.importing.read import read_live_org
from engines.live.runner import CallCounter
from hypergov.stack_views import ClusterView, stack_view
from hypergov.validate import validate_files
from tests.integration.common import CONFIG, PROD, REGION

pytestmark = pytest.mark.integration
GPU_WEST = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"  # config/clusters/gpu-west.yaml
ORG = yaml.safe_load((CONFIG / "org.yaml").read_text())
OWNER = "arn:aws:iam::111122223333:role/PlatformAdministrator"
HYPERGOV_ADDS = {"Description"}  # what hypergov writes on every object and a console user may not
# per instance type of gpu-west (EC2: ml.p5.48xlarge 8 GPUs / 192 vCPU / 2048 GiB; ml.g5.12xlarge 4 / 48 / 192)
AMOUNTS = {
    "ml.p5.48xlarge": st.one_of(
        st.builds(lambda n: {"Count": n}, st.integers(1, 3)),
        st.builds(lambda n: {"Accelerators": n}, st.integers(1, 8)),
        st.sampled_from([{"VCpu": 48.0}, {"VCpu": 96.0}, {"MemoryInGiB": 512.0}, {"Accelerators": 4, "VCpu": 100.0}]),
        st.builds(lambda n: {"AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": n}}, st.integers(1, 7))),
    "ml.g5.12xlarge": st.one_of(
        st.builds(lambda n: {"Count": n}, st.integers(1, 3)),
        st.builds(lambda n: {"Accelerators": n}, st.integers(1, 4)),
        st.sampled_from([{"VCpu": 24.0}, {"MemoryInGiB": 96.0}])),
}


@st.composite
def quota(draw: st.DrawFn, team: str) -> dict[str, Any]:
    types = draw(st.lists(st.sampled_from(sorted(AMOUNTS)), min_size=1, max_size=2, unique=True))
    resources = [{"InstanceType": t, **draw(AMOUNTS[t])} for t in sorted(types)]
    strategy = draw(st.sampled_from(["Lend", "DontLend", "LendAndBorrow"]))
    sharing: dict[str, Any] = {"Strategy": strategy}
    if strategy == "LendAndBorrow":
        sharing["BorrowLimit"] = draw(st.integers(1, 500))
        if draw(st.booleans()):
            sharing["AbsoluteBorrowLimits"] = [{"InstanceType": "ml.g5.12xlarge",
                                                **draw(st.sampled_from([{"Count": 1}, {"Accelerators": 2}]))}]
    return {"Name": f"{team}-on-gpu-west", "ClusterArn": GPU_WEST,
            "ComputeQuotaConfig": {"ComputeQuotaResources": resources, "ResourceSharingConfig": sharing,
                                   "PreemptTeamTasks": draw(st.sampled_from(["LowerPriority", "Never"]))},
            "ComputeQuotaTarget": {"TeamName": team, "FairShareWeight": draw(st.integers(0, 100))},
            "ActivationState": "Enabled"}


@st.composite
def console_org(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    names = draw(st.lists(st.sampled_from(["inference", "training", "experimentation", "batch"]), min_size=1,
                          max_size=4, unique=True))
    scheduler = {"Name": "gpu-west-scheduler", "ClusterArn": GPU_WEST, "SchedulerConfig": {
        "PriorityClasses": [{"Name": n, "Weight": draw(st.integers(0, 100))} for n in names],
        "FairShare": draw(st.sampled_from(["Enabled", "Disabled"])),
        "IdleResourceSharing": draw(st.sampled_from(["Enabled", "Disabled"]))}}
    teams = draw(st.lists(st.sampled_from(["vision", "speech", "nlp"]), min_size=1, max_size=3, unique=True))
    return scheduler, [draw(quota(t)) for t in sorted(teams)]


class _Clients:
    def __init__(self, endpoint: EmbeddedAwsProcess) -> None:
        self.endpoint = endpoint

    def client(self, service: str, *, region: str, account: str | None = None) -> Any:
        return self.endpoint.client(service, account=account or PROD, region=region)


@pytest.fixture(scope="module")
def sagemaker(endpoint: EmbeddedAwsProcess) -> Iterator[Any]:
    yield endpoint.client("sagemaker", account=PROD, region=REGION)


def _clear(sagemaker: Any) -> None:
    for kind in (driver.COMPUTE_QUOTA, driver.SCHEDULER_CONFIG):
        for object_id in driver.live_ids(sagemaker, kind, cluster_arn=GPU_WEST).values():
            getattr(sagemaker, kind.op("delete"))(**{kind.id_key: object_id})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(org=console_org())
def test_an_imported_org_plans_no_change_to_what_it_imported(org: tuple[dict[str, Any], list[dict[str, Any]]],
                                                              endpoint: EmbeddedAwsProcess, sagemaker: Any) -> None:
    scheduler, quotas = org
    _clear(sagemaker)
    sagemaker.create_cluster_scheduler_config(**scheduler)
    for request in quotas:
        sagemaker.create_compute_quota(**request)
    live = read_live_org(_Clients(endpoint), [GPU_WEST], org=ORG, calls=CallCounter())
    imported = decide_import(live, KeptTree(source=str(CONFIG), org=ORG), ImportOptions(owner=OWNER))
    report = validate_files(imported.files())
    assert not [p for p in report.problems if p.rule.startswith(("SYN", "SCH"))], report.problems
    # only what a console org without cost tags, access entries and budgets lacks for hypergov's rules
    assert {p.rule for p in report.problems if p.severity.value == "error"} <= {
        "COST001", "COST002", "COST003", "IDN005"}, report.problems
    assert {i.kind for i in imported.report.items} <= {"invalid"}, imported.report.items
    view = stack_view(report.tree, "cluster", "gpu-west")
    assert isinstance(view, ClusterView)
    desired = [(driver.SCHEDULER_CONFIG, "gpu-west-scheduler", view.scheduler_config_request(cluster_arn=GPU_WEST))]
    desired += [(driver.COMPUTE_QUOTA, q.name, q.request(cluster_arn=GPU_WEST)) for q in view.quotas.values()]
    assert sorted(name for _, name, _ in desired) == sorted(["gpu-west-scheduler", *(q["Name"] for q in quotas)])
    for kind, name, request in desired:
        observed = driver.observe(sagemaker, kind, name=name, cluster_arn=GPU_WEST)
        change = driver.plan_change(kind, desired=request, desired_tags={}, observed=observed)
        assert change.action in ("none", "update"), (name, change)
        assert set(change.changed) <= HYPERGOV_ADDS, (name, change, request, observed)


def test_the_strategy_draws_every_unit() -> None:
    """The draws reach every unit of ComputeQuotaResourceConfig (botocore's model)."""
    import botocore.session
    from hypothesis import find

    model = botocore.session.get_session().get_service_model("sagemaker")
    for unit in set(model.shape_for("ComputeQuotaResourceConfig").members) - {"InstanceType"}:
        assert find(st.one_of(*AMOUNTS.values()), lambda amount, unit=unit: unit in amount)
