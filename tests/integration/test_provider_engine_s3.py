"""`engine: provider` with `state_backend: s3://...` (issue 34): each stack's state read and
written where terraform's S3 backend keeps it, and locked as that backend locks it (a conditional
write of `<key>.tflock` holding terraform's lock info), so either engine takes over from the other
and each one's lock holds the other off.

Real: an endpoint of the test's own (its S3 answers conditional writes), the hashicorp/aws provider
spoken to over the plugin protocol, and the real `terraform` with its own S3 backend
(`use_lockfile`). Expected values come from terraform: the key its backend reads, its plan of the
state the provider engine wrote, the lock info it prints and the lock `terraform force-unlock`
removes.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.factory import provider_engine, terraform_engine
from engines.plan import Action, Failure, Plan, StackName
from engines.settings import Settings, load_settings
from engines.terraform.backend import LOCK_SUFFIX, read_lock
from engines.terraform.state_store import APPLYING, opened_state
from hypergov.validate import validate_files
from tests.integration.applied_once import S3_STATE_BACKEND, STATE_BUCKET, state_bucket
from tests.integration.conftest import CREDENTIALS, MANAGEMENT, PROD, REGION, example_files
from tests.integration.test_reconcile_crash import terraform_at_its_prompt

pytestmark = pytest.mark.integration
STACKS = (StackName("org"), StackName("project-vision"))
ORG = StackName("org")


def _settings(endpoint: EmbeddedAwsProcess, state_dir: Path) -> Settings:
    return load_settings(environ={"HYPERGOV_SETTINGS": "/nonexistent"}, overrides={
        "aws.endpoint_url": endpoint.endpoint_url, "aws.max_retries": 3, "state_dir": str(state_dir),
        "state_backend": S3_STATE_BACKEND})


def _keys(endpoint: EmbeddedAwsProcess) -> set[str]:
    s3 = endpoint.client("s3", account=MANAGEMENT, region=REGION)
    return {item["Key"] for item in s3.list_objects_v2(Bucket=STATE_BUCKET).get("Contents", [])}


@pytest.fixture
def applied_into_s3(own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> Settings:
    """The org and one project stack applied by the provider engine, state in the bucket."""
    state_bucket(own_endpoint, versioned=True)
    settings = _settings(own_endpoint, tmp_path / "state")
    tree = validate_files(example_files()).tree
    engine = provider_engine(settings, tree, environ={**os.environ, **CREDENTIALS})
    plans = engine.plan_many(STACKS)
    assert all(isinstance(p, Plan) for p in plans.values()), plans
    for result in engine.apply_many([p for p in plans.values() if isinstance(p, Plan)]):
        assert result.ok, (result.stack, result.error, result.failed)
    return settings


def test_the_state_is_where_terraforms_s3_backend_reads_it_and_terraform_plans_nothing(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path, applied_into_s3: Settings) -> None:
    keys = _keys(own_endpoint)
    assert {"prod/stacks/org/terraform.tfstate", "prod/stacks/project-vision/terraform.tfstate"} <= keys
    assert not [k for k in keys if k.endswith(LOCK_SUFFIX)], keys  # every lock released
    assert not list((tmp_path / "state").glob("stacks/*/terraform.tfstate"))  # nothing of it on the disk
    s3 = own_endpoint.client("s3", account=MANAGEMENT, region=REGION)
    state = json.loads(s3.get_object(Bucket=STATE_BUCKET, Key="prod/stacks/project-vision/terraform.tfstate")
                       ["Body"].read())
    assert state["version"] == 4 and state["lineage"] and state["resources"]
    iam = own_endpoint.client("iam", account=PROD, region=REGION)
    assert iam.get_role(RoleName="acme-vision-engineer")["Role"]["Path"] == "/hypergov/"

    tree = validate_files(example_files()).tree
    reference = terraform_engine(applied_into_s3, tree, environ={**os.environ, **CREDENTIALS})
    for stack, plan in reference.plan_many(STACKS).items():
        assert isinstance(plan, Plan), (stack, plan)
        assert not [c for c in plan.actionable if c.executor == "terraform"], (stack, plan.actionable)


def test_each_engines_s3_lock_holds_the_other_off_and_the_other_frees_it_when_its_holder_is_dead(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path, applied_into_s3: Settings) -> None:
    tree = validate_files(example_files()).tree
    environ = {**os.environ, **CREDENTIALS}
    provider = provider_engine(applied_into_s3, tree, environ=environ)
    reference = terraform_engine(applied_into_s3, tree, environ=environ)
    assert isinstance(reference.plan_many([ORG])[ORG], Plan)  # terraform's directory initialised
    directory = reference.workspace.stack_dir(ORG)
    s3 = own_endpoint.client("s3", account=MANAGEMENT, region=REGION)
    assert reference.state is not None

    with opened_state(directory, provider.home, lock=True, operation=APPLYING):
        held = read_lock(s3, reference.state, ORG)
        assert held is not None and held.id and held.operation == APPLYING and held.created is not None
        refused = reference.runner.run(["plan", "-input=false", "-no-color", "-lock-timeout=0s"], cwd=directory,
                                       ok_codes=(0, 1, 2))
        assert refused.returncode == 1
        said = refused.stdout + refused.stderr
        assert "Error acquiring the state lock" in said and held.id in said, said  # terraform read our lock info
        # terraform's own `force-unlock`, as the reconciler runs it for a holder whose lease expired
        assert reference.break_dead_lock(ORG, lease_taken_at=datetime.now(UTC)) == held.id
        assert read_lock(s3, reference.state, ORG) is None

    holder = terraform_at_its_prompt(directory, dict(reference.runner.env))
    try:
        theirs = read_lock(s3, reference.state, ORG)
        assert theirs is not None and theirs.id
        busy = provider.plan_many([ORG])[ORG]
        assert isinstance(busy, Failure) and busy.temporary and busy.reason == "state-lock", busy
        holder.kill()
        holder.wait(timeout=30)
        assert read_lock(s3, reference.state, ORG) == theirs  # a killed terraform leaves its lock
        assert provider.break_dead_lock(ORG, lease_taken_at=datetime.now(UTC)) == theirs.id
        assert read_lock(s3, reference.state, ORG) is None
        assert isinstance(provider.plan_many([ORG])[ORG], Plan)
    finally:
        if holder.poll() is None:
            holder.kill()


def test_a_plan_without_refresh_plans_against_the_state_as_applied_in_either_engine(
        own_endpoint: EmbeddedAwsProcess, applied_into_s3: Settings) -> None:
    """`hypergov plan --no-refresh` (terraform's -refresh=false): a tag added by hand to a role the
    tree declares is drift that a refreshed plan removes (an update of the role), and that a plan
    without refresh does not see, in the terraform engine and the provider engine alike."""
    iam = own_endpoint.client("iam", account=PROD, region=REGION)
    iam.tag_role(RoleName="acme-vision-engineer", Tags=[{"Key": "added-by-hand", "Value": "yes"}])
    tree = validate_files(example_files()).tree
    environ = {**os.environ, **CREDENTIALS}
    unrefreshed = applied_into_s3.model_copy(update={"terraform": applied_into_s3.terraform.model_copy(
        update={"refresh_while_planning": False})})
    vision = StackName("project-vision")
    for make in (terraform_engine, provider_engine):
        refreshed = make(applied_into_s3, tree, environ=environ).plan_many([vision])[vision]
        assert isinstance(refreshed, Plan), refreshed
        updated = [c for c in refreshed.actionable if c.executor == "terraform"]
        assert [(c.address, c.action) for c in updated] == [("aws_iam_role.role-engineer_ml-prod", Action.UPDATE)], \
            (make.__name__, updated)
        stale = make(unrefreshed, tree, environ=environ).plan_many([vision])[vision]
        assert isinstance(stale, Plan), stale
        assert not [c for c in stale.actionable if c.executor == "terraform"], (make.__name__, stale.actionable)
