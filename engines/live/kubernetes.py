"""The I/O of the live Kubernetes scan: on every cluster with a kubeconfig, list the kinds hypergov
manages with one paged list call per kind (not per object) through the `KubeApi` seam, and
compare them with every stack's declared objects (`engines.live.kubernetes_compare`): one scan
unit per cluster, with the cluster's own client.

A cluster without a kubeconfig has no unit: its Kubernetes objects are not read, which the scan
says (`not_read`) without being incomplete, as a plan without one says "not applied". A cluster
whose API cannot be reached or listed makes the scan incomplete (the cluster is named).

A declared object of a kind listed by label that no listing returned is read by name (one call
each, only for those): its label may have been removed by hand, and it is then changed, not
missing. Calls are counted per page (service "kubernetes"); the discovery the dynamic client
does once per client is not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from engines.kube import DynamicKubeApi, KubeApi, KubeObject
from engines.live.items import DriftItem
from engines.live.kubernetes_compare import MANAGED_KINDS, KubeCluster, Listing, compare, kube_clusters, kube_type
from engines.live.runner import CallCounter, Pruner, ScanContext, ScanUnit
from hypergov import naming

SERVICE = "kubernetes"
PROJECT_PREFIX = naming.project_stack("")
PAGE_SIZE = 500  # objects a list page (kubectl's chunk size); the API server may return fewer


def kube_apis_of(kubeconfigs: Mapping[str, Path]) -> dict[str, Callable[[], KubeApi]]:
    """`ScanContext.kube_apis` from `Settings.kubeconfigs` (cluster name -> kubeconfig file): each
    cluster's client made on first use (in its unit, so a kubeconfig that fails to load is that
    cluster's failure), then kept for pruning."""
    return {cluster: functools.cache(functools.partial(DynamicKubeApi.from_kubeconfig, Path(path)))
            for cluster, path in kubeconfigs.items()}


def listed(api: KubeApi, listing: Listing, calls: CallCounter) -> Iterator[KubeObject]:
    """Every object of one listing, page by page, one counted call a page."""
    token: str | None = None
    while True:
        calls.add(SERVICE)
        page = api.list_kind(listing.api_version, listing.kind, label_selector=listing.label_selector,
                             limit=PAGE_SIZE, continue_token=token)
        yield from page.items
        token = page.continue_token
        if not token:
            return


def scan_cluster(api: KubeApi, cluster: KubeCluster, calls: CallCounter) -> list[DriftItem]:
    live = [obj for listing in cluster.listings() for obj in listed(api, listing, calls)]
    for declared in cluster.unlisted(o.address for o in live):
        calls.add(SERVICE)
        body = api.get(declared.obj)
        if body is not None:
            d = declared.obj
            live.append(KubeObject(api_version=d.api_version, kind=d.kind, name=d.name, namespace=d.namespace,
                                   body=body))
    return compare(cluster, live)


def units(context: ScanContext) -> list[ScanUnit]:
    """One unit per cluster with a kubeconfig (`context.kube_apis`)."""
    return [cluster_unit(c, context.kube_apis[c.name]) for c in kube_clusters(context.tree, context.specs, context.kube)
            if c.name in context.kube_apis]


def not_read(context: ScanContext) -> list[str]:
    """The clusters whose Kubernetes objects the scan does not read: no kubeconfig is configured."""
    return [f"Kubernetes objects of cluster {c.name}: no kubeconfig configured (settings kubeconfigs)"
            for c in kube_clusters(context.tree, context.specs, context.kube) if c.name not in context.kube_apis]


def cluster_unit(cluster: KubeCluster, api: Callable[[], KubeApi]) -> ScanUnit:
    # Items go to the stacks declaring objects there, to project stacks (owners of team namespaces,
    # or named by a label) and to the cluster's stack.
    covers = frozenset({cluster.stack, *(d.stack for d in cluster.desired),
                        *(s for s in cluster.stacks if s.startswith(PROJECT_PREFIX))})
    return ScanUnit(service=SERVICE, account=cluster.account, region=cluster.region, stack=cluster.stack,
                    what=f"Kubernetes objects of cluster {cluster.name}",
                    read=lambda client, calls: scan_cluster(client, cluster, calls), covers=covers, client=api)


def _delete(api: KubeApi, item: DriftItem, calls: CallCounter) -> None:
    ref = item.ref
    calls.add(SERVICE)
    api.delete(ref["apiVersion"], ref["kind"], ref["name"], ref["namespace"] or None)


PRUNERS = {kube_type(v, k): Pruner(service=SERVICE, delete=_delete, per_cluster=True) for v, k in MANAGED_KINDS}
