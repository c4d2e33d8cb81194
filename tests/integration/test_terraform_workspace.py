"""The terraform workspace: the provider comes only from the filesystem mirror, and parallel
`init`s sharing one plugin cache all succeed (Terraform's cache is not concurrency-safe on its
own; hypergov makes inits take turns)."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engines.terraform.runner import TerraformRunner
from engines.terraform.workspace import (
    MirrorNotFoundError,
    find_mirror,
    os_arch,
    prepare_workspace,
    resolve_provider_source,
)

pytestmark = pytest.mark.integration
PROVIDER = "5.100.0"


def test_parallel_inits_share_the_plugin_cache(tmp_path: Path) -> None:
    workspace = prepare_workspace(tmp_path, resolve_provider_source("mirror", version=PROVIDER))
    assert "direct" in workspace.cli_config.read_text() and 'exclude = ["*/*"]' in workspace.cli_config.read_text()
    runner = TerraformRunner(binary="terraform", env=workspace.env(dict(os.environ)))
    required = {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": PROVIDER}}}}
    dirs = []
    for i in range(6):
        d = workspace.stack_dir(f"s{i}")
        (d / "main.tf.json").write_text(json.dumps(required))
        dirs.append(d)
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(runner.init, dirs))
    for d in dirs:
        assert (d / ".terraform" / "providers" / "registry.terraform.io" / "hashicorp" / "aws" / PROVIDER
                / os_arch()).exists()


def test_a_configured_mirror_without_the_provider_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MirrorNotFoundError, match="plugin_mirror"):
        find_mirror(PROVIDER, configured=tmp_path)


def test_a_stack_whose_provider_link_vanished_heals_on_plan(tmp_path: Path) -> None:
    workspace = prepare_workspace(tmp_path, resolve_provider_source("mirror", version=PROVIDER))
    runner = TerraformRunner(binary="terraform", env=workspace.env(dict(os.environ)))
    d = workspace.stack_dir("s")
    (d / "main.tf.json").write_text(json.dumps({
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": PROVIDER}}},
        "provider": {"aws": [{"region": "us-west-2", "skip_credentials_validation": True,
                              "skip_requesting_account_id": True, "skip_metadata_api_check": True,
                              "access_key": "x", "secret_key": "y"}]}}))
    runner.init(d)
    shutil.rmtree(d / ".terraform" / "providers")
    assert runner.plan(d, out="p.tfplan") is False  # no resources: nothing to change, and no error
