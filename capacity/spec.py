"""The simulator's inputs as small, pure dataclasses: the cluster and its teams' quota policies,
the jobs of a trace, and the settings of one run.

They mirror HyperPod task governance (ComputeQuota, ClusterSchedulerConfig) but in GPUs and
without any reference to the config models, so the simulator core can be tested, benchmarked
and reused on its own; `capacity.adapter` builds them from a validated tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NewType

from hypergov.hyperpod_defaults import (
    DEFAULT_BORROW_LIMIT_PERCENT,
    DEFAULT_FAIR_SHARE_WEIGHT,
    DEFAULT_PREEMPT_OWN_LOWER_PRIORITY,
    DEFAULT_SHARING_STRATEGY,
)

TeamName = NewType("TeamName", str)
InstanceTypeName = NewType("InstanceTypeName", str)
JobId = NewType("JobId", str)

SharingStrategy = Literal["Lend", "DontLend", "LendAndBorrow"]
ProgressPolicy = Literal["restart", "checkpoint"]


@dataclass(frozen=True, slots=True)
class PriorityClass:
    """A scheduler priority class; a higher weight is more important."""

    name: str
    weight: int


@dataclass(frozen=True, slots=True)
class TeamQuota:
    """One team's compute allocation on the cluster (a HyperPod ComputeQuota), in GPUs."""

    name: TeamName
    guaranteed_gpus: dict[InstanceTypeName, int]
    """Nominal (guaranteed) GPUs per instance type; types not listed are 0."""
    sharing: SharingStrategy = DEFAULT_SHARING_STRATEGY
    """Lend: lends idle quota, never borrows. LendAndBorrow (HyperPod's default): lends and borrows.
    DontLend: neither."""
    borrow_limit_percent: int | None = None
    """How much more than its guarantee the team may use, in percent of it; None: HyperPod's default
    (`hypergov.hyperpod_defaults`, the constant the rules and components use too)."""
    absolute_borrow_gpus: dict[InstanceTypeName, int] = field(default_factory=dict)
    """Per instance type, the most GPUs the team may borrow (SageMaker `AbsoluteBorrowLimits`): for a
    type listed here it replaces the percentage, and a type the team has no guarantee of may be
    borrowed up to it. Only with LendAndBorrow."""
    fair_share_weight: int = DEFAULT_FAIR_SHARE_WEIGHT
    """Weight of the team's share of idle capacity; 0 (HyperPod's default) means it always yields first."""
    preempt_own_lower_priority: bool = DEFAULT_PREEMPT_OWN_LOWER_PRIORITY
    """HyperPod PreemptTeamTasks=LowerPriority: the team's urgent jobs may evict its own lesser ones."""

    def borrow_limit_gpus(self, instance_type: InstanceTypeName) -> int:
        """GPUs the team may use above its guarantee of `instance_type`: the absolute limit of the
        type when there is one, else the percentage of the guarantee (floored to whole GPUs)."""
        if self.sharing != "LendAndBorrow":
            return 0
        absolute = self.absolute_borrow_gpus.get(instance_type)
        if absolute is not None:
            return absolute  # "regardless of the percentage-based BorrowLimit" (ResourceSharingConfig)
        percent = DEFAULT_BORROW_LIMIT_PERCENT if self.borrow_limit_percent is None else self.borrow_limit_percent
        return self.guaranteed_gpus.get(instance_type, 0) * percent // 100


