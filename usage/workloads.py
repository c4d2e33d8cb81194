"""Kueue `Workload` objects (kueue.x-k8s.io v1beta1 and v1beta2) as typed usage: whose team, which
priority class, and the admission attempt the object shows (instance type and units per kind,
start and end from its conditions). SEMANTICS.md U1-U6 say what is read and why.

A Workload's status describes its *latest* admission only (conditions keep one entry per type,
`status.admission` the current quota reservation), so one object yields at most one attempt; the
collector that watches Workloads over time joins the attempts of one workload into spans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from hypergov import naming
from usage.resources import QuantityError, ResourceKind, parse_quantity, units_of
from usage.spans import Span, epoch_seconds

API_GROUP = "kueue.x-k8s.io"
VERSIONS = ("v1beta1", "v1beta2")
READING_RULES = 1
"""The version of how a Workload is read (SEMANTICS.md U1-U7): a retired workload's attempt,
read once when it is retired, is read again from its body when this changes."""
PREEMPTED = "Preempted"
"""The reason of an `Evicted` condition (and the type of a condition) Kueue sets on preemption."""
_DEFAULT_POD_SET = "main"


class WorkloadError(ValueError):
    """A Workload object the accounting cannot read: `ref` is namespace/name, `problem` what is wrong."""

    def __init__(self, ref: str, problem: str) -> None:
        super().__init__(f"Workload {ref}: {problem}")
        self.ref = ref
        self.problem = problem


class NotATeamWorkload(WorkloadError):
    """A valid Workload outside every team's namespace and ClusterQueue (not hypergov's to account)."""


@dataclass(frozen=True)
class Ending:
    """How an admission ended: the condition's time and reason; `preempted` when evicted by preemption."""

    time: int
    reason: str
    preempted: bool


@dataclass(frozen=True)
class AdmissionAttempt:
    """One quota reservation: from `start` to `ending.time` (None: still holding quota), holding
    `units` per (instance type, kind)."""

    start: int
    ending: Ending | None
    units: Mapping[tuple[str, ResourceKind], int]


@dataclass(frozen=True)
class WorkloadUsage:
    namespace: str
    name: str
    api_version: str
    team: str
    cluster: str
    priority_class: str | None  # the scheduler's class name when Kueue's is `<class>-priority`, else Kueue's
    attempt: AdmissionAttempt | None  # None: no quota reserved in this object
    last_ending: Ending | None  # the latest ending condition, with or without an admission
    requeue_count: int = 0
    evictions: Mapping[str, int] = field(default_factory=dict)  # reason -> count (schedulingStats)

    def spans(self, *, now: int) -> list[Span]:
        """The attempt as spans; an attempt still running is held until `now`."""
        attempt = self.attempt
        if attempt is None:
            return []
        end = attempt.ending.time if attempt.ending is not None else max(now, attempt.start)
        preempted = attempt.ending is not None and attempt.ending.preempted
        return [Span(self.team, self.cluster, itype, kind, self.priority_class, units, attempt.start, end, preempted)
                for (itype, kind), units in sorted(attempt.units.items()) if units > 0]


def parse_workload(obj: Mapping[str, Any], *, cluster: str) -> WorkloadUsage:
    """Read one Workload object (as the API returns it) seen on `cluster`."""
    metadata = obj.get("metadata")
    ref = _ref(metadata)
    version = _version(obj, ref)
    spec = _mapping(obj.get("spec"), ref, "spec")
    status = _mapping(obj.get("status", {}), ref, "status")
    admission = status.get("admission")
    cluster_queue = None
    if admission is not None:
        cluster_queue = _text(_mapping(admission, ref, "status.admission").get("clusterQueue"), ref,
                              "status.admission.clusterQueue")
    conditions = _conditions(status.get("conditions", []), ref)
    start = _start(conditions)
    attempt = None
    if admission is not None and start is not None:
        attempt = AdmissionAttempt(start=start, ending=_ending(conditions, since=start),
                                   units=_admitted_units(admission, spec, ref))
    namespace = ref.partition("/")[0]
    return WorkloadUsage(
        namespace=namespace, name=ref.partition("/")[2], api_version=f"{API_GROUP}/{version}",
        team=_team(namespace, cluster_queue, ref), cluster=cluster,
        priority_class=_priority_class(spec, version, ref), attempt=attempt,
        last_ending=_ending(conditions, since=None), requeue_count=_requeues(status, ref),
        evictions=_evictions(status, ref))


def _ref(metadata: object) -> str:
    if not isinstance(metadata, Mapping) or not metadata.get("name") or not metadata.get("namespace"):
        raise WorkloadError("<unnamed>", "metadata.name and metadata.namespace are required")
    return f"{metadata['namespace']}/{metadata['name']}"


