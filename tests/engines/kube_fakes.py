"""A fake cluster behind the `KubeApi` Protocol seam, and a terraform engine over it without
terraform: no kube-apiserver can run here, and the stacks these tests use (the plain-EKS
cluster stack; destroys of stacks without terraform state) never start terraform. For project
stacks, `quiet_terraform` puts a stand-in binary in its place that plans no changes."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Generator, Mapping
from pathlib import Path
from typing import Any

from engines.hyperpod.executor import HyperPodExecutor
from engines.kube import KubeApi, KubeKind, KubeObject, KubePage, ResourceVersionExpired, WatchEvent, WatchEventType
from engines.settings import load_settings
from engines.terraform.engine import TerraformEngine
from engines.terraform.runner import TerraformRunner
from engines.terraform.workspace import ProviderSource, prepare_workspace
from hypergov.model.tree import GovernanceTree


class FakeCluster:
    """Live objects by address; `apply` stores the body (labels and all), `delete` removes it.
    Set `frozen` to make any read fail: apply must carry out the plan without deciding again.
    `list_kind` pages as the API server does (`limit`, an opaque continue token) and matches
    equality label selectors (`k=v,k2=v2`); set `list_error` to make every listing raise it.
    `listings` records each page read: (apiVersion, kind, namespace, label selector).

    It stands in for a kube-apiserver (none can run here), resource versions and watches
    included: every `apply` and `delete` is an event in `events` with the next resourceVersion
    (stamped into the stored body, as the server does), a list returns the version it was taken
    at, and `watch_kind` replays the events after a version, then a BOOKMARK at the latest, and
    ends (as a watch whose timeout passed). `compact()` forgets the events so far: a watch from an
    older version raises `ResourceVersionExpired` (410 Gone). `drop_watch_after` ends the next
    watch with a reset connection after that many events; `watches` records each watch's start."""

    def __init__(self) -> None:
        self.live: dict[str, KubeObject] = {}
        self.calls: list[str] = []
        self.frozen = False
        self.list_error: Exception | None = None
        self.listings: list[tuple[str, str, str | None, str | None]] = []
        self.resource_version = 0
        self.events: list[WatchEvent] = []
        self.compacted_below = 0
        self.drop_watch_after: int | None = None
        self.watches: list[str] = []

    def _read(self) -> None:
        if self.frozen:
            raise AssertionError("the cluster was read again after planning")

    def get(self, obj: KubeObject) -> Mapping[str, Any] | None:
        self._read()
        found = self.live.get(obj.address)
        return found.body if found else None

    def apply(self, obj: KubeObject) -> None:
        self.calls.append(f"apply {obj.address}")
        change: WatchEventType = "MODIFIED" if obj.address in self.live else "ADDED"
        self.live[obj.address] = self._logged(change, obj)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        gone = KubeObject(api_version, kind, name, namespace, {})
        self.calls.append(f"delete {gone.address}")
        last = self.live.pop(gone.address, None)
        if last is not None:
            self._logged("DELETED", last)

    def _logged(self, change: WatchEventType, obj: KubeObject) -> KubeObject:
        self.resource_version += 1
        version = str(self.resource_version)
        metadata = {**obj.body.get("metadata", {}), "resourceVersion": version}
        stamped = dataclasses.replace(obj, body={**obj.body, "metadata": metadata})
        self.events.append(WatchEvent(type=change, body=stamped.body, resource_version=version))
        return stamped

    def compact(self) -> None:
        """etcd's compaction: no watch can start from a version before now any more."""
        self.compacted_below = self.resource_version

    def watch_kind(self, api_version: str, kind: str, *, resource_version: str,
                   timeout_s: float) -> Generator[WatchEvent, None, None]:
        self._read()
        self.watches.append(resource_version)
        if int(resource_version) < self.compacted_below:
            raise ResourceVersionExpired(f"too old resource version: {resource_version} ({self.compacted_below})")
        drop_after, self.drop_watch_after = self.drop_watch_after, None
        sent = 0
        for event in list(self.events):
            if int(event.resource_version) <= int(resource_version) or \
                    (event.body.get("apiVersion"), event.body.get("kind")) != (api_version, kind):
                continue
            if drop_after is not None and sent == drop_after:
                raise ConnectionResetError("connection reset by peer (the fake dropped the watch)")
            sent += 1
            yield event
        latest = str(self.resource_version)
        yield WatchEvent(type="BOOKMARK", body={"apiVersion": api_version, "kind": kind,
                                                "metadata": {"resourceVersion": latest}}, resource_version=latest)

    def list_managed(self, stack: str, kinds: Collection[KubeKind]) -> list[KubeObject]:
        self._read()
        return [KubeObject(o.api_version, o.kind, o.name, o.namespace, {}) for o in self.live.values()
                if (o.api_version, o.kind) in kinds
                and o.body.get("metadata", {}).get("labels", {}).get("hypergov.dev/stack") == stack]

    def list_kind(self, api_version: str, kind: str, *, namespace: str | None = None,
                  label_selector: str | None = None, limit: int | None = None,
                  continue_token: str | None = None) -> KubePage:
        self._read()
        self.listings.append((api_version, kind, namespace, label_selector))
        if self.list_error is not None:
            raise self.list_error
        wanted = dict(term.split("=", 1) for term in label_selector.split(",")) if label_selector else {}
        matching = [o for address, o in sorted(self.live.items())
                    if (o.api_version, o.kind) == (api_version, kind) and namespace in (None, o.namespace)
                    and wanted.items() <= dict(o.body.get("metadata", {}).get("labels", {})).items()]
        start = int(continue_token or 0)
        end = len(matching) if limit is None else start + limit
        return KubePage(items=tuple(matching[start:end]), continue_token=str(end) if end < len(matching) else None,
                        resource_version=str(self.resource_version))


QUIET_TERRAFORM = """#!/bin/sh
# stands in for terraform: every plan has no changes
case "$1" in
  plan) for arg in "$@"; do case "$arg" in -out=*) : > "${arg#-out=}";; esac; done ;;
  show) echo '{"format_version": "1.2", "resource_changes": []}' ;;
esac
exit 0
"""


def engine_without_terraform(tree: GovernanceTree, state: Path, clusters: Mapping[str, KubeApi], *,
                             quiet_terraform: bool = False) -> TerraformEngine:
    """A terraform engine whose terraform binary does not exist (any run of it fails the test),
    or with `quiet_terraform` plans no changes, and whose HyperPod driver has no AWS; `clusters`
    are the ones with a kubeconfig."""
    binary = state / "no-terraform"
    if quiet_terraform:
        binary = state / "quiet-terraform"
        binary.write_text(QUIET_TERRAFORM)
        binary.chmod(0o755)

    def no_aws(account: str, region: str) -> Any:
        raise AssertionError(f"no AWS here ({account} {region})")

    settings = load_settings(environ={"HYPERGOV_SETTINGS": "/nonexistent"}, overrides={"state_dir": str(state)})
    workspace = prepare_workspace(state, ProviderSource(version=settings.terraform.provider_version))
    return TerraformEngine(settings=settings, tree=tree, workspace=workspace,
                           runner=TerraformRunner(binary=str(binary), env={}),
                           hyperpod=HyperPodExecutor(client_for=no_aws), kube_api_for=clusters.get)
