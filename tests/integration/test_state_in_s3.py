"""Terraform state in S3 (`state_backend: s3://bucket/prefix`): a real `hypergov reconcile` process,
the real terraform with its own S3 backend (`use_lockfile`: conditional writes of a `.tflock`
object) against the embedded endpoint's S3, a bare remote. The first pass of the trimmed tree
into S3 is made once per run and each test starts from a copy (`applied_once`). The state of every stack is written to
the bucket, not to the state directory; after the state directory is deleted, a new reconciler
finds every object in the S3 state (nothing to create, nothing to import); a bucket without
versioning is refused before anything is planned. The reconciler's applied-commit record and its
audit checkpoint live in the same bucket (`<prefix>/reconciler/`), so a reconciler with an empty
state directory knows what was applied: its pass is up to date without planning anything."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import git
import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.factory import reconciler_records, terraform_engine
from engines.leases import Lease, LeaseTiming
from engines.plan import StackName
from engines.settings import load_settings
from engines.terraform.backend import S3State, read_lock
from hypergov.gitsource import read_tree_at
from hypergov.validate import validate_files
from reconciler.replicas import Replica, Share
from reconciler.rollout import Carrying, Source
from tests.integration.applied_once import S3_STATE_BACKEND, STATE_BUCKET, restore, state_bucket
from tests.integration.common import reconciler_env as _env
from tests.integration.common import remote_and_clone as _remote_and_clone
from tests.integration.common import run_hypergov as _hypergov
from tests.integration.conftest import CREDENTIALS, MANAGEMENT, REGION, audit_records
from tests.integration.test_reconcile_crash import APPLIED, terraform_at_its_prompt

pytestmark = pytest.mark.integration
BUCKET, BACKEND = STATE_BUCKET, S3_STATE_BACKEND


def _states(endpoint: EmbeddedAwsProcess) -> dict[str, list[str]]:
    """Per state object in the bucket, the addresses it records."""
    s3 = endpoint.client("s3", account=MANAGEMENT, region=REGION)
    found = {}
    for item in s3.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        if item["Key"].endswith(".tfstate"):
            state = json.loads(s3.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read())
            found[item["Key"]] = sorted(f"{r['type']}.{r['name']}" for r in state["resources"])
    return found


def test_state_lives_in_s3_and_a_reconciler_without_its_disk_finds_it(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path, reconciled_into_s3: Path) -> None:
    clone = restore(reconciled_into_s3, own_endpoint, tmp_path) / "gov"
    env = {**_env(own_endpoint, tmp_path), "HYPERGOV_STATE_BACKEND": BACKEND}
    states = _states(own_endpoint)
    # The stacks with terraform resources (org and the project; the cluster stack holds HyperPod objects only).
    assert sorted(states) == ["prod/stacks/org/terraform.tfstate", "prod/stacks/project-speech/terraform.tfstate"]
    assert "aws_iam_role.platform-admin_ml-prod" in states["prod/stacks/org/terraform.tfstate"]
    assert "aws_iam_role.role-lead_ml-prod" in states["prod/stacks/project-speech/terraform.tfstate"]
    # Nothing of it on the local disk (`.terraform/terraform.tfstate` is terraform's note of the backend).
    assert not list((tmp_path / "state").glob("stacks/*/terraform.tfstate"))
    applied = len(audit_records(clone))

    s3 = own_endpoint.client("s3", account=MANAGEMENT, region=REGION)
    record = json.loads(s3.get_object(Bucket=BUCKET, Key="prod/reconciler/reconciler.json")["Body"].read())
    head = _head(clone)
    assert record["branches"]["main"]["applied_commit"] == head
    writer = (tmp_path / "state" / "audit" / "writer").read_text().strip()
    checkpoint = json.loads(s3.get_object(Bucket=BUCKET, Key=f"prod/reconciler/audit/{writer}/checkpoint.json")
                            ["Body"].read())
    last = audit_records(clone)[-1]
    [written] = checkpoint["hypergov/audit"]["written"]  # the last record this writer wrote
    assert written["seq"] == last["seq"] and len(written["sha256"]) == 64
    assert not (tmp_path / "state" / "reconciler.json").exists()
    assert not (tmp_path / "state" / "audit" / "checkpoint.json").exists()

    shutil.rmtree(tmp_path / "state")  # a new machine: the record in the bucket says what was applied
    again = _hypergov(env, tmp_path, "reconcile")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"main@{head[:12]}: up to date" in again.stdout, again.stdout
    assert len(audit_records(clone)) == applied  # nothing planned, nothing recorded

    shutil.rmtree(tmp_path / "state")  # and without the record either: every stack planned against S3 state
    s3.delete_object(Bucket=BUCKET, Key="prod/reconciler/reconciler.json")
    third = _hypergov(env, tmp_path, "reconcile")
    assert third.returncode == 0, third.stdout + third.stderr
    later = [r for r in audit_records(clone)[applied:] if r["type"] == "outcome"]
    actions = [a for r in later for a in r["applied"]]
    assert not [a for a in actions if a.startswith(("create aws_", "import "))], actions  # the state knew them
    assert {r["stack"] for r in later} <= set(APPLIED)


def _head(repo: Path) -> str:
    return git.Repo(repo).head.commit.hexsha


def test_a_state_bucket_without_versioning_is_refused_before_anything_is_planned(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    state_bucket(own_endpoint, versioned=False)
    _remote_and_clone(tmp_path)
    env = {**_env(own_endpoint, tmp_path), "HYPERGOV_STATE_BACKEND": BACKEND}
    refused = _hypergov(env, tmp_path, "plan")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"the state bucket s3://{BUCKET} has versioning never enabled" in refused.stderr
    assert "put-bucket-versioning" in refused.stderr and "Traceback" not in refused.stderr
    iam = own_endpoint.client("iam", account="111122223333", region=REGION)
    assert not iam.list_roles(PathPrefix="/hypergov/")["Roles"]  # nothing applied, nothing planned into AWS


def test_a_project_removed_after_the_state_dir_was_lost_is_destroyed_from_its_s3_state(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    """The removed stack's configuration and inventory are kept beside its state in S3, so a
    reconciler without the stack's directory plans its destroy instead of "nothing was ever applied".
    (Its own first pass, not the run's snapshot: the configuration kept in S3 names the endpoint
    it was applied through, and a copy of the snapshot serves on another one.)"""
    state_bucket(own_endpoint, versioned=True)
    _, clone, _ = _remote_and_clone(tmp_path)
    env = {**_env(own_endpoint, tmp_path), "HYPERGOV_STATE_BACKEND": BACKEND}
    first = _hypergov(env, tmp_path, "reconcile")
    assert first.returncode == 0, first.stdout + first.stderr
    s3 = own_endpoint.client("s3", account=MANAGEMENT, region=REGION)
    kept = {item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET, Prefix="prod/stacks/project-speech/")["Contents"]}
    assert {"prod/stacks/project-speech/main.tf.json", "prod/stacks/project-speech/inventory.json"} <= kept
    iam = own_endpoint.client("iam", account="111122223333", region=REGION)
    assert [r for r in iam.list_roles(PathPrefix="/hypergov/")["Roles"] if r["RoleName"] == "acme-speech-lead"]

    shutil.rmtree(tmp_path / "state")
    repo = git.Repo(clone)
    (clone / "config" / "projects" / "speech.yaml").unlink()
    shutil.rmtree(clone / "config" / "workloads" / "speech", ignore_errors=True)
    repo.git.add("-A", "config")
    repo.index.commit("speech leaves", author=git.Actor("dev", "dev@example.com"))
    removed = _hypergov(env, tmp_path, "reconcile")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    deleted = [r for r in audit_records(clone) if r["type"] == "outcome" and r["stack"] == "project-speech"
               and any(a.startswith("delete ") for a in r["applied"])]
    assert len(deleted) == 1, removed.stdout + removed.stderr
    [outcome] = deleted
    assert "delete aws_iam_role.role-lead_ml-prod" in outcome["applied"]
    assert not [r for r in iam.list_roles(PathPrefix="/hypergov/")["Roles"] if r["RoleName"] == "acme-speech-lead"]


def test_a_lock_left_by_a_killed_terraform_is_recognised_and_freed_by_the_stacks_next_holder(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path, reconciled_into_s3: Path) -> None:
    """A replica died in a stack's `terraform apply`: its S3 `.tflock` stays, and every later plan of
    the stack fails to acquire the lock. The replica that takes the stack's lease after the dead
    holder's lease expired (an in-process `Replica`, short lease timings) recognises the lock as the
    dead holder's (created before the lease was taken), force-unlocks it and plans and applies the
    stack. A lock created after the lease was taken (someone live) is never broken."""
    clone = restore(reconciled_into_s3, own_endpoint, tmp_path) / "gov"
    env = {**_env(own_endpoint, tmp_path), "HYPERGOV_STATE_BACKEND": BACKEND}
    stack = StackName("project-speech")
    directory = tmp_path / "state" / "stacks" / stack
    terraform_env = {**os.environ, **CREDENTIALS}
    _kill_terraform_holding_the_lock(directory, terraform_env)

    s3 = own_endpoint.client("s3", account=MANAGEMENT, region=REGION)
    lock = read_lock(s3, S3State.parse(BACKEND, region=REGION), stack)
    assert lock is not None and lock.id and lock.operation == "OperationTypeApply", lock
    assert lock.created is not None and lock.created <= datetime.now(UTC)
    blocked = subprocess.run(["terraform", "plan", "-no-color", "-input=false", "-lock-timeout=0s"], cwd=directory,
                             env=terraform_env, capture_output=True, text=True, check=False)
    assert blocked.returncode == 1 and "Error acquiring the state lock" in blocked.stderr, blocked.stderr
    assert lock.id in blocked.stderr  # the dead process's lock, as terraform names it

    settings = load_settings(environ=env)
    tree = validate_files(read_tree_at(clone, "HEAD", "config")).tree
    assert tree is not None
    clone_head = git.Repo(clone).head.commit.hexsha
    engine = terraform_engine(settings, tree, environ=env)
    before = lock.created - timedelta(seconds=1)
    assert engine.break_dead_lock(stack, lease_taken_at=before) is None  # newer than the lease: a live holder's
    assert read_lock(s3, S3State.parse(BACKEND, region=REGION), stack) == lock

    records = reconciler_records(settings, region=REGION)
    name = "leases/stacks/project-speech.json"  # the first pass's lease, released: the dead replica took it
    released = records.read(name)
    assert released is not None and released.data["holder"] == ""
    dead = Lease(holder="node-1:4242:5ca1ab1e", epoch=released.data["epoch"] + 1, duration_s=2.0)
    records.write(name, dead.as_record(), expected=released.etag)
    replica = Replica.start(records, parallelism=1, timing=LeaseTiming(duration_s=2.0, renew_deadline_s=1.5,
                                                                       retry_s=0.5))
    try:
        # This replica leads a pass of that one stack: no own stacks to apply before the project's.
        share = Share("main", "test#1", (stack,), engine, Source(tree, clone_head), gate=None, how=Carrying(),
                      lead_first=lambda: True)
        worked = replica.work(share)
    finally:
        replica.keeper.stop()
    assert not worked.failures and all(r.ok for r in worked.results), (worked.failures, worked.results)
    assert [p.stack for p in worked.plans] == [stack]
    assert read_lock(s3, S3State.parse(BACKEND, region=REGION), stack) is None  # force-unlocked
    after = records.read(name)
    assert after is not None and after.data["epoch"] == dead.epoch + 1 and after.data["done"] == "test#1", after


def _kill_terraform_holding_the_lock(directory: Path, env: dict[str, str]) -> None:
    """A terraform apply waiting at its prompt holds the stack's S3 lock; its process group
    (terraform and its provider) is SIGKILLed there, as a node failure would."""
    holder = terraform_at_its_prompt(directory, env)
    os.killpg(holder.pid, signal.SIGKILL)
    holder.wait()
