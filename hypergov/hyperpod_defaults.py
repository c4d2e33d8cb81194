"""HyperPod task governance's documented defaults, in one place.

A field left out of the config tree means what it means to HyperPod: the model's defaults, the
requests the components write, the capacity rules and the capacity simulator all read these
constants, so hypergov never plans one thing and HyperPod does another. (The components also
write every one of these fields explicitly in every request.)

This module imports nothing, so the capacity simulator's core, which must not read the config
models, can use it as well.
"""

from __future__ import annotations

from typing import Final, Literal

API_REFERENCE = "https://docs.aws.amazon.com/sagemaker/latest/APIReference"

DEFAULT_SHARING_STRATEGY: Final[Literal["LendAndBorrow"]] = "LendAndBorrow"
"""ResourceSharingConfig.Strategy: "Default is LendandBorrow." (API_ResourceSharingConfig.html)"""

DEFAULT_BORROW_LIMIT_PERCENT: Final = 50
"""ResourceSharingConfig.BorrowLimit: "Default is 50." (API_ResourceSharingConfig.html)"""

DEFAULT_FAIR_SHARE_WEIGHT: Final = 0
"""ComputeQuotaTarget.FairShareWeight: "Weight 0 is the default." (API_ComputeQuotaTarget.html)"""

DEFAULT_PREEMPT_OWN_LOWER_PRIORITY: Final = True
"""ComputeQuotaConfig.PreemptTeamTasks: "Default is LowerPriority." (API_ComputeQuotaConfig.html)"""

DEFAULT_FAIR_SHARE: Final = True
"""SchedulerConfig.FairShare: "Default is Enabled." (API_SchedulerConfig.html)"""

DEFAULT_IDLE_RESOURCE_SHARING: Final = True
"""SchedulerConfig.IdleResourceSharing: AWS documents no default, so the scheduler config
request always carries it (hypergov's default: enabled)."""