@dataclass(frozen=True, slots=True)
class ClusterCapacity:
    """Everything the simulator needs to know about one cluster."""

    name: str
    capacity_gpus: dict[InstanceTypeName, int]
    """GPUs per instance type: instances x accelerators per instance."""
    teams: tuple[TeamQuota, ...]
    priority_classes: tuple[PriorityClass, ...]
    fair_share: bool = True
    """True: idle capacity goes to the team with the lowest weighted dominant share, and teams under
    their fair share may preempt those above it. False: first come, first served."""
    idle_resource_sharing: bool = True
    """True: capacity that no team is guaranteed is lendable too."""
    slices_per_instance: dict[InstanceTypeName, int] = field(default_factory=dict)
    """The partition resources (an instance type split into one MIG profile, named by
    `partition_resource`) and the slices of that profile one instance holds (its GPUs x the
    profile's partitions per GPU). Their capacity, guarantees and jobs count slices, and a job's
    pods are placed on instances (`capacity.placement`)."""

    def team(self, name: str) -> TeamQuota | None:
        for quota in self.teams:
            if quota.name == name:
                return quota
        return None

    def problems(self) -> list[str]:
        """Why this description cannot be simulated (empty when it can)."""
        found: list[str] = []
        names = [t.name for t in self.teams]
        if len(set(names)) != len(names):
            found.append("team names must be unique")
        if not self.priority_classes:
            found.append("at least one priority class is needed")
        for itype, gpus in sorted(self.capacity_gpus.items()):
            if gpus < 0:
                found.append(f"capacity of {itype} is negative")
        for itype, per in sorted(self.slices_per_instance.items()):
            if itype not in self.capacity_gpus:
                found.append(f"partition resource {itype} has no capacity in the cluster")
            elif per <= 0 or self.capacity_gpus[itype] % per:
                found.append(f"capacity of {itype} ({self.capacity_gpus[itype]} slices) is not a whole number of "
                             f"instances of {per} slices")
        for team in self.teams:
            for itype, gpus in sorted(team.guaranteed_gpus.items()):
                if gpus < 0:
                    found.append(f"team {team.name}: guarantee of {itype} is negative")
                if itype not in self.capacity_gpus:
                    found.append(f"team {team.name}: instance type {itype} is not in the cluster")
            if team.fair_share_weight < 0:
                found.append(f"team {team.name}: fair_share_weight is negative")
            if team.borrow_limit_percent is not None and team.borrow_limit_percent < 0:
                found.append(f"team {team.name}: borrow_limit_percent is negative")
            for itype, gpus in sorted(team.absolute_borrow_gpus.items()):
                if gpus < 0:
                    found.append(f"team {team.name}: absolute borrow limit of {itype} is negative")
                if itype not in self.capacity_gpus:
                    found.append(f"team {team.name}: absolute borrow limit names {itype}, not in the cluster")
        return found


@dataclass(frozen=True, slots=True)
class Job:
    """One job of a trace: a gang of `gpus` GPUs of one instance type for `duration` seconds of work."""

    id: JobId
    submit: int
    """Seconds since the start of the trace."""
    team: TeamName
    instance_type: InstanceTypeName
    gpus: int
    duration: int
    """Seconds of work the job needs when it is never interrupted."""
    priority: str
    """A priority class name; unknown names get the lowest weight of the cluster."""
    cluster: str | None = None
    """The cluster the job was submitted to; None routes it by instance type."""
    pods: int = 1
    """On a partition resource (`gpus` then counts slices): the job's pods, each asking for
    `gpus // pods` slices on one instance. Ignored for whole GPUs (no nodes there)."""


def partition_resource(instance_type: str, profile: str) -> InstanceTypeName:
    """The simulator's resource for `instance_type` split into MIG `profile`: `ml.p5.48xlarge:mig-3g.40gb`."""
    return InstanceTypeName(f"{instance_type}:{profile}")


@dataclass(frozen=True, slots=True)
class SimulationSettings:
    """Knobs of one run that are not part of the governance config."""

    progress: ProgressPolicy = "checkpoint"
    """What a preempted job keeps: `restart` loses all work, `checkpoint` keeps the last checkpoint."""
    checkpoint_interval: int = 1800
    """Seconds between checkpoints under the `checkpoint` policy."""
    sample_interval: int | None = None
    """Seconds between utilisation samples; None: the horizon split into about 500 samples."""
    check_invariants: bool = False
    """Verify the simulator's own invariants after every instant (for tests; slow)."""
    max_rounds_per_instant: int = 100_000
    """Safety net against a scheduling loop at one instant; exceeding it is a simulator bug."""
    extra: dict[str, str] = field(default_factory=dict)
    """Free-form labels copied into the result (e.g. which config ref this run used)."""
    record_attempts: bool = False
    """Keep every admission attempt (job, start, end, preempted) in the result: what the run would
    have left in Kueue's Workloads (memory grows with the attempts, so off by default)."""
