"""What a stack owns outside terraform's state: its HyperPod objects and its Kubernetes objects.

Terraform's state tells a destroy what terraform created; nothing told it about the objects the
HyperPod driver and server-side apply created, so a removed cluster's scheduler config and a
removed project's RBAC stayed live. Like Flux's kustomize-controller, the terraform engine keeps
an inventory in the stack's directory (`inventory.json`, beside `main.tf.json` and the state):
after every apply, the objects that exist afterwards (a delete that failed stays, so the next run
retries it); a stack planned without one yet (applied by a hypergov that kept none) gets one
from what that plan found live. An in-tree plan deletes the inventoried objects the stack no
longer declares (e.g. the objects on a cluster a project left); a destroy plan deletes every one
still live. For Kubernetes the inventory gives the clusters and kinds to search; which objects
are the stack's is decided by its label, as for any prune.

Kubernetes objects on a cluster without a kubeconfig cannot be seen: the inventory keeps the
declared ones there, so that a destroy still lists them (as not applied) for a person.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.hyperpod.executor import HyperPodRef, PlannedObject
from engines.kube import KubeDecision, KubeObject
from engines.outcomes import PermanentError

INVENTORY_FILE = "inventory.json"
VERSION = 1


class InventoryError(PermanentError):
    """A stack's inventory is unreadable: a destroy could not know what to delete."""

    reason = "inventory"


@dataclass(frozen=True)
class Inventory:
    hyperpod: tuple[HyperPodRef, ...] = ()
    kubernetes: tuple[tuple[str, KubeObject], ...] = ()  # (cluster, identity: body always empty)

    def clusters(self) -> list[str]:
        return sorted({cluster for cluster, _ in self.kubernetes})

    def kube_on(self, cluster: str) -> list[KubeObject]:
        return [obj for c, obj in self.kubernetes if c == cluster]

    @property
    def empty(self) -> bool:
        return not self.hyperpod and not self.kubernetes

    def as_json(self) -> str:
        data = {"version": VERSION,
                "hyperpod": [{"kind": r.kind, "name": r.name, "cluster_arn": r.cluster_arn} for r in self.hyperpod],
                "kubernetes": [{"cluster": c, "apiVersion": o.api_version, "kind": o.kind, "namespace": o.namespace,
                                "name": o.name} for c, o in self.kubernetes]}
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def owned(hyperpod: Iterable[tuple[PlannedObject, bool]], kube: Iterable[tuple[KubeDecision, bool]]) -> Inventory:
    """The inventory of the planned objects flagged as existing (deduplicated, sorted)."""
    refs = sorted({p.ref for p, exists in hyperpod if exists}, key=lambda r: (r.cluster_arn, r.kind, r.name))
    objects = {(d.cluster, d.obj.address): (d.cluster, _identity(d.obj)) for d, exists in kube if exists}
    return Inventory(hyperpod=tuple(refs), kubernetes=tuple(objects[k] for k in sorted(objects)))


def _identity(obj: KubeObject) -> KubeObject:
    return KubeObject(obj.api_version, obj.kind, obj.name, obj.namespace, {})


def read_inventory(directory: Path) -> Inventory | None:
    """The stack's inventory; None when it has none yet."""
    path = directory / INVENTORY_FILE
    if not path.exists():
        return None
    try:
        data: Any = json.loads(path.read_text())
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        return Inventory(
            hyperpod=tuple(HyperPodRef(str(h["kind"]), str(h["name"]), str(h["cluster_arn"]))
                           for h in data["hyperpod"]),
            kubernetes=tuple((str(k["cluster"]), KubeObject(str(k["apiVersion"]), str(k["kind"]), str(k["name"]),
                                                            k["namespace"], {})) for k in data["kubernetes"]))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # JSONDecodeError is a ValueError
        raise InventoryError(f"{path} is unreadable ({exc}); restore it from a backup, or delete it and the "
                             "stack's next plan records what it finds live (a removed stack's objects outside "
                             "terraform must then be deleted by hand)") from exc


def write_inventory(directory: Path, inventory: Inventory) -> None:
    """Atomically: a crash leaves the previous inventory, never half a file."""
    path = directory / INVENTORY_FILE
    tmp = path.with_name(f".{INVENTORY_FILE}.tmp")
    with open(tmp, "w") as handle:
        handle.write(inventory.as_json())
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)
