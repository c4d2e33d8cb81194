"""The project layer (`config/projects/<team>.yaml`): one team, its members by persona, its cost
attribution, and per cluster its guaranteed quota and lending policy. The team's name is the file
name; it becomes the HyperPod team name and the namespace `hyperpod-ns-<team>`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hypergov.hyperpod_defaults import (
    DEFAULT_BORROW_LIMIT_PERCENT,
    DEFAULT_FAIR_SHARE_WEIGHT,
    DEFAULT_PREEMPT_OWN_LOWER_PRIORITY,
    DEFAULT_SHARING_STRATEGY,
)
from hypergov.model.aws_limits import (
    BORROW_LIMIT,
    FAIR_SHARE_WEIGHT,
    QUOTA_COUNT,
    QUOTA_INSTANCE_TYPES,
    limit_items,
    limit_range,
)
from hypergov.model.common import (
    ActionPattern,
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


class Members(StrictModel):
    """Principals per persona. Roles are bound to personas, never to single users."""

    ProjectLead: list[Principal] = Field(default_factory=list)
    Engineer: list[Principal] = Field(default_factory=list)
    Viewer: list[Principal] = Field(default_factory=list)

    def of(self, persona: Persona) -> list[str]:
        principals: list[str] = getattr(self, persona)
        return principals


class ClusterQuota(StrictModel):
    """The team's compute quota on one cluster (one HyperPod ComputeQuota)."""

    instances: Annotated[dict[InstanceType, QuotaCount], limit_items(QUOTA_INSTANCE_TYPES)] = Field(
        description="guaranteed instances per instance type (1-15 types)")
    sharing: SharingStrategy = Field(default=DEFAULT_SHARING_STRATEGY, description=(
        "Lend: lends idle quota, never borrows; DontLend: neither; LendAndBorrow: both; "
        f"default {DEFAULT_SHARING_STRATEGY}, HyperPod's default"))
    borrow_limit_percent: BorrowLimit | None = None

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
