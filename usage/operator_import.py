"""The usage-report operator's raw records (`usage.operator_layout`) as hypergov's own data, per
cluster: the closed attempts of each operator workload (a `RetiredWorkload` whose `rules` is
`IMPORTED_RULES`, under a uid made from the record's identity) and the ranges the operator's
heartbeats vouch for; what the records cannot say in hypergov's terms is an `Entry` of the import
report, with the record's location and why. Pure: records in, records out; SEMANTICS.md I1-I8
give the rules and their reasons.

The operator's layout and columns, and what it documents about them, are in
`usage.operator_layout`'s docstring (its sources: awslabs/sagemaker-hyperpod-usage-report
`cloudformation/usage-report.yaml`, `report_generation/`, README.md; AWS's "Usage reporting for
cost attribution in SageMaker HyperPod"). Where a row's meaning is not documented, the reading
follows the operator's own daily aggregation (the `CRESCENDO_DETAILED` query of that template's
Lambda), and says where it departs from it.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from hypergov import naming
from hypergov.kube_resources import NEURON_CORE, NVIDIA_GPU
from usage.collector_state import IMPORTED_RULES, ClosedAttempt, RetiredWorkload
from usage.coverage import Coverage, CoveredRange
from usage.operator_layout import Heartbeat, WorkloadRecord
from usage.resources import CPU, QuantityError, ResourceKind, units_of
from usage.spans import iso

HOUR: Final = 3600
UID_PREFIX: Final = "op-"
ENDED_BY_PREEMPTION: Final = frozenset({"Evicted-True", "Preempted-True"})
"""Statuses ending an attempt as preempted: what the operator's report calls "Preempted" (a row
`QuotaReserved-True` followed by `Evicted-True`), and Kueue's own `Preempted` condition."""

Known = Mapping[tuple[str, str], Sequence[tuple[int, int]]]
"""(namespace, Workload name) -> the attempts the collector kept, [start, end) in epoch seconds."""
Pools = Collection[tuple[str, ResourceKind]]
"""The (instance type, kind) pools the tree gives the cluster."""


@dataclass(frozen=True)
class Entry:
    """A line of the import report: where, whose, why. `error`: the record cannot be read, and
    the import writes nothing; else the record (or part) is left out, and everything else imported."""

    at: str
    reason: str
    error: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"at": self.at, "reason": self.reason, "error": self.error}


@dataclass(frozen=True)
class ImportedCluster:
    cluster: str  # hypergov's name
    operator_cluster: str  # the operator's clusterName
    workloads: tuple[RetiredWorkload, ...]
    coverage: Coverage
    entries: tuple[Entry, ...]

    @property
    def attempts(self) -> int:
        return sum(len(w.attempts) for w in self.workloads)


@dataclass(frozen=True)
class _Held:
    """An attempt being read: from `start`, `units` per (instance type, kind), at `priority_class`."""

    start: int
    units: tuple[tuple[str, ResourceKind, int], ...]
    priority_class: str | None


def uid_of(operator_cluster: str, namespace: str, name: str, instance_type: str | None) -> str:
    """The imported workload's uid: the same record identity (the operator's cluster, the
    workload's namespace and name, the instance type its rows are of) always gives the same uid."""
    identity = "\0".join((operator_cluster, namespace, name, instance_type or ""))
    return UID_PREFIX + hashlib.sha256(identity.encode()).hexdigest()[:32]


