"""Which engine owns the org's objects (`engines.ownership`): recorded on the first apply in the
shared record store (a file in the state directory, or an object in the state bucket: the
embedded endpoint's S3), and the other engine refuses with the fix. The pulumi engine's
Automation boundary is faked as in test_pulumi_engine (the Pulumi CLI cannot be installed here)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from embedded_aws import EmbeddedAws
from engines import ownership
from engines.factory import build_engine
from engines.objects import LocalRecords, RecordStore
from engines.plan import Plan, StackName
from engines.pulumi.engine import PulumiEngine
from engines.settings import Settings
from tests.engines.test_pulumi_engine import FakeStack, FakeWorkspace
from tests.engines.test_shared_records import record_store
from tests.example_tree import example_tree

BUCKET = "acme-hypergov-ownership"


@pytest.fixture(params=["local", "s3"])
def records(request: pytest.FixtureRequest, aws: EmbeddedAws, tmp_path: Path) -> Iterator[RecordStore]:
    yield record_store(request.param, aws, tmp_path, bucket=BUCKET)


@pytest.mark.parametrize(("owner", "other"), [("terraform", "pulumi"), ("pulumi", "terraform")])
def test_the_first_engine_to_apply_owns_the_objects_and_the_other_refuses(
        records: RecordStore, owner: ownership.EngineKind, other: ownership.EngineKind) -> None:
    assert ownership.owner_of(records) is None
    ownership.claim(records, owner, now=datetime(2026, 12, 5, 3, 0, tzinfo=UTC), by="ci@runner-1")
    recorded = records.read("engine.json")
    assert recorded is not None and recorded.data == {"engine": owner, "since": "2026-12-05T03:00:00+00:00",
                                                      "by": "ci@runner-1"}
    assert ownership.claim(records, owner).engine == owner  # the owner applies again: unchanged
    with pytest.raises(ownership.EngineOwnedElsewhereError) as refused:
        ownership.claim(records, other)
    message = str(refused.value)
    assert f"owned by the {owner} engine" in message and records.where("engine.json") in message
    assert f"engine: {owner}" in message and f"HYPERGOV_ENGINE={owner}" in message  # the fix
    assert refused.value.kind == "permanent"


def _pulumi_engine(settings: Settings, records: RecordStore) -> PulumiEngine:
    engine = build_engine(settings, example_tree(), records=records)
    assert isinstance(engine, PulumiEngine)
    stacks = {"org": FakeStack("org")}
    engine.open_workspace = lambda program, env: FakeWorkspace(program, stacks)
    engine.stack_in = lambda name, workspace: stacks[name]
    return engine


def test_build_engine_records_the_owner_on_the_first_apply(tmp_path: Path) -> None:
    records = LocalRecords(tmp_path / "state")
    engine = _pulumi_engine(Settings(state_dir=tmp_path / "state", engine="pulumi"), records)
    plan = engine.plan_many([StackName("org")])[StackName("org")]
    assert isinstance(plan, Plan) and not plan.is_empty
    assert ownership.owner_of(records) is None  # planning claims nothing
    (result,) = engine.apply_many([plan])
    assert result.ok
    owner = ownership.owner_of(records)
    assert owner is not None and owner.engine == "pulumi"
    # From now on `auto` follows the record, and the terraform engine refuses to be built.
    assert isinstance(_pulumi_engine(Settings(state_dir=tmp_path / "state", engine="auto"), records), PulumiEngine)
    with pytest.raises(ownership.EngineOwnedElsewhereError, match="engine: pulumi"):
        build_engine(Settings(state_dir=tmp_path / "state", engine="terraform"), example_tree(), records=records)


def test_build_engine_refuses_the_pulumi_engine_on_a_terraform_org(records: RecordStore, tmp_path: Path) -> None:
    ownership.claim(records, "terraform")
    with pytest.raises(ownership.EngineOwnedElsewhereError, match="engine: terraform"):
        build_engine(Settings(state_dir=tmp_path, engine="pulumi"), example_tree(), records=records)
