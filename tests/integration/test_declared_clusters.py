"""Clusters from the tree, against the embedded endpoint in its own process (seeded with the
example tree's clusters, as AWS would already run them) and, for the scheduler config and
quotas, the real terraform: create -> InService, adopt with the diff shown, scale a group 4 -> 8,
a scale-down below the teams' guarantees and a decommission with quotas refused by the rules,
and a decommission that deletes the scheduler config, the quotas and the cluster with audit records.

Expected values are by hand from the tree and AWS's documentation: GPUs per instance are AWS's
published counts (ml.g5.48xlarge 8 A10G, ml.p4d.24xlarge 8 A100, ml.trn1.32xlarge 16 Trainium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest
from botocore.exceptions import ClientError

from embedded_aws import EmbeddedAwsProcess
from engines.hyperpod.cluster_driver import Waiting
from engines.hyperpod.cluster_executor import ClusterExecutor, PlannedCluster, cluster_plan, declared_clusters
from engines.plan import Action, StackName
from hypergov.validate import ValidationReport, validate_files
from reconciler.audit import AuditLog
from reconciler.clusters import apply_clusters, clusters_markdown
from tests.clusters.cluster_files import GPU_WEST_GROUPS, TRN_EAST_GROUPS, declared_cluster, with_files
from tests.integration.conftest import CONFIG, CREDENTIALS, PROD, EngineFactory, audit_records, example_files

pytestmark = pytest.mark.integration

RESEARCH = "444455556666"  # ml-research, where trn-east runs (config/org.yaml)
EAST = "us-east-1"
FAST = Waiting(timeout_s=30.0, poll_s=0.05)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[EmbeddedAwsProcess]:
    """An endpoint of this module's own (its clusters change shape here); conftest's `settings`
    and `engine_for` point at it, as this fixture overrides conftest's of the same name."""
    with pytest.MonkeyPatch.context() as env:
        for key, value in CREDENTIALS.items():
            env.setenv(key, value)
        process = EmbeddedAwsProcess(seed_config=CONFIG).start()
        try:
            yield process
        finally:
            process.stop()


def _valid(files: dict[str, bytes]) -> ValidationReport:
    report = validate_files(files)
    assert report.ok, report.problems
    return report


def _executor(endpoint: EmbeddedAwsProcess, progress: list[str] | None = None, *,
              check_eks: bool = True) -> ClusterExecutor:
    lines = progress if progress is not None else []
    eks_for = (lambda account, region: endpoint.client("eks", account=account, region=region)) if check_eks else None
    return ClusterExecutor(client_for=lambda account, region: endpoint.client("sagemaker", account=account,
                                                                              region=region),
                           waiting=FAST, progress=lines.append, eks_for=eks_for)


def _plan(endpoint: EmbeddedAwsProcess, files: dict[str, bytes], name: str) -> PlannedCluster:
    (found,) = [p for p in _executor(endpoint).plan(declared_clusters(_valid(files).tree)) if p.declared.key == name]
    return found


def _eks_cluster(endpoint: EmbeddedAwsProcess, name: str, authentication_mode: str) -> None:
    """An EKS cluster in the research account for a HyperPod cluster to be orchestrated by."""
    endpoint.client("eks", account=RESEARCH, region=EAST).create_cluster(
        name=name, roleArn=f"arn:aws:iam::{RESEARCH}:role/{name}",
        resourcesVpcConfig={"subnetIds": ["subnet-0123456789abcdef0"]},
        accessConfig={"authenticationMode": authentication_mode})


def _audit(tmp_path: Path) -> tuple[AuditLog, Path]:
    root = tmp_path / "gov"
    repo = git.Repo.init(root, initial_branch="main")
    (root / "README").write_text("governance\n")
    repo.index.add(["README"])
    actor = git.Actor("admin", "admin@example.com")
    repo.index.commit("init", author=actor, committer=actor)
    return AuditLog.open(root, state_dir=tmp_path / "state", branch="hypergov/audit"), root


