"""Data sources through the plugin protocol (ReadDataSource): what hypergov's lookups find.

What is real: the hashicorp/aws 5.100.0 provider over the plugin protocol and the embedded
endpoint (in this process); the roles are made with boto3, and the expected ARNs are the ones
IAM returned for them, not what the provider answered."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from embedded_aws import EmbeddedAws
from engines.provider.client import ProviderClient, has_errors
from engines.provider.config import block_value, unknown_references
from engines.provider.plugin import ProviderProcess
from tests.engines.test_provider_plugin import REGION, TRUST, _provider_binary, provider_config

pytestmark = pytest.mark.integration
ACCOUNT = "210000000036"  # this module's own: moto's state is process-wide (embedded_aws.server)


@pytest.fixture(scope="module")
def provider(aws: EmbeddedAws) -> Iterator[ProviderClient]:
    with ProviderProcess.start(_provider_binary()) as process:
        client = ProviderClient(process.channel)
        assert not has_errors(client.configure(provider_config(client, aws.endpoint_url, ACCOUNT)))
        yield client


def test_the_roles_a_name_pattern_finds_as_hypergovs_lookup_reads_them(provider: ProviderClient,
                                                                       aws: EmbeddedAws) -> None:
    iam = aws.client("iam", account=ACCOUNT, region=REGION)
    made = {name: iam.create_role(RoleName=name, Path="/aws-reserved/sso.amazonaws.com/",
                                  AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
            for name in ("AWSReservedSSO_Engineer_0123456789abcdef", "AWSReservedSSO_Viewer_fedcba9876543210")}
    iam.create_role(RoleName="unrelated", AssumeRolePolicyDocument=TRUST)
    schema = provider.schema().data_source("aws_iam_roles")
    config = block_value(schema.block, {"name_regex": "AWSReservedSSO_Engineer_.*",
                                        "path_prefix": "/aws-reserved/sso.amazonaws.com/"},
                         unknown_references, "data.aws_iam_roles.engineer")
    found = provider.read_data("aws_iam_roles", config)
    assert not has_errors(found.diagnostics), [str(d) for d in found.diagnostics]
    assert isinstance(found.new_state, dict)
    assert found.new_state["arns"] == [made["AWSReservedSSO_Engineer_0123456789abcdef"]]
    assert found.new_state["name_regex"] == "AWSReservedSSO_Engineer_.*"  # the configuration, kept
