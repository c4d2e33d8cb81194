"""The project layer (`config/projects/<team>.yaml`): one team, its members by persona, its cost
attribution, and per cluster its guaranteed quota and lending policy. The team's name is the file
name; it becomes the HyperPod team name and the namespace `hyperpod-ns-<team>`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from hypergov.model.aws_limits import aws_range
from hypergov.model.common import (
    ActionPattern,
    InstanceType,
    Persona,
    Principal,
    PriorityClassName,
    StrictModel,
    Tags,
)

FairShareWeight = Annotated[int, aws_range("sagemaker", "FairShareWeight"),
                            Field(description="fair-share weight, 0-100")]
BorrowLimit = Annotated[int, aws_range("sagemaker", "BorrowLimit"),
                        Field(description="how much idle capacity the team may borrow, in percent of its quota")]
QuotaCount = Annotated[int, aws_range("sagemaker", "InstanceCount"), Field(description="guaranteed instances")]
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

    instances: dict[InstanceType, QuotaCount] = Field(min_length=1)
    sharing: SharingStrategy = "Lend"
    borrow_limit_percent: BorrowLimit | None = None


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
    fair_share_weight: FairShareWeight = 1
    preempt_own_lower_priority: bool = True
    allowed_priority_classes: list[PriorityClassName] = Field(min_length=1)
    extra_permissions: ExtraPermissions = ExtraPermissions()