def _describe(endpoint: EmbeddedAwsProcess, name: str, *, account: str = RESEARCH, region: str = EAST) -> Any:
    return endpoint.client("sagemaker", account=account, region=region).describe_cluster(ClusterName=name)


def _trn_east(groups: tuple[tuple[str, str, int], ...] = TRN_EAST_GROUPS, **hyperpod: object) -> dict[str, bytes]:
    return with_files(example_files(), clusters__trn_east=declared_cluster(groups, **hyperpod))


def test_a_cluster_declared_in_the_tree_is_created_and_goes_in_service(endpoint: EmbeddedAwsProcess,
                                                                        tmp_path: Path) -> None:
    """A new file clusters/trn-new.yaml (the trn-east groups: 16 trn1 x 16 + 8 p4d x 8 = 320
    accelerators) on a new EKS cluster in API mode: the plan creates it, apply waits through
    Creating to InService (the endpoint holds Creating for two describes)."""
    _eks_cluster(endpoint, "trn-new-eks", "API")
    files = with_files(example_files(), clusters__trn_new=declared_cluster(name="trn-new", eks="trn-new-eks"))
    planned = _plan(endpoint, files, "trn-new")
    assert planned.plan.action == "create" and planned.plan.gpu_delta == 16 * 16 + 8 * 8
    endpoint.set_transition("sagemaker::hyperpod-cluster", progression="manual", times=2)
    progress: list[str] = []
    log, _ = _audit(tmp_path)
    _, result = apply_clusters(_executor(endpoint, progress), [planned], audit=log)
    endpoint.set_transition("sagemaker::hyperpod-cluster", progression="immediate")
    assert result.ok, result.failures
    assert progress[0] == "cluster trn-new: Creating" and progress[-1] == "cluster trn-new: InService"
    live = _describe(endpoint, "trn-new")
    assert live["ClusterStatus"] == "InService"
    assert sorted((g["InstanceGroupName"], g["TargetCount"]) for g in live["InstanceGroups"]) == [
        ("p4d-24xlarge", 8), ("trn1-32xlarge", 16)]
    assert _plan(endpoint, files, "trn-new").plan.action == "none"  # nothing left to do


def test_an_eks_cluster_in_config_map_mode_is_refused_by_create_cluster(endpoint: EmbeddedAwsProcess,
                                                                         tmp_path: Path) -> None:
    """AWS: the EKS cluster's authentication mode must be API or API_AND_CONFIG_MAP; the error
    comes back per cluster, classified, and nothing is created."""
    eks = endpoint.client("eks", account=RESEARCH, region=EAST)
    eks.create_cluster(name="old-eks", roleArn=f"arn:aws:iam::{RESEARCH}:role/old-eks",
                       resourcesVpcConfig={"subnetIds": ["subnet-0123456789abcdef0"]})
    files = with_files(example_files(), clusters__trn_old=declared_cluster(name="trn-old", eks="old-eks"))
    # The plan reads the EKS cluster's mode and refuses before anything is done, saying the fix.
    refused = _plan(endpoint, files, "trn-old").plan
    assert refused.action == "none" and refused.refusal is not None
    assert "uses authentication mode CONFIG_MAP" in refused.refusal
    assert "--access-config authenticationMode=API_AND_CONFIG_MAP" in refused.refusal
    # Without that check, CreateCluster itself refuses (as AWS does), per cluster, classified.
    log, _ = _audit(tmp_path)
    (unchecked,) = [p for p in _executor(endpoint, check_eks=False).plan(declared_clusters(_valid(files).tree))
                    if p.declared.key == "trn-old"]
    assert unchecked.plan.action == "create"
    _, result = apply_clusters(_executor(endpoint, check_eks=False), [unchecked], audit=log)
    ((_, failure),) = result.failed
    assert "authentication mode" in failure.message
    with pytest.raises(ClientError):
        _describe(endpoint, "trn-old")


