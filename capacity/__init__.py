"""The capacity planner: a deterministic simulator of HyperPod task governance / Kueue quota
semantics (guarantees, lending and borrowing, gang admission, priorities, reclaim and fair-share
preemption), job traces to feed it, and views of what a quota change does to every team.

Layers: `spec` (inputs) -> `ledger`, `pending`, `preemption`, `engine`, `recorder` (the core,
no config models) -> `results`, `runner`, `diff` -> `render`, `plots`, `cli`; `adapter` is the
only module that reads the governance tree. The rules are listed in SEMANTICS.md.
"""

from capacity.engine import SimulationError, simulate
from capacity.results import ClusterResult, TeamResult
from capacity.spec import (
    ClusterCapacity,
    InstanceTypeName,
    Job,
    JobId,
    PriorityClass,
    SimulationSettings,
    TeamName,
    TeamQuota,
)

__all__ = ["ClusterCapacity", "ClusterResult", "InstanceTypeName", "Job", "JobId", "PriorityClass",
           "SimulationError", "SimulationSettings", "TeamName", "TeamQuota", "TeamResult", "simulate"]
