"""Kueue Workloads (v1beta1 and v1beta2) read into typed usage: team, priority class, admitted
units per instance type and kind, start and end (SEMANTICS.md U1-U6). Times are whole seconds:
2026-03-02T10:00:00Z is 1772445600."""

from __future__ import annotations

import copy

import pytest

from tests.usage.workload_fixtures import P5, condition, validate, with_status, workload
from usage.resources import ResourceKind
from usage.spans import Span
from usage.workloads import NotATeamWorkload, WorkloadError, parse_workload

T10 = 1772445600  # 2026-03-02T10:00:00Z


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_a_running_workload(version: str) -> None:
    """2 pods x 8 GPUs x 4 CPUs on p5, quota reserved 10:01:30 (= T10 + 90): 16 GPUs = 16 * 56 = 896 units,
    8 vCPUs = 8000 millicores; no end, so the span runs to `now` (T10 + 600)."""
    parsed = parse_workload(workload(version), cluster="gpu-east")

    assert (parsed.team, parsed.cluster, parsed.priority_class) == ("vision", "gpu-east", "training")
    assert parsed.api_version == f"kueue.x-k8s.io/{version}"
    assert parsed.attempt is not None and parsed.attempt.ending is None
    assert parsed.attempt.start == T10 + 90
    assert dict(parsed.attempt.units) == {(P5, ResourceKind.GPU): 896, (P5, ResourceKind.VCPU): 8000}
    assert parsed.spans(now=T10 + 600) == [
        Span("vision", "gpu-east", P5, ResourceKind.GPU, "training", 896, T10 + 90, T10 + 600, False),
        Span("vision", "gpu-east", P5, ResourceKind.VCPU, "training", 8000, T10 + 90, T10 + 600, False)]


def test_a_finished_workload() -> None:
    """Finished True at 10:31:30 (T10 + 1890) ends the attempt; not a preemption."""
    parsed = parse_workload(workload(conditions=[
        condition("QuotaReserved", "True", "2026-03-02T10:01:30Z"),
        condition("Admitted", "True", "2026-03-02T10:01:31Z"),
        condition("Finished", "True", "2026-03-02T10:31:30Z", "Succeeded")]), cluster="gpu-east")

    assert parsed.attempt is not None and parsed.attempt.ending is not None
    assert (parsed.attempt.ending.time, parsed.attempt.ending.reason, parsed.attempt.ending.preempted) == (
        T10 + 1890, "Succeeded", False)
    assert [s.end for s in parsed.spans(now=T10 + 99999)] == [T10 + 1890, T10 + 1890]


def test_a_workload_evicted_by_preemption() -> None:
    """Evicted True with reason Preempted at 10:20:00 (T10 + 1200), admission still held: the
    attempt ends there, lost to preemption; the eviction counts are read."""
    base = workload("v1beta2", conditions=[
        condition("QuotaReserved", "True", "2026-03-02T10:01:30Z"),
        condition("Admitted", "True", "2026-03-02T10:01:31Z"),
        condition("Evicted", "True", "2026-03-02T10:20:00Z", "Preempted"),
        condition("Preempted", "True", "2026-03-02T10:20:00Z", "InCohortReclamation")])
    evicted = with_status(base, requeueState={"count": 1},
                          schedulingStats={"evictions": [{"reason": "Preempted", "underlyingCause": "", "count": 2}]})

    parsed = parse_workload(evicted, cluster="gpu-east")

    assert parsed.attempt is not None and parsed.attempt.ending is not None
    assert (parsed.attempt.ending.time, parsed.attempt.ending.preempted) == (T10 + 1200, True)
    assert all(s.preempted and s.end == T10 + 1200 for s in parsed.spans(now=T10 + 5000))
    assert (parsed.requeue_count, dict(parsed.evictions)) == (1, {"Preempted": 2})


def test_an_eviction_before_the_current_admission_does_not_end_it() -> None:
    """Evicted at 09:50 (before the reservation at 10:01:30) belongs to an earlier attempt."""
    parsed = parse_workload(workload(conditions=[
        condition("Evicted", "False", "2026-03-02T09:50:00Z", "QuotaReserved"),
        condition("QuotaReserved", "True", "2026-03-02T10:01:30Z")]), cluster="c")

    assert parsed.attempt is not None and parsed.attempt.ending is None