def test_adopt_shows_the_diff_then_takes_over_scale_4_to_8(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    """trn-east runs (seeded) with NodeRecovery Automatic; the tree wants None. Without adopt the
    plan only shows it; with adopt it changes exactly that. Then a new group of 4 g5.48xlarge
    (+32 GPUs), and 4 -> 8 (+4 x 8 = +32 GPUs) as an UpdateCluster naming only that group."""
    unadopted = _plan(endpoint, _trn_east(node_recovery="None"), "trn-east")
    assert unadopted.plan.action == "none" and "adopt: true" in (unadopted.plan.refusal or "")
    assert unadopted.plan.changed == ("NodeRecovery",)
    assert cluster_plan([unadopted]).notes[-1] == "trn-east: would change NodeRecovery"

    adopting = _plan(endpoint, _trn_east(node_recovery="None", adopt=True), "trn-east")
    assert adopting.plan.action == "adopt" and adopting.plan.changed == ("NodeRecovery",)
    assert adopting.plan.request == {"ClusterName": "trn-east", "NodeRecovery": "None"}
    log, repo = _audit(tmp_path)
    assert apply_clusters(_executor(endpoint), [adopting], audit=log)[1].ok
    assert _describe(endpoint, "trn-east")["NodeRecovery"] == "None"

    four = (*TRN_EAST_GROUPS, ("g5-48xlarge", "ml.g5.48xlarge", 4))
    added = _plan(endpoint, _trn_east(four, node_recovery="None"), "trn-east")
    assert added.plan.action == "scale" and added.plan.gpu_delta == 4 * 8
    assert apply_clusters(_executor(endpoint), [added], audit=log)[1].ok

    eight = (*TRN_EAST_GROUPS, ("g5-48xlarge", "ml.g5.48xlarge", 8))
    scaled = _plan(endpoint, _trn_east(eight, node_recovery="None"), "trn-east")
    assert scaled.plan.action == "scale" and scaled.plan.gpu_delta == (8 - 4) * 8
    assert [g["InstanceGroupName"] for g in scaled.plan.request["InstanceGroups"]] == ["g5-48xlarge"]
    plan = cluster_plan([scaled])
    (change,) = plan.actionable
    assert change.action == Action.UPDATE
    assert {a.path: (a.before, a.after) for a in change.attributes} == {
        "InstanceGroups.g5-48xlarge.InstanceCount (ml.g5.48xlarge)": (4, 8), "GPUs": (32, 64)}
    assert "trn-east: +32 GPUs" in plan.notes
    assert "| `trn-east` | scale | `g5-48xlarge` (ml.g5.48xlarge) | 4 -> 8 | +32 |" in clusters_markdown([scaled])
    endpoint.clear_calls()
    assert apply_clusters(_executor(endpoint), [scaled], audit=log)[1].ok
    assert [c["operation"] for c in endpoint.calls() if c["operation"].endswith("Cluster")].count("UpdateCluster") == 1
    counts = {g["InstanceGroupName"]: g["TargetCount"] for g in _describe(endpoint, "trn-east")["InstanceGroups"]}
    assert counts == {"trn1-32xlarge": 16, "p4d-24xlarge": 8, "g5-48xlarge": 8}
    assert [r["type"] for r in audit_records(repo)] == ["intent", "outcome"] * 3


def test_a_scale_down_below_the_guarantees_is_refused_before_any_plan() -> None:
    """research is guaranteed 8 p4d on trn-east; 8 -> 4 is CAP001, so no plan is made."""
    report = validate_files(_trn_east((("trn1-32xlarge", "ml.trn1.32xlarge", 16),
                                       ("p4d-24xlarge", "ml.p4d.24xlarge", 4))))
    assert not report.ok and [p.rule for p in report.problems] == ["CAP001"]


def _gpu_west(**hyperpod: object) -> bytes:
    return declared_cluster(GPU_WEST_GROUPS, example="gpu-west", **hyperpod)


def _without_gpu_west_projects(files: dict[str, bytes]) -> dict[str, bytes]:
    """Only research (on trn-east) is left: no project holds quota on gpu-west."""
    teams = ("nlp", "recsys", "speech", "vision")
    return {k: v for k, v in files.items() if not k.startswith(
        tuple(f"projects/{t}.yaml" for t in teams) + tuple(f"workloads/{t}/" for t in teams))}


def _live_on_gpu_west(endpoint: EmbeddedAwsProcess, arn: str) -> tuple[list[str], list[str]]:
    sagemaker = endpoint.client("sagemaker", account=PROD, region="us-west-2")
    gone = ("Deleted", "Deleting")
    configs = sagemaker.list_cluster_scheduler_configs(ClusterArn=arn)["ClusterSchedulerConfigSummaries"]
    quotas = sagemaker.list_compute_quotas(ClusterArn=arn)["ComputeQuotaSummaries"]
    return (sorted(c["Name"] for c in configs if c.get("Status") not in gone),
            sorted(q["Name"] for q in quotas if q.get("Status") not in gone))


def test_decommission_refused_with_quotas_then_deletes_everything_with_audit_records(
        endpoint: EmbeddedAwsProcess, engine_for: EngineFactory, tmp_path: Path) -> None:
    """gpu-west is adopted and its stack applied (scheduler config + 4 quotas, real terraform).
    decommission: true while nlp, recsys, speech and vision hold quota there is CLU002; with
    those projects gone it deletes the scheduler config, the quotas and the cluster."""
    arn = _describe(endpoint, "gpu-west", account=PROD, region="us-west-2")["ClusterArn"]
    adopted = with_files(example_files(), clusters__gpu_west=_gpu_west(adopt=True))
    log, repo = _audit(tmp_path)
    assert apply_clusters(_executor(endpoint), [_plan(endpoint, adopted, "gpu-west")], audit=log)[1].ok
    engine = engine_for(adopted)
    stack = StackName("cluster-gpu-west")
    assert engine.apply(stack, engine.plan(stack)).ok
    assert _live_on_gpu_west(endpoint, arn) == (
        ["gpu-west-scheduler"], ["nlp-on-gpu-west", "recsys-on-gpu-west", "speech-on-gpu-west", "vision-on-gpu-west"])

    refused = validate_files(with_files(adopted, clusters__gpu_west=_gpu_west(decommission=True)))
    assert [p.rule for p in refused.problems] == ["CLU002"]
    assert "nlp, recsys, speech, vision" in refused.problems[0].message

    final = _without_gpu_west_projects(with_files(adopted, clusters__gpu_west=_gpu_west(decommission=True)))
    planned = _plan(endpoint, final, "gpu-west")
    assert planned.plan.action == "decommission" and planned.plan.gpu_delta == -(16 * 4 + 32 * 8)
    progress: list[str] = []
    plan, result = apply_clusters(_executor(endpoint, progress), [planned], audit=log)
    assert result.ok, result.failures
    assert [(c.address, c.action) for c in plan.actionable] == [("hyperpod:Cluster:gpu-west", Action.DELETE)]
    assert progress[:5] == ["cluster gpu-west: deleted ClusterSchedulerConfig gpu-west-scheduler",
                            *(f"cluster gpu-west: deleted ComputeQuota {t}-on-gpu-west"
                              for t in ("nlp", "recsys", "speech", "vision"))]
    with pytest.raises(ClientError):
        _describe(endpoint, "gpu-west", account=PROD, region="us-west-2")
    assert _live_on_gpu_west(endpoint, arn) == ([], [])
    records = audit_records(repo)
    assert [r["type"] for r in records[-2:]] == ["intent", "outcome"]
    assert records[-1]["applied"] == ["delete hyperpod:Cluster:gpu-west"] and records[-1]["outcome"] == "applied"


def test_drift_compares_live_groups_and_reports_status(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    """trn-drift is created from the tree (p4d x 8, trn1 x 16); someone scales p4d to 6 by hand:
    drift says InstanceCount expected 8, live 6, and while the cluster is Updating its status; a
    plan made then is refused until InService, and a wait that runs out is a timeout."""
    from engines.hyperpod.cluster_driver import ClusterTimeoutError, observe_cluster, wait_for
    from engines.live.hyperpod_clusters import cluster_drift

    _eks_cluster(endpoint, "trn-drift-eks", "API_AND_CONFIG_MAP")
    files = with_files(example_files(), clusters__trn_drift=declared_cluster(name="trn-drift", eks="trn-drift-eks"))
    planned = _plan(endpoint, files, "trn-drift")
    log, _ = _audit(tmp_path)
    assert apply_clusters(_executor(endpoint), [planned], audit=log)[1].ok
    client = endpoint.client("sagemaker", account=RESEARCH, region=EAST)
    assert cluster_drift(planned.declared, observe_cluster(client, "trn-drift")) == []

    endpoint.set_transition("sagemaker::hyperpod-cluster", progression="manual", times=1000)
    try:
        spec = {g["InstanceGroupName"]: g for g in planned.declared.request["InstanceGroups"]}["p4d-24xlarge"]
        client.update_cluster(ClusterName="trn-drift", InstanceGroups=[{**spec, "InstanceCount": 6}])
        (item,) = cluster_drift(planned.declared, observe_cluster(client, "trn-drift"))
        assert item.kind == "changed" and item.address == "hyperpod:Cluster:trn-drift"
        assert {(a.path, a.expected, a.live) for a in item.attributes} == {
            ("ClusterStatus", "InService", "Updating"), ("InstanceGroups.p4d-24xlarge.InstanceCount", 8, 6)}
        busy = _plan(endpoint, files, "trn-drift").plan
        assert busy.action == "none" and "is Updating" in (busy.refusal or "") and busy.live_status == "Updating"
        with pytest.raises(ClusterTimeoutError):
            wait_for(client, "trn-drift", gone=False, waiting=Waiting(timeout_s=0.2, poll_s=0.05), progress=print)
    finally:
        endpoint.set_transition("sagemaker::hyperpod-cluster", progression="immediate")
    restore = _plan(endpoint, files, "trn-drift").plan
    assert restore.action == "scale" and restore.gpu_delta == 2 * 8


def _repo_with(tmp_path: Path, files: dict[str, bytes]) -> git.Repo:
    for name, content in files.items():
        (tmp_path / "config" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "config" / name).write_bytes(content)
    repo = git.Repo.init(tmp_path, initial_branch="main")
    repo.index.add([f"config/{name}" for name in files])
    repo.index.commit("base")
    return repo


def _cli_plan(endpoint: EmbeddedAwsProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from click.testing import CliRunner

    from cli.main import main
    monkeypatch.chdir(tmp_path)
    env = {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3"}
    return CliRunner().invoke(main, ["plan", "--base", "main", "--markdown", "mr.md"], env=env)


def test_a_managed_cluster_file_removed_without_decommission_is_refused(
        endpoint: EmbeddedAwsProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The base declares trn-east (managed, no decommission) and no project uses it; the merge
    request deletes its file: CLU003, exit 1, and the comment says why."""
    files = _without_trn_east_projects(with_files(example_files(), clusters__trn_east=declared_cluster()))
    _valid(files)
    _repo_with(tmp_path, files)
    (tmp_path / "config" / "clusters" / "trn-east.yaml").unlink()
    result = _cli_plan(endpoint, tmp_path, monkeypatch)
    assert result.exit_code == 1, result.output
    assert "CLU003" in (tmp_path / "mr.md").read_text()


def _without_trn_east_projects(files: dict[str, bytes]) -> dict[str, bytes]:
    """nlp's trn-east quota (and its pretraining class, which runs on trn1) and research (only on
    trn-east) removed."""
    import yaml
    out = {k: v for k, v in files.items() if not k.startswith(
        ("projects/research.yaml", "workloads/research/", "workloads/nlp/pretraining.yaml"))}
    nlp = yaml.safe_load(out["projects/nlp.yaml"])
    nlp["quotas"].pop("trn-east")
    out["projects/nlp.yaml"] = yaml.safe_dump(nlp, sort_keys=False).encode()
    return out
