"""Crash tests: `hypergov reconcile` (a real process, the real terraform, the embedded endpoint, a
bare remote and the reconciler's clone of it) is killed with SIGKILL at each phase by a failpoint
(`HYPERGOV_FAILPOINTS`): after the intent record, mid-apply (the first stack applied, the next
starting), after the apply before the outcome records, and before the push. The restart must
converge to the tree, `audit verify` must pass on the clone and on the remote, and the records
must be exactly the expected sequence (nothing lost, nothing twice): an intent a killed process
left is resolved as `interrupted` once, for its stacks, which are planned again.

The killed process held the reconciler's lock (an flock: the kernel releases it at death), so
the restart is not busy; a live holder of that lock makes a pass exit 75. Terraform's local
state lock is an OS lock too: a `terraform apply` killed while holding it (waiting at its
prompt) leaves its lock-info file behind, and the next plan is not blocked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import git
import pytest
import yaml

from embedded_aws import EmbeddedAwsProcess
from reconciler.reconcile import LOCK_FILE
from tests.integration.common import reconciler_env as _env
from tests.integration.common import remote_and_clone as _remote_and_clone
from tests.integration.common import run_hypergov as _hypergov
from tests.integration.conftest import CONFIG, CREDENTIALS, MANAGEMENT, PROD, REGION, audit_records
from tests.integration.test_reconcile import _governance_repo

pytestmark = pytest.mark.integration
GOVERNED = tuple(a["id"] for a in yaml.safe_load((CONFIG / "org.yaml").read_text())["accounts"])
APPLIED = ["org", "cluster-gpu-west", "project-speech"]  # the trimmed tree's stacks with changes on a first pass



def _resolved_once(records: list[dict[str, object]]) -> None:
    """Every intent's stacks end exactly once, as an outcome or as interrupted; seq is 1..n."""
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    for intent in (r for r in records if r["type"] == "intent"):
        ends = sorted(str(r["stack"]) for r in records if r["type"] in ("outcome", "interrupted")
                      and r.get("intent") == intent["intent"])
        assert ends == sorted(str(s["stack"]) for s in intent["stacks"]), (intent, ends)  # type: ignore[union-attr]


EXPECTED = {  # (types of the records after the restart, the stacks the restart's intent names)
    "after-intent": (["intent", *["interrupted"] * 3, "intent", *["outcome"] * 3], APPLIED),
    # org's terraform killed with its first object created: org is half applied, planned again
    "in-terraform-apply": (["intent", *["interrupted"] * 3, "intent", *["outcome"] * 3], APPLIED),
    "mid-apply": (["intent", *["interrupted"] * 3, "intent", *["outcome"] * 2], APPLIED[1:]),  # org was applied
    "after-apply": (["intent", *["interrupted"] * 3], None),  # all applied: the plans again are empty
    "before-push": (["intent", *["outcome"] * 3], None),  # recorded; only the push was lost
}


@pytest.mark.parametrize("failpoint", list(EXPECTED))
def test_killed_at_each_phase_the_restart_converges_and_the_trail_is_whole(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path, failpoint: str) -> None:
    remote, clone, tree_commit = _remote_and_clone(tmp_path)
    killed = _hypergov(_env(own_endpoint, tmp_path, failpoint), tmp_path, "reconcile")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert (tmp_path / "state" / LOCK_FILE).exists()  # held at death: the kernel released the flock
    if failpoint == "in-terraform-apply":  # killed inside terraform, once it had created something
        created = killed.stderr[-2000:]
        assert _live_org_objects(own_endpoint), f"terraform was killed before it created anything: {created}"

    if failpoint == "before-push":  # the killed pass applied every stack: only its push was lost
        failed = [(r["stack"], r.get("error")) for r in audit_records(clone) if r["type"] == "outcome"
                  and r["outcome"] != "applied"]
        assert not failed, f"the killed pass failed a stack, not only its push: {failed}"

    restarted = _hypergov(_env(own_endpoint, tmp_path), tmp_path, "reconcile")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr  # not busy, converged
    types, again = EXPECTED[failpoint]
    records = audit_records(clone)
    assert [r["type"] for r in records] == types, records
    _resolved_once(records)
    if "interrupted" in types:
        assert [r["stack"] for r in records if r["type"] == "interrupted"] == APPLIED
        assert "recorded as interrupted and planned again: org, cluster-gpu-west, project-speech" in restarted.stderr
    if again is not None:
        assert [s["stack"] for s in records[4]["stacks"]] == again
        assert {r["outcome"] for r in records[5:]} == {"applied"}
    iam = own_endpoint.client("iam", account=PROD, region=REGION)
    assert "acme-speech-lead" in {r["RoleName"] for r in iam.list_roles(PathPrefix="/hypergov/")["Roles"]}
    quotas = own_endpoint.client("sagemaker", account=PROD, region=REGION).list_compute_quotas()
    assert "speech-on-gpu-west" in {q["Name"] for q in quotas["ComputeQuotaSummaries"]}

    assert audit_records(remote) == records  # every record pushed, none waiting
    assert git.Repo(remote).commit("main").hexsha == tree_commit  # the governed branch untouched
    for where in ([], ["--repo", str(remote)]):
        verified = _hypergov(_env(own_endpoint, tmp_path), tmp_path, "audit", "verify", *where)
        assert verified.returncode == 0 and f"intact: {len(records)} record(s)" in verified.stdout, verified.stderr
    steady = _hypergov(_env(own_endpoint, tmp_path), tmp_path, "reconcile")
    assert steady.returncode == 0 and "up to date" in steady.stdout, steady.stderr
    assert audit_records(clone) == records  # a restart that finds everything done adds nothing
    if failpoint == "mid-apply":
        _a_dead_terraform_lock_holder_does_not_block(own_endpoint, tmp_path)


