"""Quota accounting for one cluster: who uses how many GPUs of which instance type, and the three
limits every admission must respect (the team's quota plus borrow limit, the lendable pool, the
hardware). Teams and instance types are integers here so the event loop stays fast; queue
index `q = team * types + type`.

Pool model (Kueue's lendingLimit semantics, see SEMANTICS.md): a DontLend team's guarantee is
reserved for it; everything else (lending teams' guarantees and, with idle resource sharing,
capacity nobody is guaranteed) forms one pool per instance type that lending teams draw from.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort

from capacity.spec import ClusterCapacity, InstanceTypeName, TeamName


class Ledger:
    """Usage and limits per (team, instance type), the pools, and each team's dominant share."""

    def __init__(self, capacity: ClusterCapacity) -> None:
        self.team_names: list[TeamName] = sorted(t.name for t in capacity.teams)
        self.type_names: list[InstanceTypeName] = sorted(capacity.capacity_gpus)
        self.team_index = {name: i for i, name in enumerate(self.team_names)}
        self.type_index = {name: r for r, name in enumerate(self.type_names)}
        teams = [capacity.team(name) for name in self.team_names]
        n_types = len(self.type_names)
        self.types = n_types
        self.nominal: list[int] = []
        self.limit: list[int] = []
        for quota in teams:
            assert quota is not None
            for itype in self.type_names:
                nominal = quota.guaranteed_gpus.get(itype, 0)
                self.nominal.append(nominal)
                self.limit.append(nominal + quota.borrow_limit_gpus(itype))
        self.lends = [t is not None and t.sharing != "DontLend" for t in teams]
        self.borrows = [t is not None and t.sharing == "LendAndBorrow" for t in teams]
        self.weight = [t.fair_share_weight if t is not None else 1 for t in teams]
        self.preempt_own = [t is not None and t.preempt_own_lower_priority for t in teams]
        self.phys_cap = [capacity.capacity_gpus[it] for it in self.type_names]
        self.pool_cap = [self._pool_capacity(r, capacity.idle_resource_sharing) for r in range(n_types)]
        self.usage = [0] * (len(teams) * n_types)
        self.team_usage = [0] * len(teams)
        self.phys_used = [0] * n_types
        self.pool_used = [0] * n_types
        self.largest_gang = list(self.phys_cap)
        """An upper bound of any job's GPUs per instance type (the engine lowers it to the trace's
        largest job): bounds what one eviction can free."""
        self.borrowers: list[dict[int, None]] = [{} for _ in range(n_types)]
        """Queues above their guarantee, per instance type (insertion-ordered; callers sort)."""
        self.by_share: list[list[tuple[float, int, int]]] = [[] for _ in range(n_types)]
        """The same queues as `(-type share, team, queue)`, ascending: the highest share first, ties
        to the lower team index. Kept sorted on every change, so the top borrowers cost no scan."""

    def _pool_capacity(self, r: int, idle_sharing: bool) -> int:
        reserved = lent = 0
        for i, lends in enumerate(self.lends):
            if lends:
                lent += self.nominal[i * self.types + r]
            else:
                reserved += self.nominal[i * self.types + r]
        unallocated = max(0, self.phys_cap[r] - reserved - lent)
        pool = lent + (unallocated if idle_sharing else 0)
        return max(0, min(pool, self.phys_cap[r] - reserved))

    def headroom(self, q: int) -> int:
        """The largest gang that fits in queue `q` now, without preempting anything."""
        r = q % self.types
        room = min(self.limit[q] - self.usage[q], self.phys_cap[r] - self.phys_used[r])
        if self.lends[q // self.types]:
            room = min(room, self.pool_cap[r] - self.pool_used[r])
        return room

    def add(self, q: int, gpus: int) -> None:
        """Account `gpus` (negative to release) to queue `q`."""
        i = q // self.types
        r = q - i * self.types
        usage = self.usage
        before = usage[q]
        after = before + gpus
        usage[q] = after
        self.team_usage[i] += gpus
        self.phys_used[r] += gpus
        if self.lends[i]:
            self.pool_used[r] += gpus
        nominal = self.nominal[q]
        if before <= nominal and after <= nominal:
            return
        if after > nominal >= before:
            self.borrowers[r][q] = None
        elif before > nominal >= after:
            del self.borrowers[r][q]
        ranked = self.by_share[r]
        if before > nominal:
            del ranked[bisect_left(ranked, (-self.type_share(q, before), i, q))]
        if after > nominal:
            insort(ranked, (-self.type_share(q, after), i, q))

    def share(self, team: int, *, r: int = -1, usage_r: int = 0) -> float:
        """Weighted dominant resource share of `team` (Kueue's DRS): per instance type, the GPUs it
        uses above its guarantee over the lendable pool; the largest, divided by the weight.
        With `r` >= 0 the usage of type `r` is taken as `usage_r` (a what-if)."""
        best = 0.0
        base = team * self.types
        for t in range(self.types):
            used = usage_r if t == r else self.usage[base + t]
            above = used - self.nominal[base + t]
            if above > 0 and self.pool_cap[t] > 0:
                best = max(best, above / self.pool_cap[t])
        if best == 0.0:
            return 0.0
        weight = self.weight[team]
        return best / weight if weight > 0 else math.inf

    def share_if(self, q: int, usage: int) -> float:
        """The team's dominant share if queue `q` used `usage` GPUs (`share` with one type's usage
        replaced, without its keyword arguments: admission ordering asks this for every candidate)."""
        types = self.types
        team = q // types
        if types == 1:
            return self.type_share(q, usage)
        return self.share(team, r=q - team * types, usage_r=usage)

    def type_share(self, q: int, usage: int) -> float:
        """The share of one instance type alone (what preemption for fair sharing compares: only
        borrowing of the contested type can be given back by evicting jobs of that type)."""
        r = q % self.types
        above = usage - self.nominal[q]
        if above <= 0 or self.pool_cap[r] <= 0:
            return 0.0
        weight = self.weight[q // self.types]
        return above / self.pool_cap[r] / weight if weight > 0 else math.inf

    def is_borrowing(self, q: int) -> bool:
        return self.usage[q] > self.nominal[q]
