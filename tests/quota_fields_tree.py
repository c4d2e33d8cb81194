"""A variant of the example tree whose gpu-west quotas use the newer quota fields: vision gives
whole p5 instances, g5 accelerators and absolute borrow limits (one in accelerators, one in
instances); recsys gives g5 instances and p5 MIG partitions; speech gives g5 in vCPUs and memory
(its serving class, bound in GPUs, is left out: a vCPU quota holds no GPU). It validates clean."""

from __future__ import annotations

from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from tests.example_tree import example_files

VISION = """description: Computer-vision foundation models
members:
  ProjectLead: [arn:aws:iam::111122223333:role/vision-lead]
cost_centre: CC-1042
budget: {monthly_usd: 250000}
tags: {Owner: vision-team, Environment: production}
quotas:
  gpu-west:
    instances:
      ml.p5.48xlarge: 10
    resources:
      ml.g5.12xlarge: {accelerators: 8}
    sharing: LendAndBorrow
    borrow_limit_percent: 50
    absolute_borrow_limits:
      ml.p5.48xlarge: {accelerators: 16}
      ml.g5.12xlarge: {instances: 1}
fair_share_weight: 30
allowed_priority_classes: [training, experimentation]
"""
RECSYS_QUOTA = """quotas:
  gpu-west:
    instances:
      ml.g5.12xlarge: 4
    resources:
      ml.p5.48xlarge: {partition: {profile: mig-1g.10gb, count: 14}}
"""


def tree_with_new_fields(*, speech_resources: dict[str, str] | None = None) -> GovernanceTree:
    """`speech_resources` adds resources (instance type: YAML flow mapping) to speech's gpu-west quota."""
    files = example_files()
    files["projects/vision.yaml"] = VISION.encode()
    recsys = files["projects/recsys.yaml"].decode()
    start = recsys.index("quotas:")
    end = recsys.index("    sharing:", start)
    files["projects/recsys.yaml"] = (recsys[:start] + RECSYS_QUOTA + recsys[end:]).encode()
    speech = files["projects/speech.yaml"].decode()
    in_vcpu = "    resources:\n      ml.g5.12xlarge: {vcpu: 96, memory_gib: 384}\n" + "".join(
        f"      {itype}: {amount}\n" for itype, amount in (speech_resources or {}).items())
    files["projects/speech.yaml"] = speech.replace("    instances:\n      ml.g5.12xlarge: 8\n", in_vcpu).encode()
    del files["workloads/speech/serving.yaml"]
    report = validate_files(files)
    assert report.ok, report.problems
    return report.tree
