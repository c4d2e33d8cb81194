"""The audit side of the access report: the applied outcome records of an audit branch, each with
the memberships of the tree at its source commit (read from Git, once per commit). The report
itself (`reconciler.access_report`) decides from these which record granted each membership.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypergov.gitsource import RefNotFoundError, read_tree_at
from hypergov.loader import load_tree
from reconciler.access_report import AppliedRecord, AuditTrail, Membership, tree_memberships
from reconciler.audit_store import AuditStore


def applied_records(store: AuditStore, *, tree_repo: Path | None, subdir: str) -> AuditTrail | None:
    """The branch's applied outcome records, oldest first, with each source commit's memberships
    (None where the commit is not in `tree_repo`, or there is no `tree_repo`). None when the
    branch does not exist."""
    tip = store.tip()
    if tip is None:
        return None
    seen: dict[str, frozenset[Membership] | None] = {}
    records: list[AppliedRecord] = []
    for path, data in store.files(tip):
        try:
            record = json.loads(data)
        except ValueError:
            continue  # an unreadable record is `audit verify`'s to name
        if not isinstance(record, dict) or record.get("type") != "outcome" or record.get("outcome") != "applied":
            continue
        commit = str(record.get("source_commit") or "").removesuffix("-dirty")
        if not commit or not record.get("stack"):
            continue
        if commit not in seen:
            seen[commit] = _memberships_at(tree_repo, commit, subdir)
        records.append(AppliedRecord(seq=int(record.get("seq", 0)), stack=str(record["stack"]), commit=commit,
                                     at=str(record.get("at") or ""), path=path, memberships=seen[commit]))
    return AuditTrail(where=f"{store.branch} of {store.repo}", records=tuple(sorted(records, key=lambda r: r.seq)))


def _memberships_at(repo: Path | None, commit: str, subdir: str) -> frozenset[Membership] | None:
    if repo is None:
        return None
    try:
        tree, _ = load_tree(read_tree_at(repo, commit, subdir))
    except RefNotFoundError:
        return None
    return tree_memberships(tree)
