"""The provider runner in the terraform engine's place beneath it: a stack directory planned,
shown and applied through one pool of provider processes, then handed to terraform (issue 34).

What is real: the example tree's `project-recsys` configuration as the terraform engine writes
it (`main.tf.json`, two provider blocks), the hashicorp/aws 5.100.0 provider over the plugin
protocol, the embedded endpoint (in this process) and the real `terraform` CLI in the same
directory. Expected values come from terraform's exit codes and from what the configuration
declares, not from what the runner returns: after the runner applies, `terraform plan
-detailed-exitcode` in that directory must find nothing (exit 0); a saved plan edited after it
was made is refused; a destroy plan deletes every object the state holds, and terraform then
finds the configuration's objects to create again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_aws import EmbeddedAws
from engines.plan import Action
from engines.provider.client import ProviderClient, has_errors
from engines.provider.pool import ProviderPool
from engines.showplan import changes_from_show
from engines.terraform.backend import STATE_NAME as STATE_FILE
from engines.terraform.errors import TerraformError
from engines.terraform.provider_runner import ProviderRunner
from tests.embedded_endpoint.tfsupport import Terraform
from tests.engines.test_provider_plugin import _provider_binary
from tests.engines.test_provider_walk import ML_PROD, _environ, credentialed_terraform, recsys_config
from tests.integration.common import CREDENTIALS

pytestmark = pytest.mark.integration
PLAN = "hypergov.tfplan"


@pytest.fixture(scope="module")
def config(aws: EmbeddedAws) -> dict[str, Any]:
    return recsys_config(aws)


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    return credentialed_terraform(tmp_path_factory, "provider-runner")


@pytest.fixture(scope="module")
def runner() -> Iterator[ProviderRunner]:
    pool = ProviderPool(binary=_provider_binary(), environ={**_environ(), **CREDENTIALS})
    try:
        yield ProviderRunner(pool)
    finally:
        pool.close()


def _declared(config: dict[str, Any]) -> set[str]:
    return {f"{rtype}.{name}" for rtype, bodies in config["resource"].items() for name in bodies}


def test_planned_applied_through_the_pool_then_terraform_has_nothing_to_do(
        runner: ProviderRunner, terraform: Terraform, config: dict[str, Any], aws: EmbeddedAws) -> None:
    directory = terraform.workdir
    terraform.write_config(config)
    (directory / STATE_FILE).unlink(missing_ok=True)

    assert runner.plan(directory, out=PLAN) is True
    planned = changes_from_show(runner.show_json(directory, PLAN))
    assert {c.address for c in planned} == _declared(config)
    assert {c.action for c in planned} == {Action.CREATE}
    assert runner.pool.processes == len(config["provider"]["aws"])  # one process per provider block

    runner.apply(directory, PLAN)
    iam = aws.client("iam", account=ML_PROD, region="us-west-2")
    assert iam.get_role(RoleName="acme-recsys-lead")["Role"]["Path"] == "/hypergov/"
    assert runner.plan(directory, out=PLAN) is False  # its own second plan: nothing to do
    assert runner.pool.processes == len(config["provider"]["aws"])  # the same processes, reused

    init = terraform.run("init")
    assert init.returncode == 0, init.stdout + init.stderr
    again = terraform.run("plan", "-detailed-exitcode")
    assert again.returncode == 0, f"terraform would change what the provider runner applied:\n{again.stdout}"

    # a saved plan changed after it was made is refused, and applies nothing
    lead = config["resource"]["aws_iam_role"]["role-lead_ml-prod"]
    terraform.write_config({**config, "resource": {**config["resource"], "aws_iam_role": {
        **config["resource"]["aws_iam_role"], "role-lead_ml-prod": {**lead, "tags": {**lead.get("tags", {}),
                                                                             "CostCentre": "CC-4242"}}}}})
    assert runner.plan(directory, out=PLAN) is True
    (directory / PLAN).write_text((directory / PLAN).read_text().replace("CC-4242", "CC-0000"))
    with pytest.raises(TerraformError) as refused:
        runner.apply(directory, PLAN)
    assert not refused.value.temporary and "plan again" in refused.value.failure.message
    tags = {t["Key"]: t["Value"] for t in iam.list_role_tags(RoleName="acme-recsys-lead")["Tags"]}
    assert tags.get("CostCentre") != "CC-4242"

    # destroy: every object of the state deleted; terraform then plans the configuration anew
    assert runner.plan(directory, out=PLAN, destroy=True) is True
    assert {c.action for c in changes_from_show(runner.show_json(directory, PLAN))} == {Action.DELETE}
    runner.apply(directory, PLAN)
    assert json.loads((directory / STATE_FILE).read_text())["resources"] == []
    assert "acme-recsys-lead" not in {r["RoleName"] for r in iam.list_roles()["Roles"]}
    fresh = terraform.run("plan", "-detailed-exitcode")
    assert fresh.returncode == 2, fresh.stdout + fresh.stderr


def test_a_blocks_prepared_configuration_and_the_schema_are_kept_and_a_later_pool_starts_from_them(
        config: dict[str, Any], aws: EmbeddedAws, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """PrepareProviderConfig is asked once per provider block and provider build, whatever the
    number of runs: the next pool (new processes) configures from what was kept, and its clients
    work (the block that assumes a role in ML_PROD reads that account as its caller's). GetSchema
    is not asked again either, since the provider's own answer says it needs no GetSchema call
    first (`get_provider_schema_optional`, what terraform's schema cache relies on)."""
    prepared: list[str] = []
    rpcs: list[str] = []
    original, original_call = ProviderClient.prepare, ProviderClient._call

    def counted(self: ProviderClient, value: Any) -> Any:
        prepared.append("asked")
        return original(self, value)

    def sent(self: ProviderClient, method: str, request: Any, response_type: Any) -> Any:
        rpcs.append(method)
        return original_call(self, method, request, response_type)

    monkeypatch.setattr(ProviderClient, "prepare", counted)
    monkeypatch.setattr(ProviderClient, "_call", sent)
    blocks = len(config["provider"]["aws"])
    for run in range(2):
        rpcs.clear()
        pool = ProviderPool(binary=_provider_binary(), environ={**_environ(), **CREDENTIALS},
                            prepared_dir=tmp_path / "prepared")
        try:
            clients = pool.clients_for(config)
            assert len(prepared) == blocks, (run, prepared)  # the second run asks nothing
            kept = sorted((tmp_path / "prepared").glob("*.msgpack"))
            assert len(kept) == blocks and all(p.stat().st_mode & 0o777 == 0o600 for p in kept)
            (assuming,) = [alias for alias in clients if alias is not None]  # the block assuming a role in ML_PROD
            caller = clients[assuming].schema().data_source("aws_caller_identity")
            assert caller is not None and clients[assuming].schema().capabilities.get_provider_schema_optional
            assert ("GetSchema" in rpcs) == (run == 0), (run, rpcs)  # asked by the first run's processes only
            read = clients[assuming].read_data("aws_caller_identity", caller.block.null_object())
            assert not has_errors(read.diagnostics) and isinstance(read.new_state, dict), read.diagnostics
            assert read.new_state["account_id"] == ML_PROD
        finally:
            pool.close()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_spares_started_ahead_serve_the_first_blocks_and_are_never_left_behind(config: dict[str, Any]) -> None:
    """`start_spares` starts provider processes before any block needs one (a merge request's
    plan starts them while the trees are checked): the blocks are configured on those very
    processes (no extra process: one per block), their clients answer, and `close` stops them
    all. A spare no block took is stopped by `close` as well, even while it is still starting."""
    environ = {**_environ(), **CREDENTIALS}
    blocks = len(config["provider"]["aws"])
    pool = ProviderPool(binary=_provider_binary(), environ=environ)
    try:
        pool.start_spares(blocks)
        pool.start_spares(blocks)  # no more than asked for
        spare_pids = {spare.result(timeout=60).pid for spare in pool._spares}
        assert len(spare_pids) == blocks
        clients = pool.clients_for(config)
        pids = {p.pid for p in pool._processes}
        assert pids == spare_pids and pool.processes == blocks
        for client in clients.values():
            caller = client.schema().data_source("aws_caller_identity")
            assert caller is not None
            assert not has_errors(client.read_data("aws_caller_identity", caller.block.null_object()).diagnostics)
    finally:
        pool.close()
    assert not any(_running(pid) for pid in pids)

    untaken = ProviderPool(binary=_provider_binary(), environ=environ)
    untaken.start_spares(1)
    (starting,) = untaken._spares
    untaken.close()  # while it may still be starting
    assert not _running(starting.result().pid)
    assert untaken._spares == [] and untaken.processes == 0
