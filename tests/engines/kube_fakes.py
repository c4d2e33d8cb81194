"""A fake cluster behind the `KubeApi` Protocol seam, and a terraform engine over it without
terraform: no kube-apiserver can run here, and the stacks these tests use (the plain-EKS
cluster stack; destroys of stacks without terraform state) never start terraform. For project
stacks, `quiet_terraform` puts a stand-in binary in its place that plans no changes."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from engines.hyperpod.executor import HyperPodExecutor
from engines.kube import KubeApi, KubeKind, KubeObject, KubePage
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
    `listings` records each page read: (apiVersion, kind, namespace, label selector)."""

    def __init__(self) -> None:
        self.live: dict[str, KubeObject] = {}
        self.calls: list[str] = []
        self.frozen = False
        self.list_error: Exception | None = None
        self.listings: list[tuple[str, str, str | None, str | None]] = []

    def _read(self) -> None:
        if self.frozen:
            raise AssertionError("the cluster was read again after planning")

    def get(self, obj: KubeObject) -> Mapping[str, Any] | None:
        self._read()
        found = self.live.get(obj.address)
        return found.body if found else None

    def apply(self, obj: KubeObject) -> None:
        self.calls.append(f"apply {obj.address}")
        self.live[obj.address] = obj

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None) -> None:
        gone = KubeObject(api_version, kind, name, namespace, {})
        self.calls.append(f"delete {gone.address}")
        self.live.pop(gone.address, None)

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
        return KubePage(items=tuple(matching[start:end]), continue_token=str(end) if end < len(matching) else None)


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
