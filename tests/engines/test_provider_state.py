"""Terraform's state format written by the provider engine and read by terraform, and back
(issue 34: either engine takes a stack over from the other).

What is real: the hashicorp/aws 5.100.0 provider spoken to over the plugin protocol
(`engines.provider`), the embedded endpoint (in this process), and the real `terraform` CLI with
the same provider from the machine's mirror. A role is created by the provider client alone; the
state `engines.provider.state` writes for it is handed to terraform with a configuration saying
the same, and `terraform plan -detailed-exitcode` must find nothing to do (exit 0). Then terraform
changes the role and writes its own state, which `read_state` reads: same lineage, a higher
serial, the new tag. The expected values come from what was asked for and from terraform's exit
codes, not from what this module returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest

from embedded_aws import EmbeddedAws
from embedded_aws.terraform import provider_block
from engines.provider.client import ProviderClient, has_errors
from engines.provider.cty import DYNAMIC, NUMBER, STRING, Dynamic, ListOf, MapOf, Object, SetOf, Unknown
from engines.provider.plugin import ProviderProcess
from engines.provider.schema import proposed_new, sensitive_paths
from engines.provider.state import (
    AWS_PROVIDER,
    Instance,
    State,
    StateFormatError,
    from_json_value,
    read_state,
    state_document,
    to_json_value,
)
from engines.provider.walk import upgrader
from tests.embedded_endpoint.tfsupport import Terraform, module_terraform
from tests.engines.test_provider_plugin import (
    REGION,
    ROLE,
    TRUST,
    _provider_binary,
    provider_config,
    role_config,
)

pytestmark = pytest.mark.integration
ACCOUNT = "210000000035"  # this module's own: moto's state is process-wide (embedded_aws.server)
NESTED = Object({"name": STRING, "rules": SetOf(Object({"port": NUMBER, "cidrs": ListOf(STRING)})),
                 "labels": MapOf(STRING), "extra": DYNAMIC})


def test_attributes_are_ctys_json_encoding_and_read_back() -> None:
    """Sets as arrays, maps as objects, a dynamic value with its type beside it (go-cty's
    `ctyjson.Marshal` of an object wrapped in DynamicPseudoType), missing attributes as null."""
    value = {"name": "web", "rules": [{"port": 443, "cidrs": ["10.0.0.0/8"]}], "labels": {"team": "nlp"},
             "extra": Dynamic(ListOf(NUMBER), [1, 2])}
    encoded = to_json_value(value, NESTED)
    assert encoded == {"name": "web", "rules": [{"port": 443, "cidrs": ["10.0.0.0/8"]}], "labels": {"team": "nlp"},
                       "extra": {"value": [1, 2], "type": ["list", "number"]}}
    assert from_json_value(encoded, NESTED) == value
    assert to_json_value({"name": "x"}, NESTED) == {"name": "x", "rules": None, "labels": None, "extra": None}
    assert to_json_value(Decimal("3"), NUMBER) == 3
    with pytest.raises(StateFormatError, match="unknown"):
        to_json_value({"name": Unknown()}, NESTED)


def test_a_write_keeps_the_lineage_and_counts_the_serial_and_other_versions_are_refused() -> None:
    first = State().next([Instance("aws_iam_role", "lead", 0, {"name": "x"})])
    second = first.next(first.instances)
    assert (second.lineage, second.serial) == (first.lineage, first.serial + 1) and first.serial == 1
    document = state_document(second, {"aws_iam_role": Object({"name": STRING})}, terraform_version="1.11.4")
    assert {k: document[k] for k in ("version", "serial", "lineage")} == {"version": 4, "serial": 2,
                                                                         "lineage": first.lineage}
    assert document["resources"] == [{"mode": "managed", "type": "aws_iam_role", "name": "lead",
                                      "provider": AWS_PROVIDER, "instances": [
                                          {"schema_version": 0, "attributes": {"name": "x"},
                                           "sensitive_attributes": []}]}]
    with pytest.raises(StateFormatError, match="version 3"):
        read_state({**document, "version": 3}, {"aws_iam_role": Object({"name": STRING})})


@pytest.fixture(scope="module")
def provider() -> Iterator[ProviderClient]:
    with ProviderProcess.start(_provider_binary()) as process:
        yield ProviderClient(process.channel)


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    return module_terraform(tmp_path_factory, "provider-state")


def _config(endpoint_url: str, tags: dict[str, str]) -> dict[str, object]:
    return {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "5.100.0"}}},
            "provider": {"aws": provider_block(endpoint_url, region=REGION, account=ACCOUNT)},
            "resource": {"aws_iam_role": {"lead": {"name": ROLE, "assume_role_policy": TRUST, "tags": tags}}}}


def test_terraform_plans_nothing_on_the_state_the_provider_engine_wrote_and_we_read_terraforms(
        provider: ProviderClient, terraform: Terraform, aws: EmbeddedAws) -> None:
    assert not has_errors(provider.configure(provider_config(provider, aws.endpoint_url, ACCOUNT)))
    schemas = provider.schema()
    role = schemas.resource("aws_iam_role")
    tags = {"Project": "nlp", "CostCentre": "CC-1000"}
    config = role_config(provider, tags)
    plan = provider.plan("aws_iam_role", prior=None, proposed=proposed_new(role.block, None, config), config=config)
    applied = provider.apply("aws_iam_role", prior=None, planned=plan.planned_state, config=config,
                             planned_private=plan.planned_private)
    assert not has_errors(applied.diagnostics) and isinstance(applied.new_state, dict)

    written = State().next([Instance("aws_iam_role", "lead", role.version, applied.new_state, applied.private)])
    types = {"aws_iam_role": role.type}
    terraform.write_config(_config(aws.endpoint_url, tags))
    (terraform.workdir / "terraform.tfstate").write_text(json.dumps(state_document(
        written, types, terraform_version="1.11.4"), indent=2))
    init = terraform.run("init")
    assert init.returncode == 0, init.stdout + init.stderr
    planned = terraform.run("plan", "-detailed-exitcode")
    assert planned.returncode == 0, f"terraform would change what the provider engine applied:\n{planned.stdout}"
    assert "No changes." in planned.stdout

    terraform.write_config(_config(aws.endpoint_url, {**tags, "CostCentre": "CC-2000"}))
    changed = terraform.run("apply", "-auto-approve")
    assert changed.returncode == 0, changed.stdout + changed.stderr
    read = read_state(json.loads((terraform.workdir / "terraform.tfstate").read_text()), types)
    assert (read.lineage, read.serial > written.serial) == (written.lineage, True)
    [instance] = read.instances
    assert (instance.address, instance.attributes["name"]) == ("aws_iam_role.lead", ROLE)
    assert instance.attributes["tags"] == {"Project": "nlp", "CostCentre": "CC-2000"}
    live = aws.client("iam", account=ACCOUNT, region=REGION).list_role_tags(RoleName=ROLE)["Tags"]
    assert {t["Key"]: t["Value"] for t in live} == {"Project": "nlp", "CostCentre": "CC-2000"}


def test_a_stored_instance_is_upgraded_by_the_provider_as_terraform_reads_state(provider: ProviderClient) -> None:
    """UpgradeResourceState on every state read (`walk.upgrader`, which the provider runner hands
    `read_state`): an `aws_db_instance` stored with schema version 0, before the provider had
    `delete_automated_backups`, comes back at the schema's current version with that attribute
    true, which the provider's own version-0 upgrader adds (its TestInstanceStateUpgradeV0); what
    was stored is kept."""
    upgrade = upgrader({None: provider})
    schema = provider.schema().resource("aws_db_instance")
    assert schema.version > 0  # the provider's own schema says the type has been upgraded since version 0
    stored = {"identifier": "legacy-db", "engine": "mariadb", "instance_class": "db.t2.micro",
              "allocated_storage": 10, "username": "admin"}
    document = {"version": 4, "terraform_version": "1.3.0", "lineage": "legacy", "serial": 7, "resources": [
        {"mode": "managed", "type": "aws_db_instance", "name": "legacy", "provider": AWS_PROVIDER,
         "instances": [{"schema_version": 0, "attributes": stored}]}]}
    state = read_state(document, {"aws_db_instance": schema.type}, upgrade=upgrade)
    [instance] = state.instances
    assert instance.schema_version == schema.version
    assert instance.attributes["delete_automated_backups"] is True
    assert {k: instance.attributes[k] for k in stored} == {**stored, "allocated_storage": Decimal(10)}


def test_the_sensitive_attributes_written_are_the_ones_terraform_writes(
        provider: ProviderClient, aws: EmbeddedAws, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Terraform writes the schema's sensitive attributes of each instance into its
    `sensitive_attributes` (an access key: its secret and SMTP password); the provider runner
    writes `schema.sensitive_paths` of the same object, which must be terraform's list."""
    keys = module_terraform(tmp_path_factory, "provider-state-sensitive")
    keys.write_config({
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "5.100.0"}}},
        "provider": {"aws": provider_block(aws.endpoint_url, region=REGION, account=ACCOUNT)},
        "resource": {"aws_iam_user": {"keys": {"name": "sensitive-paths"}},
                     "aws_iam_access_key": {"key": {"user": "${aws_iam_user.keys.name}"}}}})
    assert keys.run("init").returncode == 0
    applied = keys.run("apply", "-auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    written = json.loads((keys.workdir / "terraform.tfstate").read_text())
    schemas = provider.schema()
    for entry in written["resources"]:
        [instance] = entry["instances"]
        schema = schemas.resource(entry["type"])
        ours = sensitive_paths(schema.block, from_json_value(instance["attributes"], schema.type))
        assert ours == sorted(instance["sensitive_attributes"], key=lambda p: json.dumps(p, sort_keys=True)), \
            entry["type"]
    assert any(e["type"] == "aws_iam_access_key" and e["instances"][0]["sensitive_attributes"]
               for e in written["resources"])  # the comparison covered a sensitive attribute
