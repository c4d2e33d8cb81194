"""What the usage collector keeps of one cluster, and what that becomes after a listing or a
watch event: pure decisions, no I/O (`usage.collector_store` writes them, `usage.collect` reads
the cluster).

Every workload is kept by its uid, with the latest body seen. A uid seen again (a replayed event
after a restart, the same workload in a new listing) replaces its own record: it is never a second
workload, so nothing is counted twice. A DELETED workload keeps its last body, marked deleted:
a finished job its owner deleted still ran, and its conditions say when.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engines.kube import WatchEvent
from engines.outcomes import PermanentError
from usage.coverage import Coverage

# Kueue's Workload as the collector reads it (served by every Kueue release with v1beta2 too).
WORKLOAD_API_VERSION = "kueue.x-k8s.io/v1beta1"
WORKLOAD_KIND = "Workload"


@dataclass(frozen=True)
class KeptWorkload:
    """One workload as last seen: its body (admission, conditions with their times) and whether it
    is gone from the cluster."""

    uid: str
    body: Mapping[str, Any]
    deleted: bool = False


@dataclass(frozen=True)
class Checkpoint:
    """Where a restart resumes: the resourceVersion of the last listing or event applied (None:
    nothing applied yet, list first) and the ranges during which the cluster was watched."""

    resource_version: str | None
    coverage: Coverage = ()


@dataclass(frozen=True)
class ListingOutcome:
    """What a listing changes: every listed workload (kept afresh) and the kept ones it no longer
    holds (deleted while nobody watched: kept with their last body, now marked deleted)."""

    listed: tuple[KeptWorkload, ...]
    gone: tuple[KeptWorkload, ...]


class MalformedWorkload(PermanentError):
    """A Workload body without a usable metadata.uid: the API server always sets one (a UUID), so
    this is no Workload it served; the uid also names a file, so nothing else is accepted."""

    reason = "malformed-workload"


_UID = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,127}")


def workload_uid(body: Mapping[str, Any]) -> str:
    meta = body.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    if not _UID.fullmatch(uid):
        raise MalformedWorkload(f"Workload {meta.get('namespace')}/{meta.get('name')} has no usable "
                                f"metadata.uid ({uid!r})")
    return uid


def after_event(event: WatchEvent) -> KeptWorkload | None:
    """The record of the event's workload after it: the new body (ADDED, MODIFIED), or the last body
    marked deleted (DELETED); None for a BOOKMARK, which changes no workload. The record before does
    not matter: a replayed event yields the same record again."""
    if event.type == "BOOKMARK":
        return None
    return KeptWorkload(uid=workload_uid(event.body), body=event.body, deleted=event.type == "DELETED")


def after_listing(kept: Mapping[str, KeptWorkload], listed: Iterable[Mapping[str, Any]]) -> ListingOutcome:
    """A listing replaces the set of present workloads: each listed one is kept afresh, each kept
    one still present before and not listed now is gone (its last body kept)."""
    fresh = {(w := KeptWorkload(uid=workload_uid(body), body=body)).uid: w for body in listed}
    gone = tuple(KeptWorkload(uid=uid, body=w.body, deleted=True) for uid, w in sorted(kept.items())
                 if uid not in fresh and not w.deleted)
    return ListingOutcome(listed=tuple(fresh.values()), gone=gone)
