"""`hypergov import` of the applied example tree: the tree it writes validates, says what the
example says (the governance diff between the two is empty) and plans no change to anything it
imported.

Real: the example tree applied by terraform through `hypergov apply` onto the embedded endpoint
(the shared snapshot), the import's reads of that endpoint, hypergov's validator, the governance
diff and `hypergov plan` (terraform) of the imported tree against the same state and endpoint.
The import keeps what the live org does not hold from the example tree itself (`--keep-from`):
org.yaml's policy, descriptions, allowed priority classes, extra permissions, Git-host handles,
Identity Center members, owners, workload classes; and trn-east's Kueue queues (plain EKS: they
live in Kubernetes, which the endpoint has none of). Everything else comes from the endpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from hypergov.governance_diff import diff_governance
from hypergov.governance_markdown import governance_markdown
from hypergov.validate import load_valid_tree, validate_dir
from tests.integration.conftest import restore_applied_example

pytestmark = pytest.mark.integration
GPU_WEST = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"  # config/clusters/gpu-west.yaml
RESEARCH = "444455556666"  # org.yaml: ml-research, trn-east's account (config/clusters/trn-east.yaml)


def test_the_imported_example_says_what_the_example_says(applied_example: Path, own_endpoint: EmbeddedAwsProcess,
                                                          tmp_path: Path) -> None:
    env = restore_applied_example(applied_example, own_endpoint, tmp_path)
    config, out = tmp_path / "gov" / "config", tmp_path / "imported"
    imported = CliRunner().invoke(main, ["import", "--cluster", GPU_WEST, "--cluster", "trn-east", "--account",
                                         RESEARCH, "--region", "us-east-1", "--keep-from", str(config),
                                         "--out", str(out), "--json"], env=env)
    assert imported.exit_code == 2, imported.output
    report = json.loads(imported.stdout)
    (tmp_path.parent / "import-report.json").write_text(json.dumps(report, indent=1))
    # only trn-east's Kueue queues (nlp's and research's) and its priority classes, which live in Kubernetes
    assert sorted((i["kind"], i["object"].split(" (")[0]) for i in report["items"]) == [
        ("kept", "Kueue ClusterQueue hyperpod-ns-nlp-clusterqueue on trn-east"),
        ("kept", "Kueue ClusterQueue hyperpod-ns-research-clusterqueue on trn-east"),
        ("not-read", "HyperPod cluster trn-east")], report
    assert validate_dir(out).ok, validate_dir(out).problems
    diff = diff_governance(load_valid_tree(config), load_valid_tree(out))
    assert governance_markdown(diff).endswith("No governance changes."), governance_markdown(diff)
    planned = CliRunner().invoke(main, ["plan", "--config", str(out), "--json"], env=env)
    assert planned.exit_code == 0, planned.output
