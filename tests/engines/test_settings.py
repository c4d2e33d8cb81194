"""Settings come from hypergov.yaml, then HYPERGOV_* variables; bad settings fail clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.settings import SettingsError, load_settings


def test_defaults_without_a_file(tmp_path: Path) -> None:
    s = load_settings(environ={"HYPERGOV_SETTINGS": str(tmp_path / "absent.yaml")})
    assert s.engine == "auto" and s.aws.endpoint_url is None and s.terraform.parallelism == 2


def test_file_then_environment_then_overrides(tmp_path: Path) -> None:
    f = tmp_path / "hypergov.yaml"
    f.write_text("engine: pulumi\naws:\n  profile: prod\n  endpoints: {eks: http://eks.local}\n"
                 "kubeconfigs: {gpu-west: /k/gpu-west}\n")
    s = load_settings(f, environ={"HYPERGOV_ENGINE": "terraform", "HYPERGOV_AWS_ENDPOINT_URL": "http://127.0.0.1:5000"},
                      overrides={"terraform.parallelism": 3})
    assert s.engine == "terraform" and s.resolved_engine() == "terraform"
    assert s.aws.profile == "prod"
    assert s.aws.endpoint_for("eks") == "http://eks.local"
    assert s.aws.endpoint_for("iam") == "http://127.0.0.1:5000"
    assert s.kubeconfigs == {"gpu-west": Path("/k/gpu-west")}
    assert s.terraform.parallelism == 3


@pytest.mark.parametrize(("content", "message"), [
    pytest.param("engine: magic\n", "engine", id="bad-engine"),
    pytest.param("aws: {max_retries: 100}\n", "aws.max_retries", id="out-of-range"),
    pytest.param("colour: blue\n", "colour", id="unknown-key"),
    pytest.param("a: [\n", "not valid YAML", id="syntax"),
    pytest.param("state_backend: https://example.com/state\n", "state_backend", id="state-not-s3"),
    pytest.param("state_backend: s3://Bad_Bucket/x\n", "not an S3 state location", id="state-bucket-name"),
])
def test_bad_settings_say_where(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "hypergov.yaml"
    f.write_text(content)
    with pytest.raises(SettingsError, match=message):
        load_settings(f, environ={})


def test_the_state_backend_names_a_key_per_stack(tmp_path: Path) -> None:
    from engines.terraform.backend import S3State

    s = load_settings(environ={"HYPERGOV_SETTINGS": str(tmp_path / "absent.yaml"),
                               "HYPERGOV_STATE_BACKEND": "s3://acme-hypergov-state/prod/"})
    assert s.state_backend == "s3://acme-hypergov-state/prod/"
    state = S3State.parse(s.state_backend, region="us-west-2")
    assert state.key("project-vision") == "prod/stacks/project-vision/terraform.tfstate"
    assert S3State.parse("s3://acme-hypergov-state", region="us-west-2").key("org") == "stacks/org/terraform.tfstate"
    block = state.backend_block("org", s.aws)["s3"]
    # Terraform's S3 backend: native S3 locking (Terraform >= 1.10), no DynamoDB table.
    assert block["use_lockfile"] is True and "dynamodb_table" not in block and block["bucket"] == "acme-hypergov-state"


def test_the_provider_engine_works_on_its_own_number_of_stacks_at_once(tmp_path: Path) -> None:
    """engine: provider has its own limit (its stacks wait on AWS rather than spend CPU), set from
    the environment like every setting; the terraform and pulumi engines keep `terraform.parallelism`."""
    absent = str(tmp_path / "absent.yaml")
    environ = {"HYPERGOV_SETTINGS": absent, "HYPERGOV_TERRAFORM_PARALLELISM": "3",
               "HYPERGOV_TERRAFORM_PROVIDER_ENGINE_PARALLELISM": "120"}
    assert load_settings(environ={**environ, "HYPERGOV_ENGINE": "provider"}).stacks_at_once() == 120
    assert load_settings(environ={**environ, "HYPERGOV_ENGINE": "terraform"}).stacks_at_once() == 3
    assert load_settings(environ={**environ, "HYPERGOV_ENGINE": "auto"}).stacks_at_once() == 3
    with pytest.raises(SettingsError, match="provider_engine_parallelism"):
        load_settings(environ={**environ, "HYPERGOV_TERRAFORM_PROVIDER_ENGINE_PARALLELISM": "0"})


def test_only_plan_no_refresh_turns_refreshing_off(tmp_path: Path) -> None:
    """A settings file that turned refreshing off would make the reconciler apply without seeing drift."""
    f = tmp_path / "hypergov.yaml"
    f.write_text("terraform:\n  refresh_while_planning: false\n")
    with pytest.raises(SettingsError, match="refresh_while_planning"):
        load_settings(f, environ={})
    assert load_settings(environ={"HYPERGOV_SETTINGS": str(tmp_path / "absent.yaml")}).terraform.refresh_while_planning