def import_cluster(records: Iterable[WorkloadRecord], heartbeats: Iterable[Heartbeat], *, cluster: str,
                   operator_cluster: str, pools: Pools | None = None, before: int | None = None,
                   known: Known | None = None) -> ImportedCluster:
    """`operator_cluster`'s records as `cluster`'s. `pools`: the pools the tree gives it (None: not
    checked); `before`: the start of the collector's first own range (nothing is imported from
    it on, I7); `known`: the attempts the collector kept, by workload (I7)."""
    coverage = _coverage(sorted({h.hour for h in heartbeats if h.cluster == operator_cluster}), before)
    groups: dict[tuple[str, str, str | None], list[WorkloadRecord]] = defaultdict(list)
    for record in records:
        if record.cluster == operator_cluster:
            groups[(record.namespace, record.workload_name, record.instance_type)].append(record)
    workloads: list[RetiredWorkload] = []
    entries: list[Entry] = []
    for (namespace, name, itype), rows in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1], g[0][2] or "")):
        team = naming.team_of_namespace(namespace)
        if team is None:
            entries.append(Entry(str(rows[0].at), f"namespace {namespace} is no team's (hyperpod-ns-<team>): "
                                                  f"workload {name}'s {len(rows)} row(s) not imported"))
            continue
        attempts = _attempts(team, _latest(rows, entries), coverage, pools, entries)
        attempts = _kept(attempts, namespace, name, before, (known or {}).get((namespace, name), ()), rows, entries)
        if attempts:
            workloads.append(RetiredWorkload(uid_of(operator_cluster, namespace, name, itype), tuple(attempts),
                                             None, IMPORTED_RULES))
    return ImportedCluster(cluster, operator_cluster, tuple(sorted(workloads, key=lambda w: w.uid)), coverage,
                           tuple(entries))


def _coverage(hours: Sequence[int], before: int | None) -> Coverage:
    """Consecutive heartbeat hours as one range each run (I6), cut at `before` (I7)."""
    ranges: list[list[int]] = []
    for hour in hours:
        if ranges and ranges[-1][1] == hour:
            ranges[-1][1] = hour + HOUR
        else:
            ranges.append([hour, hour + HOUR])
    if before is not None:
        ranges = [[start, min(end, before)] for start, end in ranges if start < before]
    return tuple(CoveredRange(_utc(start), _utc(end), "import") for start, end in ranges)


def _latest(rows: Sequence[WorkloadRecord], entries: list[Entry]) -> list[WorkloadRecord]:
    """One row per timestamp, in time order: the one of the latest resourceVersion, as the operator's
    own queries keep it (I4). Two rows of one version saying different things: an error."""
    chosen: dict[int, WorkloadRecord] = {}
    for row in sorted(rows, key=lambda r: (r.timestamp, r.resource_version, str(r.at))):
        kept = chosen.get(row.timestamp)
        if kept is not None and kept.resource_version == row.resource_version and _says(kept) != _says(row):
            entries.append(Entry(str(row.at), f"resourceVersion {row.resource_version} of workload "
                                              f"{row.namespace}/{row.workload_name} at {iso(row.timestamp)} "
                                              f"also says otherwise at {kept.at}", error=True))
        chosen[row.timestamp] = row
    return [chosen[t] for t in sorted(chosen)]


def _says(row: WorkloadRecord) -> tuple[object, ...]:
    return (row.status, row.priority_class, row.cpu, row.gpu, row.neuron_core, row.admitted, row.finished)


def _attempts(team: str, rows: Sequence[WorkloadRecord], coverage: Coverage, pools: Pools | None,
              entries: list[Entry]) -> list[ClosedAttempt]:
    """A row holds its units from its timestamp to the next row's (I4); consecutive holding rows
    alike are one attempt; the first row that does not hold ends it (I5). An eviction status on
    a later row of the attempt, or on the row ending it, marks it preempted (the operator's
    report: a `QuotaReserved-True` row whose next row is `Evicted-True`)."""
    attempts: list[ClosedAttempt] = []
    held: _Held | None = None
    evicted = False
    refused: set[tuple[str, ResourceKind]] = set()
    for row in rows:
        now = _holding(row, pools, refused, entries) if row.admitted and not row.finished else None
        if held is not None and now is not None and (now.units, now.priority_class) == (held.units,
                                                                                      held.priority_class):
            evicted = evicted or row.status in ENDED_BY_PREEMPTION
            continue  # the same attempt, written again
        if held is not None:
            attempts.append(_closed(team, held, row.timestamp, preempted=evicted or (
                now is None and row.status in ENDED_BY_PREEMPTION)))
        held, evicted = now, False
    if held is not None:
        last = rows[-1]
        end = next((_epoch(r.end) for r in coverage if _epoch(r.start) <= last.timestamp < _epoch(r.end)), None)
        if end is None:
            entries.append(Entry(str(last.at), f"workload {last.namespace}/{last.workload_name} holds quota at its "
                                               f"last row ({iso(last.timestamp)}), outside the hours the heartbeats "
                                               "cover: its end is unknown, its last attempt not imported"))
        else:
            attempts.append(_closed(team, held, end, preempted=evicted))
    return [a for a in attempts if a.units and a.end > a.start]