def test_a_released_workload_keeps_its_last_end_without_an_attempt() -> None:
    """After eviction Kueue clears the admission and sets QuotaReserved False: no attempt to count,
    but the end (10:20:05, T10 + 1205, preempted) is there for a collector closing its span."""
    parsed = parse_workload(workload(admitted=False, conditions=[
        condition("QuotaReserved", "False", "2026-03-02T10:20:05Z", "Pending"),
        condition("Evicted", "True", "2026-03-02T10:20:00Z", "Preempted")]), cluster="c")

    assert parsed.attempt is None and parsed.spans(now=T10) == []
    assert parsed.last_ending is not None
    assert (parsed.last_ending.time, parsed.last_ending.preempted) == (T10 + 1205, True)


def test_mig_slices_and_millicores() -> None:
    """3 pods of 2 x mig-3g.40gb on p5 (H100) and 500m CPU: a 3g.40gb is max(3/7, 4/8) = 1/2 GPU =
    28 units, so 6 of them are 168 units (3 GPUs); 1500 millicores; no priority class."""
    w = workload(priority=None, pods=3, cpu="500m")
    assignment = w["status"]["admission"]["podSetAssignments"][0]
    assignment["flavors"] = {"cpu": P5, "nvidia.com/mig-3g.40gb": P5}
    assignment["resourceUsage"] = {"cpu": "1500m", "nvidia.com/mig-3g.40gb": "6", "memory": "96Gi"}
    parsed = parse_workload(validate(w), cluster="c")

    assert parsed.priority_class is None
    assert parsed.attempt is not None
    assert dict(parsed.attempt.units) == {(P5, ResourceKind.GPU): 168, (P5, ResourceKind.VCPU): 1500}


def test_without_resource_usage_the_template_times_the_count() -> None:
    """No resourceUsage: 2 pods x (8 GPUs, 4 CPUs) from the template = 16 * 56 = 896 units, 8000 millicores."""
    w = workload()
    del w["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]
    parsed = parse_workload(validate(w), cluster="c")

    assert parsed.attempt is not None
    assert dict(parsed.attempt.units) == {(P5, ResourceKind.GPU): 896, (P5, ResourceKind.VCPU): 8000}


@pytest.mark.parametrize(("change", "message"), [
    (lambda w: w["status"]["admission"]["podSetAssignments"][0]["flavors"].pop("nvidia.com/gpu"),
     "resource nvidia.com/gpu has no flavor"),
    (lambda w: w["status"]["admission"]["podSetAssignments"][0]["resourceUsage"].update({"nvidia.com/gpu": "1.5"}),
     "1.5 is not a whole number"),
    (lambda w: w["status"]["conditions"][0].update({"lastTransitionTime": "yesterday"}),
     "lastTransitionTime 'yesterday' is not an RFC 3339 time"),
    (lambda w: w["status"]["admission"].update({"clusterQueue": "hyperpod-ns-nlp-clusterqueue"}),
     "namespace hyperpod-ns-vision is team vision's but ClusterQueue hyperpod-ns-nlp-clusterqueue is team nlp's"),
    (lambda w: w.update({"apiVersion": "kueue.x-k8s.io/v1alpha1"}), "not a Kueue Workload"),
])
def test_a_bad_object_names_itself_and_the_problem(change, message) -> None:  # type: ignore[no-untyped-def]
    bad = copy.deepcopy(workload())
    change(bad)

    with pytest.raises(WorkloadError) as raised:
        parse_workload(bad, cluster="c")

    assert raised.value.ref == "hyperpod-ns-vision/job-train-3f2a"
    assert message in str(raised.value) and str(raised.value).startswith("Workload hyperpod-ns-vision/job-train-3f2a:")


def test_a_workload_outside_every_team_is_told_apart() -> None:
    w = workload()
    w["metadata"]["namespace"] = "kube-system"
    w["status"]["admission"]["clusterQueue"] = "system-queue"

    with pytest.raises(NotATeamWorkload, match="kube-system/job-train-3f2a"):
        parse_workload(w, cluster="c")
