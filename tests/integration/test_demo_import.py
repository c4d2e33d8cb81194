"""The demo's import step (`cli.demo_import`) on an endpoint of its own: the cluster a console
user set up is imported, the tree validates but for what the console org lacks (a ProjectLead and
budget of robotics), and the report names the renamed quota and the Edit association."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from click.testing import CliRunner, Result

from cli.demo_import import show_import
from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.integration.common import CONFIG, cli_env

pytestmark = pytest.mark.integration


def test_the_demos_console_cluster_is_imported(own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    out = tmp_path / "imported"
    runs: list[Result] = []

    def hypergov(*args: str, show: int | None = None) -> SimpleNamespace:  # the demo's Story.hypergov, in-process
        runs.append(CliRunner().invoke(main, [*args, "--json"], env=cli_env(own_endpoint.endpoint_url, tmp_path)))
        return SimpleNamespace(returncode=runs[-1].exit_code)

    assert show_import(own_endpoint, hypergov, org=str(CONFIG / "org.yaml"), out=str(out)) == 2, runs[-1].output
    result = runs[-1]
    items = json.loads(result.stdout)["items"]
    assert sorted((i["kind"], i["object"].split(" (")[0]) for i in items if i["kind"] != "invalid") == [
        ("outside-personas", "EKS access entry arn:aws:iam::111122223333:user/dana on console-west"),
        ("renamed", "ComputeQuota console-west/robotics")]
    assert {(i["file"], i["why"].split(":")[0]) for i in items if i["kind"] == "invalid"} == {
        ("projects/robotics.yaml", "COST003"), ("projects/robotics.yaml", "IDN005")}
    genomics = yaml.safe_load((out / "projects" / "genomics.yaml").read_text())
    assert genomics["members"]["ProjectLead"] == ["arn:aws:iam::111122223333:role/genomics-lead"]
    assert genomics["quotas"] == {"console-west": {"instances": {"ml.g5.12xlarge": 4}, "sharing": "LendAndBorrow",
                                                   "borrow_limit_percent": 100}}
    assert genomics["budget"]["monthly_usd"] == 30000
