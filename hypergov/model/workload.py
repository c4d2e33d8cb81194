"""The workload layer (`config/workloads/<team>/<class>.yaml`): the kinds of jobs a team's
engineers may submit. The directory names the owning project, the file name the class."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hypergov.model.common import Duration, InstanceType, LabelKey, PriorityClassName, StrictModel


class WorkloadClass(StrictModel):
    description: Annotated[str, Field(max_length=1024)] = ""
    priority_class: PriorityClassName
    max_gpus_per_job: Annotated[int, Field(ge=1, le=100_000)]
    max_run_time: Duration
    required_labels: list[LabelKey] = Field(default_factory=list)
    instance_types: list[InstanceType] = Field(default_factory=list,
                                               description="empty: any type the team has quota for")
