"""The project layer (`config/projects/<team>.yaml`): one team, its members by persona, its cost
attribution, and per cluster its guaranteed quota and lending policy. The team's name is the file
name; it becomes the HyperPod team name and the namespace `hyperpod-ns-<team>`."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import MaxLen
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from hypergov.hyperpod_defaults import (
    DEFAULT_BORROW_LIMIT_PERCENT,
    DEFAULT_FAIR_SHARE_WEIGHT,
    DEFAULT_PREEMPT_OWN_LOWER_PRIORITY,
    DEFAULT_SHARING_STRATEGY,
)
from hypergov.model.aws_limits import (
    ABSOLUTE_BORROW_LIMITS,
    BORROW_LIMIT,
    FAIR_SHARE_WEIGHT,
    QUOTA_ACCELERATORS,
    QUOTA_COUNT,
    QUOTA_INSTANCE_TYPES,
    QUOTA_MEMORY_GIB,
    QUOTA_PARTITION_COUNT,
    QUOTA_VCPU,
    AwsEnum,
    limit_items,
    limit_max,
    limit_range,
)
from hypergov.model.common import (
    ActionPattern,
    GitHostOwner,
    InstanceType,
    Persona,
    Principal,
    PriorityClassName,
    StrictModel,
    Tags,
)

FairShareWeight = Annotated[int, limit_range(FAIR_SHARE_WEIGHT), Field(description=(
    "fair-share weight, 0 (lowest) to 100 (highest); default "
    f"{DEFAULT_FAIR_SHARE_WEIGHT}, HyperPod's default"))]
BorrowLimit = Annotated[int, limit_range(BORROW_LIMIT), Field(description=(
    "how much idle capacity the team may borrow, in percent of its quota, 1-500 (AWS's documented range); "
    f"only with sharing LendAndBorrow; default {DEFAULT_BORROW_LIMIT_PERCENT}, HyperPod's default"))]
QuotaCount = Annotated[int, limit_range(QUOTA_COUNT), Field(description="guaranteed instances")]
SharingStrategy = Literal["Lend", "DontLend", "LendAndBorrow"]
MigProfile = Annotated[str, AwsEnum("sagemaker", "MIGProfileType"), Field(description=(
    "a MIG profile as SageMaker spells it, e.g. mig-1g.10gb; the profiles an instance type offers "
    "depend on its GPU (hypergov.model.partitions)"))]


class Members(StrictModel):
    """Principals per persona. Roles are bound to personas, never to single users."""

    ProjectLead: list[Principal] = Field(default_factory=list)
    Engineer: list[Principal] = Field(default_factory=list)
    Viewer: list[Principal] = Field(default_factory=list)

    def of(self, persona: Persona) -> list[str]:
        principals: list[str] = getattr(self, persona)
        return principals


class GitHostMembers(StrictModel):
    """The project's people on the Git host, per persona: the code owners `hypergov codeowners`
    writes where change_control names 'project-leads' (ProjectLead) or 'project-members' (every
    persona). Absent: not given (a rule that needs it is refused); `[]`: this persona's people have
    no Git-host account, so they cannot approve there."""

    ProjectLead: list[GitHostOwner] | None = None
    Engineer: list[GitHostOwner] | None = None
    Viewer: list[GitHostOwner] | None = None

    def of(self, persona: Persona) -> list[str] | None:
        handles: list[str] | None = getattr(self, persona)
        return handles


class AcceleratorPartition(StrictModel):
    """A number of MIG partitions of one profile (SageMaker's `AcceleratorPartitionConfig`)."""

    profile: MigProfile
    count: Annotated[int, limit_range(QUOTA_PARTITION_COUNT), Field(description="number of partitions")]


class QuotaAmount(StrictModel):
    """An amount of one instance type's compute, in the unit the team chooses (SageMaker's
    `ComputeQuotaResourceConfig`): whole instances; or accelerators, vCPUs and/or memory (given one,
    SageMaker derives the others by ratio: "if you allocate 16 out of 32 total accelerators,
    SageMaker AI uses the ratio of 0.5 and allocates values to vCPU and MemoryInGiB"); or MIG
    partitions of one profile (vCPU and memory then derived from the partitions, unless given)."""

    instances: Annotated[int, limit_range(QUOTA_COUNT)] | None = Field(default=None, description=(
        "whole instances (SageMaker: Count); alone"))
    accelerators: Annotated[int, limit_range(QUOTA_ACCELERATORS)] | None = Field(default=None, description=(
        "GPUs / Neuron devices (SageMaker: Accelerators); vCPU and memory derived by ratio unless given"))
    vcpu: Annotated[float, limit_range(QUOTA_VCPU)] | None = Field(default=None, description=(
        "vCPUs (SageMaker: VCpu); given alone, memory is derived by ratio and accelerators are 0"))
    memory_gib: Annotated[float, limit_range(QUOTA_MEMORY_GIB)] | None = Field(default=None, description=(
        "memory in GiB (SageMaker: MemoryInGiB); given alone, vCPU is derived by ratio and accelerators are 0"))
    partition: AcceleratorPartition | None = Field(default=None, description=(
        "MIG partitions of one profile (SageMaker: AcceleratorPartition); only on instance types whose GPUs "
        "support MIG"))

    @model_validator(mode="after")
    def _one_unit(self) -> QuotaAmount:
        given = [name for name in ("instances", "accelerators", "vcpu", "memory_gib", "partition")
                 if getattr(self, name) is not None]
        if not given:
            raise ValueError("give an amount: instances, accelerators, vcpu, memory_gib or partition")
        if self.instances is not None and len(given) > 1:
            raise ValueError(f"instances counts whole instances and stands alone; also given: "
                             f"{', '.join(given[1:])}")
        if self.accelerators is not None and self.partition is not None:
            raise ValueError("give whole accelerators or MIG partitions of this instance type, not both")
        return self

    @property
    def unit(self) -> Literal["instances", "accelerators", "partition", "vcpu", "memory_gib"]:
        """The unit the amount is given in (the capacity rules measure it in that unit)."""
        if self.instances is not None:
            return "instances"
        if self.accelerators is not None:
            return "accelerators"
        if self.partition is not None:
            return "partition"
        return "vcpu" if self.vcpu is not None else "memory_gib"


QuotaResources = Annotated[dict[InstanceType, QuotaAmount], MaxLen(limit_max(QUOTA_INSTANCE_TYPES))]
BorrowLimits = Annotated[dict[InstanceType, QuotaAmount], limit_items(ABSOLUTE_BORROW_LIMITS)]


class ClusterQuota(StrictModel):
    """The team's compute quota on one cluster (one HyperPod ComputeQuota)."""

    instances: Annotated[dict[InstanceType, QuotaCount], MaxLen(limit_max(QUOTA_INSTANCE_TYPES))] = Field(
        default_factory=dict, description="guaranteed whole instances per instance type")
    resources: QuotaResources = Field(default_factory=dict, description=(
        "guaranteed compute per instance type in finer units (accelerators, vcpu, memory_gib, MIG partition); "
        "an instance type is in instances or in resources, and both together hold 1-15 types"))
    sharing: SharingStrategy = Field(default=DEFAULT_SHARING_STRATEGY, description=(
        "Lend: lends idle quota, never borrows; DontLend: neither; LendAndBorrow: both; "
        f"default {DEFAULT_SHARING_STRATEGY}, HyperPod's default"))
    borrow_limit_percent: BorrowLimit | None = None
    absolute_borrow_limits: BorrowLimits = Field(default_factory=dict, description=(
        "per instance type, the most the team may borrow, in any unit (SageMaker: AbsoluteBorrowLimits, "
        "0-15 types), regardless of borrow_limit_percent; a type the team has no guarantee of may be borrowed "
        "up to it; only with sharing LendAndBorrow"))

    @model_validator(mode="after")
    def _types_once(self) -> ClusterQuota:
        both = sorted(set(self.instances) & set(self.resources))
        if both:
            raise ValueError(f"{', '.join(both)}: an instance type is given in instances or in resources, not both")
        total = len(self.instances) + len(self.resources)
        most = limit_max(QUOTA_INSTANCE_TYPES)
        if total == 0:
            raise PydanticCustomError("too_short", "a quota guarantees at least one instance type (instances or "
                                      "resources); leave the cluster out of quotas instead")
        if total > most:
            raise ValueError(f"{total} instance types; a compute quota holds at most {most} (ComputeQuotaResources)")
        return self

    def guarantees(self) -> dict[str, QuotaAmount]:
        """Every guaranteed instance type with its amount (whole instances as `instances`), sorted."""
        found = {t: QuotaAmount(instances=c) for t, c in self.instances.items()}
        return dict(sorted({**found, **self.resources}.items()))

    def instance_types(self) -> list[str]:
        """The instance types the quota guarantees (sorted)."""
        return sorted({*self.instances, *self.resources})

    def effective_borrow_limit_percent(self) -> int:
        """The borrow limit HyperPod applies: the one written, else its documented default."""
        if self.borrow_limit_percent is None:
            return DEFAULT_BORROW_LIMIT_PERCENT
        return self.borrow_limit_percent


class Budget(StrictModel):
    monthly_usd: Annotated[int, Field(ge=0, le=1_000_000_000)]
    alert_at_percent: list[Annotated[int, Field(ge=1, le=1000)]] = Field(default_factory=lambda: [80, 100])


class ExtraPermissions(StrictModel):
    """Actions a project adds to a persona's org-wide policy; must stay inside the boundary."""

    ProjectLead: list[ActionPattern] = Field(default_factory=list)
    Engineer: list[ActionPattern] = Field(default_factory=list)
    Viewer: list[ActionPattern] = Field(default_factory=list)

    def of(self, persona: Persona) -> list[str]:
        actions: list[str] = getattr(self, persona)
        return actions


class Project(StrictModel):
    description: Annotated[str, Field(max_length=1024)] = ""
    members: Members
    members_on_git_host: GitHostMembers = Field(default=GitHostMembers(), description=(
        "the members' handles on the Git host per persona ('@org/team', '@user', '@group/subgroup', e-mail), "
        "for `hypergov codeowners`; read by nothing else"))
    cost_centre: str | None = None
    budget: Budget | None = None
    tags: Tags = Field(default_factory=dict)
    quotas: dict[str, ClusterQuota] = Field(default_factory=dict, description="per cluster name")
    fair_share_weight: FairShareWeight = DEFAULT_FAIR_SHARE_WEIGHT
    preempt_own_lower_priority: bool = Field(default=DEFAULT_PREEMPT_OWN_LOWER_PRIORITY, description=(
        "true: the team's higher-priority tasks may preempt its own lower-priority ones (HyperPod "
        "PreemptTeamTasks LowerPriority), false: Never; default true, HyperPod's default"))
    allowed_priority_classes: list[PriorityClassName] = Field(min_length=1)
    extra_permissions: ExtraPermissions = ExtraPermissions()
