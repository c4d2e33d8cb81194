"""The example tree (config/) as the component and stack tests load it.

HyperPod ARNs end in an id SageMaker generates, so a task-governance cluster must carry its ARN in
the tree (`hyperpod.arn`); where the example does not (yet), the ARN a real cluster would have is
added here, in memory, so the cluster stacks can be captured.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from hypergov.model.tree import GovernanceTree
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files

CONFIG = Path(__file__).resolve().parent.parent / "config"


def example_files() -> dict[str, bytes]:
    files = read_tree_dir(CONFIG)
    org = yaml.safe_load(files["org.yaml"])
    accounts = {a["name"]: a["id"] for a in org["accounts"]}
    for rel in sorted(files):
        if not rel.startswith("clusters/"):
            continue
        data = yaml.safe_load(files[rel])
        if data.get("task_governance", True) and "arn" not in data["hyperpod"]:
            region = data.get("region", org["home_region"])
            cluster_id = (data["hyperpod"]["cluster_name"].replace("-", "") + "0" * 12)[:12]
            data["hyperpod"]["arn"] = (f"arn:{org.get('partition', 'aws')}:sagemaker:{region}:"
                                       f"{accounts[data['account']]}:cluster/{cluster_id}")
            files[rel] = yaml.safe_dump(data, sort_keys=False).encode()
    return files


def example_tree() -> GovernanceTree:
    return valid_tree(example_files())


def valid_tree(files: dict[str, bytes]) -> GovernanceTree:
    """The tree of `files`, which must validate."""
    report = validate_files(files)
    assert report.ok and report.tree is not None, report.problems
    return report.tree


def edited_example(path: str, old: bytes, new: bytes) -> dict[str, bytes]:
    """The example's files with `old` (which must be there) replaced by `new` in `path`."""
    files = example_files()
    assert old in files[path]
    files[path] = files[path].replace(old, new)
    return files
