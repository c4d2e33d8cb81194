"""The provider engine killed in the middle of an apply (issue 34): `hypergov reconcile` with
`engine: provider` (a real process, the hashicorp/aws provider spoken to over the plugin protocol,
the embedded endpoint, a bare remote and the reconciler's clone) is SIGKILLed, providers and all,
once the org stack's first object is in AWS and in its `terraform.tfstate` (the
`in-terraform-apply` failpoint, which the provider runner honours as the terraform runner does).
Other objects of the stack may be in AWS and not in the state: they were being applied side by
side. The restart, by either engine, must converge to the tree; the other engine must then find
nothing to do; `audit verify` must pass on the clone and on the remote; and the records must be
the same sequence the terraform engine's crash test expects (`test_reconcile_crash`).

Expected values come from the tree (the roles and quotas it declares, read back with boto3), from
the audit sequence the write-ahead design prescribes, and from terraform's own empty plan."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import git
import pytest

from embedded_aws import EmbeddedAwsProcess
from tests.integration.common import reconciler_env, remote_and_clone, run_hypergov
from tests.integration.conftest import PROD, REGION, audit_records
from tests.integration.test_reconcile_crash import APPLIED, EXPECTED, _live_org_objects, _resolved_once

pytestmark = pytest.mark.integration
KILLED_AT = "in-terraform-apply"
OTHER = {"provider": "terraform", "terraform": "provider"}


def _env(endpoint: EmbeddedAwsProcess, root: Path, engine: str, failpoint: str | None = None) -> dict[str, str]:
    return {**reconciler_env(endpoint, root, failpoint), "HYPERGOV_ENGINE": engine}


@pytest.mark.parametrize("restart_with", ["provider", "terraform"])
def test_killed_mid_apply_the_state_left_is_one_either_engine_converges_from(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path, restart_with: str) -> None:
    remote, clone, tree_commit = remote_and_clone(tmp_path)
    killed = run_hypergov(_env(own_endpoint, tmp_path, "provider", KILLED_AT), tmp_path, "reconcile")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    state = json.loads((tmp_path / "state" / "stacks" / "org" / "terraform.tfstate").read_text())
    recorded = [r["type"] for r in state["resources"] if r["mode"] == "managed"]
    assert recorded, "the provider engine was killed before it recorded anything"
    assert _live_org_objects(own_endpoint), "the provider engine was killed before it created anything"

    restarted = run_hypergov(_env(own_endpoint, tmp_path, restart_with), tmp_path, "reconcile")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    types, again = EXPECTED[KILLED_AT]
    records = audit_records(clone)
    assert [r["type"] for r in records] == types, records
    _resolved_once(records)
    assert [r["stack"] for r in records if r["type"] == "interrupted"] == APPLIED
    assert again is not None and [s["stack"] for s in records[4]["stacks"]] == again
    assert {r["outcome"] for r in records[5:]} == {"applied"}, records[5:]
    iam = own_endpoint.client("iam", account=PROD, region=REGION)
    assert "acme-speech-lead" in {r["RoleName"] for r in iam.list_roles(PathPrefix="/hypergov/")["Roles"]}
    quotas = own_endpoint.client("sagemaker", account=PROD, region=REGION).list_compute_quotas()
    assert "speech-on-gpu-west" in {q["Name"] for q in quotas["ComputeQuotaSummaries"]}

    assert audit_records(remote) == records
    assert git.Repo(remote).commit("main").hexsha == tree_commit
    for where in ([], ["--repo", str(remote)]):
        verified = run_hypergov(_env(own_endpoint, tmp_path, restart_with), tmp_path, "audit", "verify", *where)
        assert verified.returncode == 0 and f"intact: {len(records)} record(s)" in verified.stdout, verified.stderr
    other = _env(own_endpoint, tmp_path, OTHER[restart_with])
    planned = run_hypergov(other, tmp_path, "plan")  # every stack of the tree, by the other engine
    assert planned.returncode == 0, planned.stdout + planned.stderr  # 0: nothing to do
    steady = run_hypergov(other, tmp_path, "reconcile")
    assert steady.returncode == 0 and "up to date" in steady.stdout, steady.stdout + steady.stderr
    assert audit_records(clone) == records  # a pass that finds everything done adds nothing