def _live_org_objects(endpoint: EmbeddedAwsProcess) -> list[str]:
    """Names of the org stack's roles, policies, topics and SCPs that are live in AWS, in every
    account the tree governs (the boundary policy is made in each, so it may be the first created)."""
    found: list[str] = []
    for account in GOVERNED:
        iam = endpoint.client("iam", account=account, region=REGION)
        found += [r["RoleName"] for r in iam.list_roles(PathPrefix="/hypergov-platform/")["Roles"]]
        found += [p["PolicyName"] for p in iam.list_policies(Scope="Local")["Policies"]]
        found += [t["TopicArn"] for t in endpoint.client("sns", account=account, region=REGION).list_topics()["Topics"]]
    organizations = endpoint.client("organizations", account=MANAGEMENT, region=REGION)
    found += [p["Name"] for p in organizations.list_policies(Filter="SERVICE_CONTROL_POLICY")["Policies"]
              if p["Name"] != "FullAWSAccess"]
    return found


def terraform_at_its_prompt(directory: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """`terraform apply -replace=<first managed address>` in its own process group, once it waits for "yes":
    a replace always has something to confirm, so terraform has planned and holds the state lock."""
    listed = subprocess.run(["terraform", "state", "list"], cwd=directory, env=env, capture_output=True, text=True,
                            check=True).stdout.split()
    address = next(a for a in listed if not a.startswith("data."))  # -replace takes managed resources only
    holder = subprocess.Popen(["terraform", "apply", "-no-color", f"-replace={address}"], cwd=directory, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    assert holder.stdout is not None
    said = ""
    while "Enter a value" not in said:
        chunk = holder.stdout.read(1)
        assert chunk, f"terraform ended without waiting at its prompt:\n{said}"
        said += chunk
    return holder


def _a_dead_terraform_lock_holder_does_not_block(endpoint: EmbeddedAwsProcess, root: Path) -> None:
    org = root / "state" / "stacks" / "org"
    env = {**os.environ, **CREDENTIALS}
    holder = terraform_at_its_prompt(org, env)
    assert (org / ".terraform.tfstate.lock.info").exists()  # held by a live terraform
    holder.kill()
    holder.wait(timeout=30)
    assert (org / ".terraform.tfstate.lock.info").exists()  # the lock's note is left, the OS lock is gone
    plan = _hypergov(_env(endpoint, root), root, "plan", "--stack", "org")
    assert plan.returncode == 0, plan.stdout + plan.stderr  # not blocked (plans use -lock-timeout=60s)


def test_the_reconcilers_lock_of_a_live_holder_is_busy_and_of_a_dead_one_is_not(
        endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    repo = _governance_repo(tmp_path / "gov")
    target = Path(repo.working_dir) / "config" / "projects" / "speech.yaml"
    target.write_bytes(target.read_bytes().replace(b"sharing: DontLend", b"sharing: Hoard"))  # refused quickly
    repo.index.add(["config/projects/speech.yaml"])
    repo.index.commit("invalid")
    (tmp_path / "state").mkdir()
    code = (f"import fcntl, sys; h = open({str(tmp_path / 'state' / LOCK_FILE)!r}, 'w'); "
            "fcntl.flock(h, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    busy = _hypergov(_env(endpoint, tmp_path), tmp_path, "reconcile")
    assert busy.returncode == 75 and "another reconciler or hypergov apply is running" in busy.stderr
    holder.kill()
    holder.wait(timeout=30)
    after = _hypergov(_env(endpoint, tmp_path), tmp_path, "reconcile")
    assert after.returncode == 1 and "REFUSED, the tree fails validation" in after.stderr, after.stderr
    (rejected,) = audit_records(tmp_path / "gov")
    assert rejected["type"] == "rejected"
