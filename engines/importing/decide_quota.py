"""A live compute quota as a project's `quotas.<cluster>` entry, decided without I/O.

SageMaker stores a guarantee with the amounts it derives (`ComputeQuotaResourceConfig`: given
accelerators only, vCPU and memory by the ratio of the instance's accelerators; given vCPU or
memory only, the other by ratio and accelerators 0). The tree writes what was given, so a derived
amount that equals the documented ratio is left out (the plan compares only the keys a request
sets: `engines.hyperpod.driver`). vCPU alone and memory alone store the same three values, so
such a guarantee is written as vCPU (the same request result). Absolute borrow limits are stored
as sent and written as read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypergov.hyperpod_defaults import DEFAULT_SHARING_STRATEGY
from hypergov.model.accelerators import accelerators_per_instance
from hypergov.model.aws_limits import BORROW_LIMIT, LIMITS
from hypergov.model.instance_specs import instance_spec


@dataclass(frozen=True)
class DecodedQuota:
    """The tree's `quotas.<cluster>` mapping, the project-wide values the quota sets, and why parts
    could not be said (each a report item)."""

    entry: dict[str, Any]
    fair_share_weight: int | None
    preempt_own_lower_priority: bool | None
    problems: tuple[tuple[str, Mapping[str, Any]], ...]  # (why, live value)


def _close(a: Any, b: float) -> bool:
    return isinstance(a, int | float) and math.isclose(float(a), b, rel_tol=1e-9, abs_tol=1e-6)


def _number(value: Any) -> int | float:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def given_amount(resource: Mapping[str, Any]) -> dict[str, Any]:
    """The amount as the team gave it: SageMaker's ratio-derived values left out."""
    itype = str(resource["InstanceType"])
    if "Count" in resource:
        return {"instances": int(resource["Count"])}
    amount: dict[str, Any] = {}
    if "AcceleratorPartition" in resource:
        part = resource["AcceleratorPartition"]
        amount["partition"] = {"profile": str(part["Type"]), "count": int(part["Count"])}
    accelerators, vcpu, memory = (resource.get(k) for k in ("Accelerators", "VCpu", "MemoryInGiB"))
    spec, per = instance_spec(itype), accelerators_per_instance(itype) or 0
    derived_vcpu = derived_memory = None
    if spec is not None and "AcceleratorPartition" not in resource:
        if accelerators and per:
            derived_vcpu, derived_memory = accelerators / per * spec.vcpu, accelerators / per * spec.memory_gib
        elif accelerators in (0, None) and vcpu is not None:
            derived_memory = float(vcpu) / spec.vcpu * spec.memory_gib
    if accelerators is not None and not (accelerators == 0 and vcpu is not None and "AcceleratorPartition" not in
                                         resource and spec is not None):
        amount["accelerators"] = int(accelerators)
    if vcpu is not None and not (derived_vcpu is not None and _close(vcpu, derived_vcpu)):
        amount["vcpu"] = _number(vcpu)
    if memory is not None and not (derived_memory is not None and _close(memory, derived_memory)):
        amount["memory_gib"] = _number(memory)
    return amount


def decode_quota(fields: Mapping[str, Any]) -> DecodedQuota:
    """The ClusterQuota YAML of a ListComputeQuotas summary's config and target."""
    config = fields.get("ComputeQuotaConfig") or {}
    target = fields.get("ComputeQuotaTarget") or {}
    problems: list[tuple[str, Mapping[str, Any]]] = []
    instances: dict[str, int] = {}
    resources: dict[str, dict[str, Any]] = {}
    for resource in config.get("ComputeQuotaResources") or []:
        amount = given_amount(resource)
        if set(amount) == {"instances"}:
            instances[str(resource["InstanceType"])] = amount["instances"]
        else:
            resources[str(resource["InstanceType"])] = amount
    entry: dict[str, Any] = {}
    if instances:
        entry["instances"] = dict(sorted(instances.items()))
    if resources:
        entry["resources"] = dict(sorted(resources.items()))
    sharing = config.get("ResourceSharingConfig") or {}
    entry["sharing"] = str(sharing.get("Strategy") or DEFAULT_SHARING_STRATEGY)
    entry.update(_borrowing(sharing, problems))
    if fields.get("ActivationState", "Enabled") != "Enabled":
        problems.append(("the quota is not active (ActivationState); hypergov's quotas are always Enabled, so "
                         "a plan would enable it", {"ActivationState": fields.get("ActivationState")}))
    preempt = config.get("PreemptTeamTasks")
    weight = target.get("FairShareWeight")
    return DecodedQuota(entry=entry, fair_share_weight=None if weight is None else int(weight),
                        preempt_own_lower_priority=None if preempt is None else preempt == "LowerPriority",
                        problems=tuple(problems))


def _borrowing(sharing: Mapping[str, Any], problems: list[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    limit = sharing.get("BorrowLimit")
    low, high = LIMITS[BORROW_LIMIT].min, LIMITS[BORROW_LIMIT].max
    if limit is not None and low is not None and high is not None and not low <= int(limit) <= high:
        problems.append((f"BorrowLimit {limit} is outside the documented {low}-{high} percent the tree allows; "
                         "left out (HyperPod's default then applies: a plan would change it)",
                         {"BorrowLimit": limit}))
    elif limit is not None:
        out["borrow_limit_percent"] = int(limit)
    elif sharing.get("Strategy", DEFAULT_SHARING_STRATEGY) == "LendAndBorrow":
        problems.append(("BorrowLimit is not set live (HyperPod applies its default, 50); hypergov writes the "
                         "default explicitly, so a plan sets BorrowLimit 50 (the same limit in effect)",
                         {"BorrowLimit": None}))
    limits = {str(r["InstanceType"]): given_amount(r) if "Count" not in r else {"instances": int(r["Count"])}
              for r in sharing.get("AbsoluteBorrowLimits") or []}
    if limits:
        out["absolute_borrow_limits"] = dict(sorted(limits.items()))
    return out
