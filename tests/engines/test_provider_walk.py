"""A whole stack planned and applied through the provider itself, side by side with terraform
(issue 34: the differential test, on one project stack of the example tree).

What is real: the example tree's `project-recsys` stack as the terraform engine translates it
(its two provider blocks: the management account's, and an alias assuming a role into ml-prod),
the hashicorp/aws 5.100.0 provider over the plugin protocol (one process per provider block), the
embedded endpoint (in this process), and the real `terraform` CLI with the same provider. The
provider engine's plan of each step must equal terraform's plan of the same configuration and
state (`terraform show -json` through the same converter: every resource, action and changed
attribute), and after the provider engine applies, `terraform plan -detailed-exitcode` of the
state it wrote must find nothing to do. Steps: create everything, change a role's tags, remove a
role policy.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws import EmbeddedAws
from engines.plan import Action, ResourceChange
from engines.provider.client import ProviderClient, has_errors
from engines.provider.config import block_value, unknown_references
from engines.provider.plugin import ProviderProcess
from engines.provider.state import State, read_state, state_document
from engines.provider.walk import apply_stack, plan_stack
from engines.settings import AwsSettings
from engines.showplan import changes_from_show
from engines.terraform.translate import translate
from hypergov.validate import validate_files
from stacks.graph import capture_graph
from tests.embedded_endpoint.tfsupport import Terraform, module_terraform
from tests.engines.test_provider_plugin import _provider_binary
from tests.integration.common import CREDENTIALS
from tests.integration.conftest import example_files

pytestmark = pytest.mark.integration
STACK = "project-recsys"
ML_PROD = "111122223333"


@pytest.fixture(scope="module")
def config(aws: EmbeddedAws) -> dict[str, Any]:
    return recsys_config(aws)


def recsys_config(aws: EmbeddedAws) -> dict[str, Any]:
    """`project-recsys` as the terraform engine translates it, its cluster seeded on `aws`."""
    aws.seed_hyperpod_cluster("gpu-west", "gpu-west-eks", account=ML_PROD, region="us-west-2")
    report = validate_files(example_files())
    graph = capture_graph(report.tree, STACK, assume_role_name="OrganizationAccountAccessRole")
    return translate(graph.resources, aws=AwsSettings(endpoint_url=aws.endpoint_url), provider_version="5.100.0",
                     default_region="us-west-2").config


@pytest.fixture(scope="module")
def clients(config: dict[str, Any]) -> Iterator[dict[str | None, ProviderClient]]:
    """One configured provider process per provider block, as the engine's pool would keep them."""
    processes, made = [], {}
    try:
        for body in config["provider"]["aws"]:
            process = ProviderProcess.start(_provider_binary(), environ={**_environ(), **CREDENTIALS})
            processes.append(process)
            client = ProviderClient(process.channel)
            alias = f"aws.{body['alias']}" if "alias" in body else None
            value = block_value(client.schema().provider.block, {k: v for k, v in body.items() if k != "alias"},
                                unknown_references, f"provider {alias or 'aws'}")
            diagnostics = client.configure(value, validate=alias is None)
            assert not has_errors(diagnostics), [str(d) for d in diagnostics]
            made[alias] = client
        yield made
    finally:
        for process in processes:
            process.close()


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    return credentialed_terraform(tmp_path_factory, "provider-walk")


def credentialed_terraform(tmp_path_factory: pytest.TempPathFactory, name: str) -> Terraform:
    made = module_terraform(tmp_path_factory, name)
    return Terraform(workdir=made.workdir, env={**made.env, **CREDENTIALS})


def _terraform_plan(terraform: Terraform, config: dict[str, Any], state: State,
                    types: dict[str, Any]) -> tuple[ResourceChange, ...]:
    terraform.write_config(config)
    (terraform.workdir / "terraform.tfstate").write_text(json.dumps(state_document(state, types,
                                                                                   terraform_version="1.11.4")))
    if not (terraform.workdir / ".terraform").exists():
        init = terraform.run("init")
        assert init.returncode == 0, init.stdout + init.stderr
    planned = terraform.run("plan", "-refresh=true", "-out=tfplan")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    shown = terraform.run("show", "-json", "tfplan")
    return tuple(c for c in changes_from_show(json.loads(shown.stdout)) if c.action != Action.NOOP)


def _ours(plan: Any, clients: dict[str | None, ProviderClient]) -> tuple[ResourceChange, ...]:
    return tuple(sorted((c for c in plan.changes(clients) if c.action != Action.NOOP), key=lambda c: c.address))


def _step(clients: dict[str | None, ProviderClient], terraform: Terraform, config: dict[str, Any],
          state: State) -> tuple[State, tuple[ResourceChange, ...]]:
    types = {t: clients[None].schema().resource(t).type for t in config["resource"]}
    types.update({i.type: clients[None].schema().resource(i.type).type for i in state.instances})
    expected = _terraform_plan(terraform, config, state, types)
    plan = plan_stack(clients, config, state)
    assert _ours(plan, clients) == expected
    written: list[State] = []
    after = apply_stack(clients, plan, state, write=written.append)
    assert written and written[-1] == after and after.serial == state.serial + len(written)
    (terraform.workdir / "terraform.tfstate").write_text(json.dumps(state_document(after, types,
                                                                                   terraform_version="1.11.4")))
    again = terraform.run("plan", "-detailed-exitcode")
    assert again.returncode == 0, f"terraform would change what the provider engine applied:\n{again.stdout}"
    return after, expected


def test_the_provider_engine_plans_as_terraform_does_and_leaves_nothing_for_it(
        clients: dict[str | None, ProviderClient], terraform: Terraform, config: dict[str, Any],
        aws: EmbeddedAws) -> None:
    state, created = _step(clients, terraform, config, State())
    assert {c.action for c in created} == {Action.CREATE} and len(created) == sum(
        len(v) for v in config["resource"].values())
    iam = aws.client("iam", account=ML_PROD, region="us-west-2")
    assert iam.get_role(RoleName="acme-recsys-lead")["Role"]["Arn"].endswith(":role/hypergov/acme-recsys-lead")

    retagged = copy.deepcopy(config)
    lead = retagged["resource"]["aws_iam_role"]["role-lead_ml-prod"]
    lead["tags"] = {**lead.get("tags", {}), "CostCentre": "CC-9999"}
    state, updated = _step(clients, terraform, retagged, state)
    assert [(c.address, c.action) for c in updated] == [("aws_iam_role.role-lead_ml-prod", Action.UPDATE)]
    assert {a.path: a.after for a in updated[0].attributes}.get("tags.CostCentre") == "CC-9999"
    assert {t["Key"]: t["Value"] for t in iam.list_role_tags(RoleName="acme-recsys-lead")["Tags"]}["CostCentre"] \
        == "CC-9999"

    trimmed = copy.deepcopy(retagged)
    del trimmed["resource"]["aws_iam_role_policy"]["role-lead-access_ml-prod"]
    state, deleted = _step(clients, terraform, trimmed, state)
    assert [(c.address, c.action) for c in deleted] == [("aws_iam_role_policy.role-lead-access_ml-prod",
                                                         Action.DELETE)]
    assert iam.list_role_policies(RoleName="acme-recsys-lead")["PolicyNames"] == []
    assert read_state(state_document(state, {t: clients[None].schema().resource(t).type
                                            for t in trimmed["resource"]}, terraform_version="1.11.4"),
                      {t: clients[None].schema().resource(t).type for t in trimmed["resource"]}) == state
