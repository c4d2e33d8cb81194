"""Usage accounting: every accelerator-hour and vCPU-hour of a shared cluster traced to its team
(issue 30). Kueue Workloads become admission spans (`workloads`), spans become per-interval
figures (`accounting`, computed by `sweep`): used, own, borrowed, lent, idle guarantee, lost to
preemption. `adapter` is the only module that reads the governance tree. The rules are listed in
SEMANTICS.md. What ran is captured by `collect` (`hypergov usage collect`: Kueue Workloads listed
then watched per cluster, resumably, into `collector_store`, with the `coverage` of each cluster).
"""

from usage.accounting import (
    INTERVAL_SECONDS,
    AccountingError,
    ClassRow,
    Pool,
    PoolAccount,
    TeamRow,
    account,
)
from usage.resources import UNITS, ResourceKind
from usage.spans import Span
from usage.workloads import NotATeamWorkload, WorkloadError, WorkloadUsage, parse_workload

__all__ = ["INTERVAL_SECONDS", "UNITS", "AccountingError", "ClassRow", "NotATeamWorkload", "Pool", "PoolAccount",
           "ResourceKind", "Span", "TeamRow", "WorkloadError", "WorkloadUsage", "account", "parse_workload"]