def _version(obj: Mapping[str, Any], ref: str) -> str:
    group, _, version = str(obj.get("apiVersion", "")).partition("/")
    if group != API_GROUP or version not in VERSIONS or obj.get("kind") != "Workload":
        raise WorkloadError(ref, f"not a Kueue Workload ({obj.get('apiVersion')!r} {obj.get('kind')!r}); "
                                 f"expected {API_GROUP}/{' or '.join(VERSIONS)} Workload")
    return version


def _mapping(value: object, ref: str, path: str) -> Mapping[str, Any]:
    if type(value) is dict:  # what JSON gives: skips the slower abstract-class check
        return value
    if not isinstance(value, Mapping):
        raise WorkloadError(ref, f"{path} must be an object, not {type(value).__name__}")
    return value


def _text(value: object, ref: str, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise WorkloadError(ref, f"{path} must be a non-empty string, not {value!r}")
    return value


def _team(namespace: str, cluster_queue: str | None, ref: str) -> str:
    """The team by its namespace and, when admitted, its ClusterQueue; they must agree."""
    by_namespace = naming.team_of_namespace(namespace)
    by_queue = naming.team_of_cluster_queue(cluster_queue) if cluster_queue else None
    if by_namespace and by_queue and by_namespace != by_queue:
        raise WorkloadError(ref, f"namespace {namespace} is team {by_namespace}'s but ClusterQueue "
                                 f"{cluster_queue} is team {by_queue}'s")
    team = by_namespace or by_queue
    if team is None:
        raise NotATeamWorkload(ref, f"neither namespace {namespace} nor ClusterQueue {cluster_queue} is a team's "
                                    f"({naming.namespace('<team>')}, {naming.kueue_cluster_queue('<team>')})")
    return team


def _priority_class(spec: Mapping[str, Any], version: str, ref: str) -> str | None:
    if version == "v1beta1":
        name = spec.get("priorityClassName")
    else:
        name = _mapping(spec.get("priorityClassRef", {}), ref, "spec.priorityClassRef").get("name")
    if name is None:
        return None
    name = _text(name, ref, "spec priority class name")
    return naming.priority_class_of(name) or name


def _conditions(raw: object, ref: str) -> dict[str, tuple[bool, str, int]]:
    """The conditions by type: (status is True, reason, lastTransitionTime in epoch seconds)."""
    if not isinstance(raw, list):
        raise WorkloadError(ref, "status.conditions must be a list")
    found: dict[str, tuple[bool, str, int]] = {}
    for n, condition in enumerate(raw):
        where = f"status.conditions[{n}]"
        condition = _mapping(condition, ref, where)
        kind = _text(condition.get("type"), ref, f"{where}.type")
        status = condition.get("status")
        if status not in ("True", "False", "Unknown"):
            raise WorkloadError(ref, f"{where}.status must be True, False or Unknown, not {status!r}")
        found[kind] = (status == "True", str(condition.get("reason", "")),
                       _time(condition.get("lastTransitionTime"), ref, f"{where}.lastTransitionTime"))
    return found


def _time(value: object, ref: str, path: str) -> int:
    text = _text(value, ref, path)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise WorkloadError(ref, f"{path} '{text}' is not an RFC 3339 time") from error
    if moment.tzinfo is None:
        raise WorkloadError(ref, f"{path} '{text}' has no timezone")
    return epoch_seconds(moment)


def _start(conditions: Mapping[str, tuple[bool, str, int]]) -> int | None:
    """Quota is held from the reservation (QuotaReserved True); Admitted True when that is absent."""
    for kind in ("QuotaReserved", "Admitted"):
        held, _, time = conditions.get(kind, (False, "", 0))
        if held:
            return time
    return None


def _ending(conditions: Mapping[str, tuple[bool, str, int]], *, since: int | None) -> Ending | None:
    """The earliest end at or after `since` (None: the latest end of any attempt): Finished True,
    Evicted True, or QuotaReserved False (quota released). Evicted with reason Preempted, or a
    Preempted condition, marks the end as a preemption."""
    ends: list[Ending] = []
    preempted_at = None
    if conditions.get(PREEMPTED, (False, "", 0))[0]:
        preempted_at = conditions[PREEMPTED][2]
    for kind, ends_when in (("Finished", True), ("Evicted", True), ("QuotaReserved", False)):
        if kind not in conditions:
            continue
        status, reason, time = conditions[kind]
        if status == ends_when and (since is None or time >= since):
            by_preemption = (kind == "Evicted" and reason == PREEMPTED) or (
                preempted_at is not None and kind != "Finished" and preempted_at <= time)
            ends.append(Ending(time=time, reason=reason or kind, preempted=by_preemption))
    if not ends:
        return None
    # Kueue sets Evicted before it releases the quota (QuotaReserved False): one ending, whose time
    # is the first of them for an attempt, the last for "how did the latest attempt end".
    chosen = max(ends, key=lambda e: e.time) if since is None else min(ends, key=lambda e: e.time)
    return Ending(time=chosen.time, reason=next((e.reason for e in ends if e.preempted), chosen.reason),
                  preempted=any(e.preempted for e in ends))


def _admitted_units(admission: Mapping[str, Any], spec: Mapping[str, Any],
                    ref: str) -> dict[tuple[str, ResourceKind], int]:
    """Units per (instance type, kind) over the pod sets: each assignment's `resourceUsage` (the
    total of all its pods), else its pod template's requests times its `count`."""
    assignments = admission.get("podSetAssignments")
    if not isinstance(assignments, list):
        raise WorkloadError(ref, "status.admission.podSetAssignments must be a list")
    pod_sets = _pod_sets(spec, ref)
    total: dict[tuple[str, ResourceKind], int] = {}
    for n, assignment in enumerate(assignments):
        where = f"status.admission.podSetAssignments[{n}]"
        assignment = _mapping(assignment, ref, where)
        name = assignment.get("name", _DEFAULT_POD_SET)
        flavors = _mapping(assignment.get("flavors", {}), ref, f"{where}.flavors")
        usage = assignment.get("resourceUsage")
        if usage is None:
            usage = _template_usage(pod_sets, name, assignment.get("count"), ref, where)
        for resource, quantity in _mapping(usage, ref, f"{where}.resourceUsage").items():
            flavor = flavors.get(resource)
            itype = naming.instance_type_of_flavor(str(flavor)) if flavor else None
            try:
                counted = units_of(resource, quantity, itype)
            except QuantityError as error:
                raise WorkloadError(ref, f"{where}.resourceUsage: {error}") from error
            if counted is None or counted[1] == 0:
                continue
            if itype is None:
                raise WorkloadError(ref, f"{where}: resource {resource} has no flavor (instance type)")
            key = (itype, counted[0])
            total[key] = total.get(key, 0) + counted[1]
    return total


def _pod_sets(spec: Mapping[str, Any], ref: str) -> dict[str, Mapping[str, Any]]:
    pod_sets = spec.get("podSets")
    if not isinstance(pod_sets, list) or not pod_sets:
        raise WorkloadError(ref, "spec.podSets must be a non-empty list")
    return {str(_mapping(p, ref, "spec.podSets[]").get("name", _DEFAULT_POD_SET)): p for p in pod_sets}


def _template_usage(pod_sets: Mapping[str, Mapping[str, Any]], name: str, count: object, ref: str,
                    where: str) -> dict[str, str]:
    """The pod set's containers' requests (limits where a request is absent) times its pod count."""
    pod_set = pod_sets.get(name)
    if pod_set is None:
        raise WorkloadError(ref, f"{where} names pod set {name!r}, which spec.podSets does not have")
    pods = count if count is not None else pod_set.get("count", 1)
    if not isinstance(pods, int) or pods < 0:
        raise WorkloadError(ref, f"{where}: pod count {pods!r} is not a non-negative integer")
    template = _mapping(pod_set.get("template", {}), ref, f"spec.podSets[{name}].template")
    containers = _mapping(template.get("spec", {}), ref, f"spec.podSets[{name}].template.spec").get("containers", [])
    per_pod: dict[str, Decimal] = {}
    for container in containers:
        resources = _mapping(container, ref, "container").get("resources", {})
        asked = {**resources.get("limits", {}), **resources.get("requests", {})}
        for resource, quantity in asked.items():
            per_pod[resource] = per_pod.get(resource, Decimal(0)) + _decimal(resource, quantity, ref, where)
    return {resource: str(quantity * pods) for resource, quantity in per_pod.items()}


def _decimal(resource: str, quantity: object, ref: str, where: str) -> Decimal:
    try:
        return parse_quantity(quantity)
    except QuantityError as error:
        raise WorkloadError(ref, f"{where}: {resource}: {error}") from error


def _requeues(status: Mapping[str, Any], ref: str) -> int:
    count = _mapping(status.get("requeueState", {}), ref, "status.requeueState").get("count", 0)
    if not isinstance(count, int) or count < 0:
        raise WorkloadError(ref, f"status.requeueState.count {count!r} is not a non-negative integer")
    return count


def _evictions(status: Mapping[str, Any], ref: str) -> dict[str, int]:
    stats = _mapping(status.get("schedulingStats", {}), ref, "status.schedulingStats")
    counts: dict[str, int] = {}
    for entry in stats.get("evictions", []):
        entry = _mapping(entry, ref, "status.schedulingStats.evictions[]")
        counts[str(entry.get("reason"))] = counts.get(str(entry.get("reason")), 0) + int(entry.get("count", 0))
    return counts
