"""Cluster files of the example tree rewritten to declare their HyperPod cluster (`managed: true`),
for the tests of declared clusters. trn-east is the example's plain-EKS cluster; its groups carry
the execution role and lifecycle scripts the embedded endpoint's seed gives them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

CONFIG = Path(__file__).resolve().parents[2] / "config"
ROLE = "arn:aws:iam::444455556666:role/trn-east-hyperpod-execution"
LIFECYCLE = {"source_s3_uri": "s3://trn-east-lifecycle/scripts/", "on_create": "on_create.sh"}
# The example's trn-east capacity (16 trn1, 8 p4d) as the instance groups the seed creates it with.
TRN_EAST_GROUPS: tuple[tuple[str, str, int], ...] = (
    ("trn1-32xlarge", "ml.trn1.32xlarge", 16), ("p4d-24xlarge", "ml.p4d.24xlarge", 8))


def group(name: str, instance_type: str, count: int) -> dict[str, object]:
    return {"name": name, "instance_type": instance_type, "instance_count": count,
            "lifecycle_config": dict(LIFECYCLE), "execution_role": ROLE}


def declared_cluster(groups: Sequence[tuple[str, str, int]] = TRN_EAST_GROUPS, *, name: str = "trn-east",
                     **hyperpod: object) -> bytes:
    """clusters/trn-east.yaml with `capacity` replaced by `groups` and `hyperpod` settings added."""
    doc = yaml.safe_load((CONFIG / "clusters" / "trn-east.yaml").read_text())
    del doc["capacity"]
    doc["hyperpod"] = {"cluster_name": name, "managed": True, **hyperpod,
                       "instance_groups": [group(*g) for g in groups]}
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
