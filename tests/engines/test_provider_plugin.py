"""hypergov speaks Terraform's plugin protocol 5 to the AWS provider itself (issue 34, foundation).

What is real: the hashicorp/aws 5.100.0 provider binary from the machine's provider mirror,
started by `engines.provider.plugin` as go-plugin starts it (magic cookie, mutual TLS, the
handshake line), spoken to by `engines.provider.client` over gRPC; the embedded AWS endpoint (moto's
server, in this process) it calls over HTTP. No terraform CLI runs: this test does what terraform
core would (the provider's configuration, the proposed new state) and checks the result with boto3
against the endpoint, with the expected values taken from what was asked for, not from what the
provider answered. The test measures the provider's start, schema, plan and apply latencies and
prints them (`-s` shows them); it asserts nothing on time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from botocore.exceptions import ClientError

from embedded_aws import EmbeddedAws
from embedded_aws.handle import SECRET_KEY
from embedded_aws.terraform import PROVIDER_SERVICES
from engines.provider.client import Diagnostics, ProviderClient, has_errors
from engines.provider.cty import UNKNOWN, CtyValue, is_wholly_known
from engines.provider.plugin import ProviderProcess
from engines.provider.schema import proposed_new, sensitive_mask
from tests.embedded_endpoint.tfsupport import PROVIDER_DIR, find_provider_mirror

pytestmark = pytest.mark.integration

ACCOUNT = "210000000034"
REGION = "us-west-2"
ROLE = "acme-nlp-lead"
TRUST = json.dumps({"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}}]})
TIMINGS: dict[str, float] = {}


def _provider_binary() -> Path:
    mirror = find_provider_mirror()
    binaries = sorted((mirror / PROVIDER_DIR).glob("5.100.0/linux_amd64/terraform-provider-aws_*")) if mirror else []
    if not binaries:
        pytest.skip("no hashicorp/aws 5.100.0 provider in a filesystem mirror on this machine")
    return binaries[0]


@pytest.fixture(scope="module")
def provider() -> Iterator[ProviderClient]:
    started = time.perf_counter()
    with ProviderProcess.start(_provider_binary()) as process:
        TIMINGS["start (process, handshake, TLS, channel ready)"] = time.perf_counter() - started
        client = ProviderClient(process.channel)
        before = time.perf_counter()
        client.schema()
        TIMINGS["GetSchema"] = time.perf_counter() - before
        TIMINGS["start + schema"] = time.perf_counter() - started
        yield client
    print("\nprovider plugin latencies (s):\n" + "".join(f"  {k}: {v:.3f}\n" for k, v in TIMINGS.items()))


def _ok(diagnostics: Diagnostics) -> None:
    assert not has_errors(diagnostics), "; ".join(str(d) for d in diagnostics)


def _timed(name: str, call: Any, *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    result = call(*args, **kwargs)
    TIMINGS[name] = time.perf_counter() - started
    return result


def provider_config(client: ProviderClient, endpoint_url: str, account: str = ACCOUNT) -> dict[str, CtyValue]:
    """The provider block the terraform engine writes for the embedded endpoint
    (`embedded_aws.terraform.provider_block`), as the cty object the provider's schema types.
    One attempt per call, as that block says: a retried create would hide a lost answer as
    EntityAlreadyExists (see `embedded_aws.server.QuietRequestHandler`)."""
    block = client.schema().provider.block
    endpoints = {**block.blocks["endpoints"].block.null_object(), **dict.fromkeys(PROVIDER_SERVICES, endpoint_url)}
    return {**block.null_object(), "region": REGION, "access_key": account, "secret_key": SECRET_KEY,
            "max_retries": 1, "skip_credentials_validation": True, "skip_metadata_api_check": "true",
            "skip_region_validation": True, "endpoints": [endpoints]}


def role_config(client: ProviderClient, tags: dict[str, str], name: str = ROLE) -> dict[str, CtyValue]:
    block = client.schema().resource("aws_iam_role").block
    return {**block.null_object(), "name": name, "assume_role_policy": TRUST, "tags": dict(tags)}


def test_the_schema_types_what_hypergov_declares(provider: ProviderClient) -> None:
    schemas = provider.schema()
    assert {"aws_iam_role", "aws_iam_policy", "aws_budgets_budget", "aws_organizations_policy"} <= \
        schemas.resource_types
    role = schemas.resource("aws_iam_role")
    assert role.block.attributes["arn"].computed and role.block.attributes["assume_role_policy"].required
    assert role.block.blocks["inline_policy"].nesting == "set"
    assert schemas.provider.block.blocks["endpoints"].nesting == "set"
    assert schemas.capabilities.plan_destroy


def test_the_provider_marks_an_access_keys_secret_sensitive_and_the_mask_says_so(provider: ProviderClient) -> None:
    """The AWS provider documents `aws_iam_access_key`'s `secret` and `ses_smtp_password_v4` as
    sensitive; a plan entry of such an object masks them (and nothing else)."""
    key = provider.schema().resource("aws_iam_access_key").block
    assert {n for n, a in key.attributes.items() if a.sensitive} == {"secret", "ses_smtp_password_v4"}
    value = {**key.null_object(), "user": "lead", "id": "AKIA", "secret": "s3cr3t", "ses_smtp_password_v4": "p"}
    assert sensitive_mask(key, value) == {"secret": True, "ses_smtp_password_v4": True}


def test_create_read_update_and_delete_a_role(provider: ProviderClient, aws: EmbeddedAws) -> None:
    iam = aws.client("iam", account=ACCOUNT, region=REGION)
    _ok(_timed("PrepareProviderConfig + Configure", provider.configure, provider_config(provider, aws.endpoint_url)))
    block = provider.schema().resource("aws_iam_role").block

    # create
    config = role_config(provider, {"Project": "nlp", "CostCentre": "CC-1000"})
    _ok(_timed("ValidateResourceTypeConfig", provider.validate, "aws_iam_role", config))
    plan = _timed("plan (create)", provider.plan, "aws_iam_role", prior=None,
                  proposed=proposed_new(block, None, config), config=config)
    _ok(plan.diagnostics)
    planned = plan.planned_state
    assert isinstance(planned, dict)
    assert (planned["name"], planned["tags"]) == (ROLE, config["tags"])
    assert isinstance(planned["assume_role_policy"], str)  # the provider plans it normalized: same policy
    assert json.loads(planned["assume_role_policy"]) == json.loads(TRUST)
    assert plan.legacy_type_system  # an SDKv2 resource: terraform tolerates such differences from config
    assert planned["arn"] == UNKNOWN and planned["unique_id"] == UNKNOWN  # known only after apply
    applied = _timed("apply (create)", provider.apply, "aws_iam_role", prior=None, planned=planned, config=config,
                     planned_private=plan.planned_private)
    _ok(applied.diagnostics)
    assert is_wholly_known(applied.new_state)

    live = iam.get_role(RoleName=ROLE)["Role"]
    assert live["Arn"] == f"arn:aws:iam::{ACCOUNT}:role/{ROLE}"
    document = live["AssumeRolePolicyDocument"]
    assert (json.loads(unquote(document)) if isinstance(document, str) else document) == json.loads(TRUST)
    assert {t["Key"]: t["Value"] for t in live.get("Tags", [])} == config["tags"]
    assert live["Path"] == "/" and live["MaxSessionDuration"] == 3600  # AWS's defaults: nothing asked

    # read back: the state the provider holds is what AWS has
    read = _timed("read", provider.read, "aws_iam_role", current=applied.new_state, private=applied.private)
    _ok(read.diagnostics)
    state = read.new_state
    assert isinstance(state, dict)
    assert (state["arn"], state["unique_id"], state["name"]) == (live["Arn"], live["RoleId"], ROLE)
    assert state["tags"] == config["tags"]

    # update: a tag changes, nothing is replaced
    changed = role_config(provider, {"Project": "nlp", "CostCentre": "CC-2000"})
    update = _timed("plan (update)", provider.plan, "aws_iam_role", prior=state,
                    proposed=proposed_new(block, state, changed), config=changed, prior_private=read.private)
    _ok(update.diagnostics)
    assert update.requires_replace == () or all(p[0].attribute != "tags" for p in update.requires_replace)
    assert isinstance(update.planned_state, dict) and update.planned_state["arn"] == live["Arn"]
    updated = _timed("apply (update)", provider.apply, "aws_iam_role", prior=state, planned=update.planned_state,
                     config=changed, planned_private=update.planned_private)
    _ok(updated.diagnostics)
    tags = iam.list_role_tags(RoleName=ROLE)["Tags"]
    assert {t["Key"]: t["Value"] for t in tags} == {"Project": "nlp", "CostCentre": "CC-2000"}

    # delete: the planned state is null
    delete = _timed("plan (delete)", provider.plan, "aws_iam_role", prior=updated.new_state, proposed=None,
                    config=None, prior_private=updated.private)
    _ok(delete.diagnostics)
    assert delete.planned_state is None
    deleted = _timed("apply (delete)", provider.apply, "aws_iam_role", prior=updated.new_state, planned=None,
                     config=None, planned_private=delete.planned_private)
    _ok(deleted.diagnostics)
    assert deleted.new_state is None
    with pytest.raises(ClientError) as gone:
        iam.get_role(RoleName=ROLE)
    assert gone.value.response["Error"]["Code"] == "NoSuchEntity"


def test_a_refused_configuration_is_a_diagnostic_with_its_path(provider: ProviderClient) -> None:
    config = {**role_config(provider, {}), "max_session_duration": 60}  # IAM's floor is 3600
    diagnostics = provider.validate("aws_iam_role", config)
    errors = [d for d in diagnostics if d.severity == "error"]
    assert errors and errors[0].path[0].attribute == "max_session_duration"


def test_a_fresh_process_configured_once_then_stopped(aws: EmbeddedAws) -> None:
    """A process per (account, region, role) is configured once (a second Configure of one process
    fails in the AWS provider where AWS_CA_BUNDLE is set, as on this machine: "unable to add custom
    RootCAs"), without validating again a configuration validated before;
    GRPCController.Shutdown then ends it by itself (exit 0), before any signal is sent."""
    started = time.perf_counter()
    process = ProviderProcess.start(_provider_binary())
    TIMINGS["a second start"] = time.perf_counter() - started
    try:
        client = ProviderClient(process.channel)
        _ok(_timed("Configure alone (validate=False)", client.configure, provider_config(client, aws.endpoint_url),
                   validate=False))
    finally:
        stopping = time.perf_counter()
        code = process.close()
        TIMINGS["stop (Shutdown)"] = time.perf_counter() - stopping
    assert code == 0