def _holding(row: WorkloadRecord, pools: Pools | None, refused: set[tuple[str, ResourceKind]],
             entries: list[Entry]) -> _Held:
    """What an admitted row holds, in hypergov's units, by the rules a Workload's quantities follow
    (U3, `usage.resources.units_of`: whole GPUs, millicores, a NeuronCore as its share of its
    device); what cannot be counted is reported once per workload and resource, and left out."""
    units: list[tuple[str, ResourceKind, int]] = []
    for resource, kind, amount in ((NVIDIA_GPU, ResourceKind.GPU, row.gpu), (CPU, ResourceKind.VCPU, row.cpu),
                                   (NEURON_CORE, ResourceKind.NEURONCORE, row.neuron_core)):
        if not amount:
            continue
        problem = None
        counted = None
        if row.instance_type is None:
            problem = f"{resource} {amount:g} on no instance type"
        else:
            try:
                counted = units_of(resource, repr(amount), row.instance_type)
            except QuantityError as error:
                problem = f"{error}" + (" (a MIG slice is not named in the operator's data)" if kind is ResourceKind.GPU
                                        else "")
        if counted is not None and pools is not None and (row.instance_type, counted[0]) not in pools:
            problem = f"the tree gives the cluster no {counted[0]} pool of {row.instance_type}"
        if problem is None and counted is not None and row.instance_type is not None:
            units.append((row.instance_type, counted[0], counted[1]))
        elif (row.instance_type or "", kind) not in refused:
            refused.add((row.instance_type or "", kind))
            entries.append(Entry(str(row.at), f"workload {row.namespace}/{row.workload_name}: {problem}; "
                                              "not imported"))
    priority = (naming.priority_class_of(row.priority_class) or row.priority_class) if row.priority_class else None
    return _Held(row.timestamp, tuple(sorted(units)), priority)


def _closed(team: str, held: _Held, end: int, *, preempted: bool) -> ClosedAttempt:
    return ClosedAttempt(team=team, priority_class=held.priority_class, start=held.start, end=end,
                         preempted=preempted, units=held.units)


def _kept(attempts: list[ClosedAttempt], namespace: str, name: str, before: int | None,
          known: Sequence[tuple[int, int]], rows: Sequence[WorkloadRecord],
          entries: list[Entry]) -> list[ClosedAttempt]:
    """The collector's own record wins (I7): attempts are cut at `before`, and one that overlaps an
    attempt the collector kept of the same workload is left out (reported)."""
    kept: list[ClosedAttempt] = []
    for attempt in attempts:
        if before is not None and attempt.start >= before:
            continue  # the collector's time: what ran then is its to say
        if before is not None and attempt.end > before:
            attempt = ClosedAttempt(attempt.team, attempt.priority_class, attempt.start, before, False, attempt.units)
        overlap = next(((s, e) for s, e in known if s < attempt.end and attempt.start < e), None)
        if overlap is not None:
            entries.append(Entry(str(rows[0].at), f"workload {namespace}/{name}: the attempt from "
                                                  f"{iso(attempt.start)} overlaps the one the collector kept from "
                                                  f"{iso(overlap[0])}; the collector's is used"))
            continue
        kept.append(attempt)
    return kept


def merged_coverage(existing: Coverage, imported: Coverage) -> Coverage:
    """The checkpoint's coverage with `imported` added (I7): the earlier imported ranges and the new
    ones joined, all cut at the start of the collector's first own range; the collector's own
    ranges kept as they are, after them."""
    own = tuple(r for r in existing if r.began != "import")
    before = min((r.start for r in own), default=None)
    joined: list[list[datetime]] = []
    for r in sorted((r for r in (*existing, *imported) if r.began == "import"), key=lambda r: r.start):
        start, end = r.start, min(r.end, before) if before is not None else r.end
        if end <= start:
            continue
        if joined and start <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], end)
        else:
            joined.append([start, end])
    return (*(CoveredRange(start, end, "import") for start, end in joined), *own)


def first_own_start(coverage: Coverage) -> int | None:
    """The start of the collector's first own range (epoch seconds): imports stop there (I7)."""
    return min((_epoch(r.start) for r in coverage if r.began != "import"), default=None)


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())
