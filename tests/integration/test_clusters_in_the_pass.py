"""Declared clusters through the paths users take: `hypergov reconcile` (the daemon's pass) and
`hypergov apply`, against the embedded endpoint with the real terraform and a real Git repository.

One small tree (the example's org, its two clusters, project speech) plus clusters/gpu-new.yaml:
a managed task-governance cluster with no `hyperpod.arn`, one group of 4 ml.g5.12xlarge, on a
new EKS cluster in API mode, and speech guaranteed 2 of them there. The story, in order (one
endpoint for the module, so the tests share it and run in this order): the first pass creates the
cluster and then applies its scheduler config and quota on the ARN SageMaker gave it; a merge
request scales the group 4 -> 8 (the plan shows +16 GPUs: AWS gives ml.g5.12xlarge 4 A10G GPUs)
and the pass applies it; `hypergov apply` scales it down to 6; a head that deletes the file
without the decommission step is refused (CLU003) with a `rejected` record; the decommission
deletes the quota and the scheduler config (the cluster stack) before the cluster, audited.
Expected values come from the tree and AWS's documentation, checked with boto3 and git."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest
import yaml
from botocore.exceptions import ClientError
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.clusters.cluster_files import declared_cluster
from tests.integration.conftest import CONFIG, CREDENTIALS, PROD, REGION, audit_records

pytestmark = pytest.mark.integration
ACTOR = git.Actor("platform-admin", "admin@example.com")
NEW = "gpu-new"
GROUP = "g5-12xlarge"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[EmbeddedAwsProcess]:
    with pytest.MonkeyPatch.context() as env:
        for key, value in CREDENTIALS.items():
            env.setenv(key, value)
        process = EmbeddedAwsProcess(seed_config=CONFIG).start()
        try:
            process.client("eks", account=PROD, region=REGION).create_cluster(
                name=f"{NEW}-eks", roleArn=f"arn:aws:iam::{PROD}:role/{NEW}-eks",
                resourcesVpcConfig={"subnetIds": ["subnet-0123456789abcdef0"]},
                accessConfig={"authenticationMode": "API"})
            yield process
        finally:
            process.stop()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The governance repository (gov/) and the state directory, shared by the story's steps."""
    root = tmp_path_factory.mktemp("clusters-pass")
    gov = root / "gov"
    shutil.copytree(CONFIG, gov / "config")
    for team in ("nlp", "recsys", "research", "vision"):
        (gov / "config" / "projects" / f"{team}.yaml").unlink()
        shutil.rmtree(gov / "config" / "workloads" / team, ignore_errors=True)
    (gov / "config" / "clusters" / f"{NEW}.yaml").write_bytes(_gpu_new(4))
    _edit_speech(gov, {NEW: {"instances": {"ml.g5.12xlarge": 2}, "sharing": "DontLend"}})
    repo = git.Repo.init(gov, initial_branch="main")
    repo.index.add([str(p.relative_to(gov)) for p in (gov / "config").rglob("*") if p.is_file()])
    repo.index.commit("governance tree with a cluster to create", author=ACTOR, committer=ACTOR)
    return root


def _gpu_new(count: int, **hyperpod: object) -> bytes:
    return declared_cluster(((GROUP, "ml.g5.12xlarge", count),), example="gpu-west", name=NEW, eks=f"{NEW}-eks",
                            **hyperpod)


def _edit_speech(gov: Path, quotas: dict[str, Any] | None) -> None:
    """speech's quota on gpu-new set (a mapping) or removed (None)."""
    path = gov / "config" / "projects" / "speech.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["quotas"].pop(NEW, None)
    doc["quotas"].update(quotas or {})
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _commit(root: Path, message: str) -> str:
    repo = git.Repo(root / "gov")
    repo.git.add("-A", "config")
    return str(repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha)


