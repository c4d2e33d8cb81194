"""Usage accounting: every accelerator-hour and vCPU-hour of a shared cluster traced to its team
(issue 30). Kueue Workloads become admission spans (`workloads`), spans become per-interval
figures (`accounting`, computed by `sweep`): used, own, borrowed, lent, idle guarantee, lost to
preemption. `adapter` is the only module that reads the governance tree. The rules are listed in
SEMANTICS.md. What ran is captured by `collect` (`hypergov usage collect`: Kueue Workloads listed
then watched per cluster, resumably, into `collector_store`, with the `coverage` of each cluster).
A period's hours are priced per team by `chargeback`, at the unit prices of `prices`.
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
from usage.chargeback import Chargeback, ChargebackError, Money, PoolCharge, TeamCharge, TeamPoolCharge, chargeback
from usage.prices import NoPrice, PoolPrices, UnitPrice
from usage.resources import UNITS, ResourceKind
from usage.spans import Span
from usage.workloads import NotATeamWorkload, WorkloadError, WorkloadUsage, parse_workload

__all__ = ["INTERVAL_SECONDS", "UNITS", "AccountingError", "Chargeback", "ChargebackError", "ClassRow", "Money",
           "NoPrice", "NotATeamWorkload", "Pool", "PoolAccount", "PoolCharge", "PoolPrices", "ResourceKind", "Span",
           "TeamCharge", "TeamPoolCharge", "TeamRow", "UnitPrice", "WorkloadError", "WorkloadUsage", "account",
           "chargeback", "parse_workload"]
