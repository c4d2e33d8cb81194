"""The terraform workspace: the provider comes only from the filesystem mirror, and parallel
`init`s sharing one plugin cache all succeed (Terraform's cache is not concurrency-safe on its
own; hypergov makes inits take turns)."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reconciler.terraform.runner import TerraformRunner
from reconciler.terraform.workspace import MirrorNotFoundError, find_mirror, os_arch, prepare_workspace

pytestmark = pytest.mark.integration
PROVIDER = "5.100.0"


def test_parallel_inits_share_the_plugin_cache(tmp_path: Path) -> None:
    workspace = prepare_workspace(tmp_path, find_mirror(PROVIDER))
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
