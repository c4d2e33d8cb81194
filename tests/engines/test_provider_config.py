"""The configuration the terraform engine writes, as the provider's cty values (issue 34).

The pure tests use small schemas written here; the integration test takes every stack of the
example tree and of a synthetic org through `engines.terraform.translate` (what terraform is
given) and has the real hashicorp/aws 5.100.0 provider, over the plugin protocol, validate every
resource's configuration as `engines.provider.config` builds it (references unknown, as before a
plan): the provider's own ValidateResourceTypeConfig must return no error for any of them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.synthetic import generate_org
from engines.provider.client import ProviderClient
from engines.provider.config import (
    ConfigError,
    Reference,
    UnsupportedExpression,
    block_value,
    dependency_order,
    reference_of,
    resources_of,
    unknown_references,
    value_of,
)
from engines.provider.cty import BOOL, NUMBER, STRING, UNKNOWN, ListOf, Object, SetOf
from engines.provider.plugin import ProviderProcess
from engines.provider.schema import Attribute, Block, NestedBlock
from engines.settings import AwsSettings
from engines.terraform.translate import translate
from hypergov.validate import validate_files
from stacks.graph import capture_graph
from stacks.spec import plan_stacks
from tests.engines.test_provider_plugin import _provider_binary
from tests.integration.conftest import example_files

ROLE = Block(attributes={"name": Attribute(STRING, optional=True), "arn": Attribute(STRING, computed=True),
                         "max_session_duration": Attribute(NUMBER, optional=True),
                         "force_detach_policies": Attribute(BOOL, optional=True),
                         "managed_policy_arns": Attribute(SetOf(STRING), optional=True)},
             blocks={"inline_policy": NestedBlock("set", Block(attributes={"name": Attribute(STRING),
                                                                           "policy": Attribute(STRING)}, blocks={}))})


def test_a_whole_reference_or_one_of_one_and_nothing_else() -> None:
    assert reference_of("${aws_iam_role.lead.arn}") == Reference("aws_iam_role.lead", ("arn",))
    assert reference_of("${one(data.aws_iam_roles.r-1.arns)}") == Reference("data.aws_iam_roles.r-1", ("arns",), True)
    assert reference_of("arn:aws:iam::111122223333:role/x") is None
    for text in ("prefix-${aws_iam_role.lead.arn}", "${jsonencode(local.x)}", "%{ if true }x%{ endif }"):
        with pytest.raises(UnsupportedExpression, match="does not evaluate"):
            reference_of(text, "aws_iam_role.x.name")


def test_every_attribute_and_block_is_there_converted_as_terraform_converts() -> None:
    body = {"name": "lead", "max_session_duration": "7200", "force_detach_policies": "true",
            "inline_policy": {"name": "p", "policy": "${aws_iam_policy.p.arn}"}}
    value = block_value(ROLE, body, lambda ref: "arn:aws:iam::1:policy/p", "aws_iam_role.lead")
    assert value == {"name": "lead", "arn": None, "max_session_duration": 7200, "force_detach_policies": True,
                     "managed_policy_arns": None,
                     "inline_policy": [{"name": "p", "policy": "arn:aws:iam::1:policy/p"}]}
    assert block_value(ROLE, {}, unknown_references, "r")["inline_policy"] == []
    assert value_of(3600, STRING, unknown_references, "x") == "3600" and value_of(False, STRING, unknown_references,
                                                                                  "x") == "false"
    assert value_of("${aws_iam_role.lead.arn}", STRING, unknown_references, "x") == UNKNOWN
    with pytest.raises(ConfigError, match="not in the provider's schema"):
        block_value(ROLE, {"nmae": "typo"}, unknown_references, "aws_iam_role.lead")
    with pytest.raises(ConfigError, match="'forever' is not a number"):
        value_of("forever", NUMBER, unknown_references, "aws_iam_role.lead.max_session_duration")


def test_one_of_a_list_is_its_element_or_null_and_more_is_refused() -> None:
    ref = "${one(data.aws_iam_roles.r.arns)}"
    assert value_of(ref, STRING, lambda r: ["arn:a"], "x") == "arn:a"
    assert value_of(ref, STRING, lambda r: [], "x") is None
    assert value_of(ref, STRING, unknown_references, "x") == UNKNOWN
    with pytest.raises(ConfigError, match="holds 2 elements"):
        value_of(ref, STRING, lambda r: ["a", "b"], "x")
    assert value_of(["${aws_iam_role.a.arn}"], ListOf(STRING), lambda r: "arn:a", "x") == ["arn:a"]
    assert value_of({"k": 1}, Object({"k": NUMBER, "v": STRING}), unknown_references, "x") == {"k": 1, "v": None}


def test_blocks_come_after_what_they_refer_to_and_depend_on() -> None:
    config = {"resource": {
        "aws_iam_role_policy": {"p": {"role": "${aws_iam_role.r.name}", "policy": "{}"}},
        "aws_iam_role": {"r": {"name": "r", "depends_on": ["aws_iam_policy.boundary"], "provider": "aws.west"}},
        "aws_iam_policy": {"boundary": {"policy": "{}"}}},
        "data": {"aws_iam_roles": {"sso": {"name_regex": "x"}}}}
    blocks = resources_of(config)
    assert [b.address for b in dependency_order(blocks)] == [
        "aws_iam_policy.boundary", "data.aws_iam_roles.sso", "aws_iam_role.r", "aws_iam_role_policy.p"]
    role = next(b for b in blocks if b.address == "aws_iam_role.r")
    assert (role.provider, dict(role.body)) == ("aws.west", {"name": "r"})
    cyclic = {"resource": {"aws_iam_role": {"a": {"name": "${aws_iam_role.b.name}"},
                                            "b": {"name": "${aws_iam_role.a.name}"}}}}
    with pytest.raises(ConfigError, match=r"cycle among aws_iam_role\.a, aws_iam_role\.b"):
        dependency_order(resources_of(cyclic))
    with pytest.raises(ConfigError, match=r"refers to aws_iam_role\.gone"):
        dependency_order(resources_of({"resource": {"aws_iam_role": {"a": {"name": "${aws_iam_role.gone.name}"}}}}))


@pytest.fixture(scope="module")
def provider() -> Iterator[ProviderClient]:
    with ProviderProcess.start(_provider_binary()) as process:
        yield ProviderClient(process.channel)


@pytest.mark.integration
@pytest.mark.parametrize("files", [
    pytest.param(example_files(), id="example-tree"),
    pytest.param(generate_org(projects=6, clusters=2, seed=11), id="synthetic-org"),
])
def test_the_provider_accepts_every_resource_hypergov_declares(files: dict[str, bytes],
                                                               provider: ProviderClient) -> None:
    report = validate_files(files)
    assert report.ok, report.problems[:3]
    schemas, checked = provider.schema(), 0
    for spec in plan_stacks(report.tree):
        graph = capture_graph(report.tree, spec.name, assume_role_name="OrganizationAccountAccessRole")
        config = translate(graph.resources, aws=AwsSettings(endpoint_url="http://127.0.0.1:1"),
                           provider_version="5.100.0", default_region="us-west-2").config
        for block in dependency_order(resources_of(config)):
            schema = schemas.data_source(block.type) if block.mode == "data" else schemas.resource(block.type)
            value = block_value(schema.block, block.body, unknown_references, f"{spec.name}: {block.address}")
            if block.mode == "managed":
                errors = [str(d) for d in provider.validate(block.type, value) if d.severity == "error"]
                assert errors == [], f"{spec.name}: {block.address}: {errors}"
                checked += 1
    assert checked > 20
