"""Kueue Workloads as a Job's Workload looks once admitted: `spec.podSets` with a pod template,
`status.admission.clusterQueue` and `podSetAssignments` (`flavors`, `resourceUsage`, `count`) and
`status.conditions`, field by field as the Workload CRD describes them (the layout of Kueue's
Workload concept page, https://kueue.sigs.k8s.io/docs/concepts/workload/), in a team namespace as
hypergov names it. Each is valid against the Workload CRD of its version (`validate`)."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

CRD = Path(__file__).resolve().parents[1] / "schemas" / "kueue" / "kueue.x-k8s.io_workloads.yaml"
P5 = "ml.p5.48xlarge"


@cache
def _schema(version: str) -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    return next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"]


def validate(workload: dict[str, Any]) -> dict[str, Any]:
    jsonschema.validate(workload, _schema(workload["apiVersion"].rpartition("/")[2]))
    return workload


def condition(kind: str, status: str, time: str, reason: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "lastTransitionTime": time, "reason": reason or kind,
            "message": f"{kind} {status}"}


def workload(version: str = "v1beta1", *, team: str = "vision", name: str = "job-train-3f2a",
             gpus: int = 8, pods: int = 2, cpu: str = "4", flavor: str = P5, priority: str | None = "training-priority",
             conditions: list[dict[str, str]] | None = None, admitted: bool = True) -> dict[str, Any]:
    """A Job of `pods` pods, each asking `gpus` GPUs and `cpu` CPU, admitted on `flavor`."""
    container = {"name": "trainer", "image": "registry.example/train:1",
                 "resources": {"requests": {"cpu": cpu, "nvidia.com/gpu": str(gpus)}}}
    spec: dict[str, Any] = {
        "queueName": f"hyperpod-ns-{team}-localqueue",
        "podSets": [{"name": "main", "count": pods, "template": {"spec": {"containers": [container],
                                                                          "restartPolicy": "Never"}}}]}
    if priority is not None:
        if version == "v1beta1":
            spec |= {"priorityClassName": priority, "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
                     "priority": 60}
        else:
            spec |= {"priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                                          "name": priority}, "priority": 60}
    status: dict[str, Any] = {"conditions": conditions if conditions is not None else [
        condition("QuotaReserved", "True", "2026-03-02T10:01:30Z"),
        condition("Admitted", "True", "2026-03-02T10:01:31Z")]}
    if admitted:
        status["admission"] = {"clusterQueue": f"hyperpod-ns-{team}-clusterqueue", "podSetAssignments": [{
            "name": "main", "count": pods, "flavors": {"cpu": flavor, "nvidia.com/gpu": flavor},
            "resourceUsage": {"cpu": _times(cpu, pods), "nvidia.com/gpu": str(gpus * pods)}}]}
    return validate({"apiVersion": f"kueue.x-k8s.io/{version}", "kind": "Workload",
                     "metadata": {"name": name, "namespace": f"hyperpod-ns-{team}"}, "spec": spec, "status": status})


def _times(cpu: str, pods: int) -> str:
    return f"{int(cpu[:-1]) * pods}m" if cpu.endswith("m") else str(int(cpu) * pods)


def with_status(base: dict[str, Any], **status: Any) -> dict[str, Any]:
    changed = copy.deepcopy(base)
    changed["status"].update(status)
    return validate(changed)