def _env(endpoint: EmbeddedAwsProcess, root: Path) -> dict[str, str]:
    return {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(root / "state"),
            "HYPERGOV_SETTINGS": str(root / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3",
            "HYPERGOV_CONFIG_DIR": str(root / "gov" / "config")}


def _hypergov(endpoint: EmbeddedAwsProcess, root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=_env(endpoint, root))


def _sagemaker(endpoint: EmbeddedAwsProcess) -> Any:
    return endpoint.client("sagemaker", account=PROD, region=REGION)


def _counts(endpoint: EmbeddedAwsProcess) -> dict[str, int]:
    live = _sagemaker(endpoint).describe_cluster(ClusterName=NEW)
    assert live["ClusterStatus"] == "InService"
    return {g["InstanceGroupName"]: g["TargetCount"] for g in live["InstanceGroups"]}


def _governed(endpoint: EmbeddedAwsProcess, arn: str) -> tuple[list[str], list[str]]:
    """(scheduler configs, compute quotas) live on the cluster `arn`."""
    sagemaker, gone = _sagemaker(endpoint), ("Deleted", "Deleting")
    configs = sagemaker.list_cluster_scheduler_configs(ClusterArn=arn)["ClusterSchedulerConfigSummaries"]
    quotas = sagemaker.list_compute_quotas(ClusterArn=arn)["ComputeQuotaSummaries"]
    return (sorted(c["Name"] for c in configs if c.get("Status") not in gone),
            sorted(q["Name"] for q in quotas if q.get("Status") not in gone))


def _records_since(root: Path, seen: int) -> list[tuple[str, str]]:
    return [(r["type"], r.get("stack") or ",".join(s["stack"] for s in r.get("stacks", [])))
            for r in audit_records(root / "gov")[seen:]]


def test_the_first_pass_creates_the_cluster_then_applies_its_quotas_on_its_arn(endpoint: EmbeddedAwsProcess,
                                                                              root: Path) -> None:
    """No ARN in the tree: the pass creates gpu-new (InService, 4 instances), then applies the
    cluster stack with the ARN SageMaker gave it: scheduler config and speech's quota."""
    endpoint.clear_calls()
    result = _hypergov(endpoint, root, "reconcile")
    assert result.exit_code == 0, result.output
    assert _counts(endpoint) == {GROUP: 4}
    arn = _sagemaker(endpoint).describe_cluster(ClusterName=NEW)["ClusterArn"]
    assert _governed(endpoint, arn) == ([f"{NEW}-scheduler"], [f"speech-on-{NEW}"])
    operations = [c["operation"] for c in endpoint.calls()]
    assert operations.index("CreateCluster") < operations.index("CreateClusterSchedulerConfig")
    records = _records_since(root, 0)
    assert records[:2] == [("intent", "hyperpod-clusters"), ("outcome", "hyperpod-clusters")]
    assert ("outcome", f"cluster-{NEW}") in records[2:]
    assert audit_records(root / "gov")[1]["applied"] == [f"create hyperpod:Cluster:{NEW}"]


def test_a_merge_request_scales_the_group_and_the_pass_applies_it(endpoint: EmbeddedAwsProcess,
                                                                   root: Path) -> None:
    """4 -> 8 ml.g5.12xlarge on a branch: the merge-request plan shows +16 GPUs (exit 2); merged,
    the pass sends one UpdateCluster and DescribeCluster says 8."""
    repo = git.Repo(root / "gov")
    repo.git.checkout("-b", "more-g5")
    (root / "gov" / "config" / "clusters" / f"{NEW}.yaml").write_bytes(_gpu_new(8))
    _commit(root, "gpu-new: 4 more g5.12xlarge")
    planned = _hypergov(endpoint, root, "plan", "--base", "main", "--markdown", str(root / "mr.md"))
    assert planned.exit_code == 2, planned.output
    comment = (root / "mr.md").read_text()
    assert f"| `{NEW}` | scale | `{GROUP}` (ml.g5.12xlarge) | 4 -> 8 | +16 |" in comment
    assert f"hyperpod:Cluster:{NEW}" in comment  # the resource changes list the cluster too
    repo.git.checkout("main")
    repo.git.merge("--ff-only", "more-g5")
    endpoint.clear_calls()
    result = _hypergov(endpoint, root, "reconcile")
    assert result.exit_code == 0, result.output
    assert [c["operation"] for c in endpoint.calls()].count("UpdateCluster") == 1
    assert _counts(endpoint) == {GROUP: 8}
    # Drift compares what the pass declared: the stacks with the cluster's live ARN (speech's
    # policies name it), the groups as scaled; nothing differs.
    drift = _hypergov(endpoint, root, "drift")
    assert drift.exit_code == 0, drift.output


def test_hypergov_apply_scales_it_down_above_the_guarantee(endpoint: EmbeddedAwsProcess, root: Path) -> None:
    """8 -> 6 (speech is guaranteed 2): `hypergov apply --yes` shows the cluster's change, applies
    it audited, then plans the stacks; DescribeCluster says 6."""
    (root / "gov" / "config" / "clusters" / f"{NEW}.yaml").write_bytes(_gpu_new(6))
    _commit(root, "gpu-new: 6 g5.12xlarge")
    seen = len(audit_records(root / "gov"))
    result = _hypergov(endpoint, root, "apply", "--yes")
    assert result.exit_code == 0, result.output
    assert f"~ hyperpod:Cluster:{NEW}" in result.output
    assert _counts(endpoint) == {GROUP: 6}
    assert _records_since(root, seen)[:2] == [("intent", "hyperpod-clusters"), ("outcome", "hyperpod-clusters")]


def test_a_head_that_removes_the_file_without_decommission_is_refused(endpoint: EmbeddedAwsProcess,
                                                                       root: Path) -> None:
    """CLU003 against the last applied commit: nothing applied, one `rejected` record naming it."""
    (root / "gov" / "config" / "clusters" / f"{NEW}.yaml").unlink()
    _edit_speech(root / "gov", None)
    head = _commit(root, "drop gpu-new")
    seen = len(audit_records(root / "gov"))
    result = _hypergov(endpoint, root, "reconcile")
    assert result.exit_code == 1, result.output
    assert "CLU003" in result.output
    (record,) = audit_records(root / "gov")[seen:]
    assert (record["type"], record["source_commit"]) == ("rejected", head)
    assert [p["rule"] for p in record["problems"]] == ["CLU003"]
    assert _counts(endpoint) == {GROUP: 6}  # untouched
    git.Repo(root / "gov").git.revert("--no-edit", "HEAD")


def test_the_decommission_deletes_quota_and_scheduler_config_before_the_cluster(endpoint: EmbeddedAwsProcess,
                                                                                root: Path) -> None:
    """speech's quota removed and `decommission: true` in one merge: the cluster stack deletes the
    quota and the scheduler config, then DeleteCluster (through Deleting) with its own records."""
    arn = _sagemaker(endpoint).describe_cluster(ClusterName=NEW)["ClusterArn"]
    (root / "gov" / "config" / "clusters" / f"{NEW}.yaml").write_bytes(_gpu_new(6, decommission=True))
    _edit_speech(root / "gov", None)
    _commit(root, "decommission gpu-new")
    seen = len(audit_records(root / "gov"))
    endpoint.clear_calls()
    endpoint.set_transition("sagemaker::hyperpod-cluster", progression="manual", times=2)
    try:
        result = _hypergov(endpoint, root, "reconcile")
    finally:
        endpoint.set_transition("sagemaker::hyperpod-cluster", progression="immediate")
    assert result.exit_code == 0, result.output
    operations = [c["operation"] for c in endpoint.calls()]
    deleted = operations.index("DeleteCluster")
    assert operations.index("DeleteComputeQuota") < deleted
    assert operations.index("DeleteClusterSchedulerConfig") < deleted
    assert operations[deleted:].count("DescribeCluster") >= 2  # waited through Deleting until it was gone
    with pytest.raises(ClientError) as gone:
        _sagemaker(endpoint).describe_cluster(ClusterName=NEW)
    assert gone.value.response["Error"]["Code"] == "ResourceNotFound"
    assert _governed(endpoint, arn) == ([], [])
    records = _records_since(root, seen)
    stacks_outcome = records.index(("outcome", f"cluster-{NEW}"))
    assert records[-2:] == [("intent", "hyperpod-clusters"), ("outcome", "hyperpod-clusters")]
    assert stacks_outcome < len(records) - 2
    assert audit_records(root / "gov")[-1]["applied"] == [f"delete hyperpod:Cluster:{NEW}"]
