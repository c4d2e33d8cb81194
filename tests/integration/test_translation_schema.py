"""Every attribute the terraform engine writes exists in the installed AWS provider's schema
(`terraform providers schema -json`), for every stack of the example tree and of a synthetic org
with both cluster modes: a pulumi-aws / provider version skew fails here, loudly."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from benchmarks.synthetic import generate_org
from engines.settings import AwsSettings
from engines.terraform.runner import TerraformRunner
from engines.terraform.translate import check_against_schema, translate
from engines.terraform.workspace import prepare_workspace, resolve_provider_source
from engines.type_mappings import MAPPINGS
from hypergov.validate import validate_files
from stacks.graph import capture_graph
from stacks.spec import plan_stacks
from tests.integration.conftest import example_files

pytestmark = pytest.mark.integration
PROVIDER = "5.100.0"


@pytest.fixture(scope="module")
def provider_schema(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("schema")
    workspace = prepare_workspace(root, resolve_provider_source("mirror", version=PROVIDER))
    directory = workspace.stack_dir("schema")
    required = {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": PROVIDER}}}}
    (directory / "main.tf.json").write_text(json.dumps(required))
    runner = TerraformRunner(binary="terraform", env=workspace.env(dict(os.environ)))
    runner.init(directory)
    return runner.providers_schema(directory)


@pytest.mark.parametrize("files", [
    pytest.param(example_files(), id="example-tree"),
    pytest.param(generate_org(projects=12, clusters=3, seed=5), id="synthetic-org"),
])
def test_every_translated_attribute_is_known_to_the_provider(files: dict[str, bytes],
                                                             provider_schema: dict[str, Any]) -> None:
    report = validate_files(files)
    assert report.ok, report.problems[:3]
    seen_types: set[str] = set()
    for spec in plan_stacks(report.tree):
        graph = capture_graph(report.tree, spec.name, assume_role_name="OrganizationAccountAccessRole")
        translation = translate(graph.resources, aws=AwsSettings(endpoint_url="http://127.0.0.1:1"),
                                provider_version=PROVIDER, default_region="us-west-2")
        assert check_against_schema(translation.config, provider_schema) == [], spec.name
        seen_types |= set(translation.config.get("resource", {}))
    if "clusters/gpu-west.yaml" in files:
        # the example tree exercises every mapped type but the unused plain role-policy attachment
        assert {m.tf_type for m in MAPPINGS.values()} - seen_types <= {"aws_iam_role_policy_attachment"}


def test_schema_check_catches_an_unknown_attribute(provider_schema: dict[str, Any]) -> None:
    config = {"resource": {"aws_iam_role": {"r": {"assume_role_policy": "{}", "not_an_attribute": 1}},
                           "aws_made_up_thing": {"x": {}}}}
    problems = check_against_schema(config, provider_schema)
    assert "aws_iam_role.r: unknown attribute 'not_an_attribute'" in problems
    assert "aws_made_up_thing: not a resource type of the installed provider" in problems
