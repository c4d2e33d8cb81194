"""Data sources through the plugin protocol (ReadDataSource): what hypergov's lookups find.

What is real: the hashicorp/aws 5.100.0 provider over the plugin protocol and the embedded
endpoint (in this process); the roles are made with boto3, and the expected ARNs are the ones
IAM returned for them, not what the provider answered."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws import EmbeddedAws
from engines.provider.client import ProviderClient, ReadState, has_errors
from engines.provider.config import block_value, unknown_references
from engines.provider.cty import CtyValue
from engines.provider.data_reads import DataReads
from engines.provider.plugin import ProviderProcess
from hypergov import naming
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


class _CountingClient(ProviderClient):
    """The real client, counting the reads it sends to the provider."""

    def __init__(self, inner: ProviderClient) -> None:
        self.__dict__.update(inner.__dict__)
        self.sent: list[dict[str, Any]] = []

    def read_data(self, type_name: str, config: CtyValue) -> ReadState:
        self.sent.append(dict(config) if isinstance(config, dict) else {})
        return super().read_data(type_name, config)


def _roles_config(provider: ProviderClient, name_regex: str, path: str) -> CtyValue:
    schema = provider.schema().data_source("aws_iam_roles")
    return block_value(schema.block, {"name_regex": name_regex, "path_prefix": path}, unknown_references,
                       "data.aws_iam_roles.x")


SSO_PATH = naming.sso_role_path(REGION)


@pytest.fixture(scope="module")
def sso_roles(provider: ProviderClient, aws: EmbeddedAws) -> dict[str, str]:
    """Identity Center-like roles for 130 permission sets (two ListRoles pages), among them names
    one regex must tell apart (`lead` and `lead_x`, whose role name starts like lead's)."""
    iam = aws.client("iam", account=ACCOUNT, region=REGION)
    sets = ["acme-ml-lead", "acme-ml-lead_x", "a.b+c=d,e@f"] + [f"team{i:03d}-engineer" for i in range(127)]
    return {ps: iam.create_role(RoleName=f"{naming.SSO_ROLE_PREFIX}{ps}_{i:016x}", Path=SSO_PATH,
                                AssumeRolePolicyDocument=TRUST)["Role"]["Arn"] for i, ps in enumerate(sets)}


def test_a_plans_role_lookups_share_one_listing_and_find_what_the_provider_finds(
        provider: ProviderClient, aws: EmbeddedAws, sso_roles: dict[str, str]) -> None:
    """The provider was asked once, for the whole path, for all 130 lookups: two ListRoles pages
    (IAM's default page is 100 roles), where each lookup alone lists both pages. Every answer
    names the role IAM made for its permission set, and equals the provider's own read of the same
    configuration; that is compared for the names one regex must tell apart and every tenth other
    (each own read is two ~74 KB pages, and the provider's Go client loses such an answer now and
    then under load, aws-sdk-go-v2#2737, which the provider block's single attempt does not retry:
    see `embedded_aws.server.QuietRequestHandler`)."""
    counting, reads = _CountingClient(provider), DataReads()
    configs = {ps: _roles_config(provider, naming.sso_role_name_regex(ps), SSO_PATH) for ps in sso_roles}
    aws.clear_calls()
    shared = {ps: reads.read(counting, "aws_iam_roles", config) for ps, config in configs.items()}
    assert [c["operation"] for c in aws.calls()] == ["ListRoles", "ListRoles"]
    assert [c["name_regex"] for c in counting.sent] == [None]
    for permission_set, arn in sso_roles.items():
        answer = shared[permission_set]
        assert not has_errors(answer.diagnostics) and isinstance(answer.new_state, dict)
        assert answer.new_state["arns"] == [arn]  # IAM's ARN for the role made
    compared = [ps for i, ps in enumerate(sso_roles) if i < 3 or i % 10 == 0]
    for permission_set in compared:
        own = provider.read_data("aws_iam_roles", configs[permission_set])
        assert not has_errors(own.diagnostics), ([str(d) for d in own.diagnostics], permission_set)
        assert shared[permission_set].new_state == own.new_state


def test_what_the_listing_cannot_answer_is_read_by_the_provider(provider: ProviderClient, aws: EmbeddedAws,
                                                                 sso_roles: dict[str, str]) -> None:
    """A regex hypergov did not make, a role made after the listing, and every read once the run
    applies go to the provider, and find what it finds."""
    counting, reads = _CountingClient(provider), DataReads()
    reads.read(counting, "aws_iam_roles", _roles_config(provider, naming.sso_role_name_regex("acme-ml-lead"), SSO_PATH))
    foreign = _roles_config(provider, "AWSReservedSSO_team00[12]-.*", SSO_PATH)
    found = reads.read(counting, "aws_iam_roles", foreign)
    assert isinstance(found.new_state, dict)
    assert sorted(found.new_state["arns"]) == sorted([sso_roles["team001-engineer"], sso_roles["team002-engineer"]])
    iam = aws.client("iam", account=ACCOUNT, region=REGION)
    late = iam.create_role(RoleName=f"{naming.SSO_ROLE_PREFIX}late-viewer_{'ab' * 8}", Path=SSO_PATH,
                           AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    found = reads.read(counting, "aws_iam_roles", _roles_config(provider, naming.sso_role_name_regex("late-viewer"),
                                                                 SSO_PATH))
    assert isinstance(found.new_state, dict) and found.new_state["arns"] == [late]
    reads.stop_sharing()
    reads.read(counting, "aws_iam_roles", _roles_config(provider, naming.sso_role_name_regex("acme-ml-lead"), SSO_PATH))
    assert [c["name_regex"] for c in counting.sent] == [
        None, "AWSReservedSSO_team00[12]-.*", naming.sso_role_name_regex("late-viewer"),
        naming.sso_role_name_regex("acme-ml-lead")]


@pytest.mark.parametrize("regex", [
    "AWSReservedSSO_x_[0-9a-f]{16}$", "^AWSReservedSSO_x_[0-9a-f]{16}", "^AWSReservedSSO_a.b_[0-9a-f]{16}$",
    "^AWSReservedSSO_(x)_[0-9a-f]{16}$", "^AWSReservedSSO__[0-9a-f]{16}$", ".*"])
def test_only_the_regexes_hypergov_makes_are_answered_from_a_listing(regex: str) -> None:
    """Unanchored, an unescaped dot, a group, an empty name: RE2 and Python might differ, or
    the pattern is not one permission set's; the provider reads those."""
    assert naming.sso_role_name_matcher(regex) is None
    made = naming.sso_role_name_regex("a.b+c-d")
    matcher = naming.sso_role_name_matcher(made)
    assert matcher is not None and matcher.pattern == made
