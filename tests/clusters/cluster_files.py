"""Cluster files of the example tree rewritten to declare their HyperPod cluster (`managed: true`),
for the tests of declared clusters. trn-east is the example's plain-EKS cluster; its groups carry
the execution role and lifecycle scripts the embedded endpoint's seed gives them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

CONFIG = Path(__file__).resolve().parents[2] / "config"
ACCOUNTS = {"trn-east": "444455556666", "gpu-west": "111122223333"}
# The example's trn-east capacity (16 trn1, 8 p4d) as the instance groups the seed creates it with.
TRN_EAST_GROUPS: tuple[tuple[str, str, int], ...] = (
    ("trn1-32xlarge", "ml.trn1.32xlarge", 16), ("p4d-24xlarge", "ml.p4d.24xlarge", 8))
GPU_WEST_GROUPS: tuple[tuple[str, str, int], ...] = (
    ("g5-12xlarge", "ml.g5.12xlarge", 16), ("p5-48xlarge", "ml.p5.48xlarge", 32))


def group(name: str, instance_type: str, count: int, *, example: str = "trn-east") -> dict[str, object]:
    """An instance group with the role and lifecycle scripts `embedded_aws.seed` gives the example's
    cluster `example` (so a declared group of the seeded cluster matches it)."""
    return {"name": name, "instance_type": instance_type, "instance_count": count,
            "lifecycle_config": {"source_s3_uri": f"s3://{example}-lifecycle/scripts/", "on_create": "on_create.sh"},
            "execution_role": f"arn:aws:iam::{ACCOUNTS[example]}:role/{example}-hyperpod-execution"}


def declared_cluster(groups: Sequence[tuple[str, str, int]] = TRN_EAST_GROUPS, *, example: str = "trn-east",
                     name: str | None = None, eks: str | None = None, **hyperpod: object) -> bytes:
    """clusters/<example>.yaml with `capacity` replaced by `groups` and `hyperpod` settings added
    (`name`: another HyperPod cluster name, `eks`: another EKS cluster)."""
    doc = yaml.safe_load((CONFIG / "clusters" / f"{example}.yaml").read_text())
    del doc["capacity"]
    doc["hyperpod"] = {**doc["hyperpod"], "cluster_name": name or example, "managed": True, **hyperpod,
                       "instance_groups": [group(*g, example=example) for g in groups]}
    if name is not None:
        doc["hyperpod"].pop("arn", None)
    if eks is not None:
        doc["eks"] = {"cluster_name": eks}
    return yaml.safe_dump(doc, sort_keys=False).encode()


def with_files(files: Mapping[str, bytes], **changes: bytes | None) -> dict[str, bytes]:
    """`files` with `clusters__trn_east=...`-style keys ('__' is '/', '_' is '-') replaced or deleted (None)."""
    out = dict(files)
    for key, content in changes.items():
        path = key.replace("__", "/").replace("_", "-") + ".yaml"
        if content is None:
            out.pop(path, None)
        else:
            out[path] = content
    return out
