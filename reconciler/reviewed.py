"""What was reviewed is what gets applied: a merge request's plan is kept, by the Git id of the
config tree it planned, and the reconciler compares each stack's real terraform plan of that tree
with it before applying; a stack whose plan differs is refused with both diffs.

A record is written by `hypergov plan --base` into the state directory (`reviewed/<tree>.json`),
whether its resource tables came from terraform or from the live scan (`--terraform-max-stacks`);
the reconciler finds it by the tree id of the commit it applies, so a squash or merge commit whose
tree is the one reviewed matches, and a tree nobody reviewed as such (two merge requests merged
one after the other) is applied as planned, with a note. Records hold addresses and actions only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from engines.objects import RecordStore
from engines.plan import Plan, StackName

REVIEWED_DIR = "reviewed"
Shown = frozenset[tuple[str, str]]  # (address, action) of each actionable change


def shown(plan: Plan) -> Shown:
    return frozenset((c.address, c.action.value) for c in plan.actionable)


def record_reviewed(state_dir: Path, tree_id: str, plans: Sequence[Plan], *, method: Mapping[str, str],
                    base_ref: str) -> Path:
    """Keep what the merge request shows, per stack (`method`: stack -> "terraform" | "live scan")."""
    target = state_dir / REVIEWED_DIR / f"{tree_id}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    data = {"tree": tree_id, "base_ref": base_ref, "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "stacks": {p.stack: {"method": method.get(p.stack, "terraform"),
                                 "changes": sorted([a, b] for a, b in shown(p))} for p in plans}}
    partial = target.with_suffix(".tmp")
    partial.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(partial, target)
    return target


@dataclass(frozen=True)
class Reviewed:
    stacks: Mapping[str, Shown]
    method: Mapping[str, str]


def reviewed_plan(records: RecordStore, tree_id: str | None) -> Reviewed | None:
    """The record of the tree, None when there is none (or it cannot be read: then nothing is
    compared, as for a tree nobody reviewed)."""
    if tree_id is None:
        return None
    try:
        found = records.read(f"{REVIEWED_DIR}/{tree_id}.json")
        if found is None:
            return None
        data: dict[str, Any] = found.data
        stacks = {s: frozenset((a, b) for a, b in v["changes"]) for s, v in data["stacks"].items()}
        return Reviewed(stacks=stacks, method={s: str(v.get("method", "terraform")) for s, v in data["stacks"].items()})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _listed(changes: Shown) -> str:
    return ", ".join(f"{action} {address}" for address, action in sorted(changes)) or "no changes"


def differing(reviewed: Reviewed, plans: Sequence[Plan]) -> dict[str, str]:
    """stack -> why it is refused: its plan now differs from the one reviewed (both shown)."""
    refused: dict[str, str] = {}
    for plan in plans:
        if plan.stack not in reviewed.stacks:
            continue
        was, now = reviewed.stacks[plan.stack], shown(plan)
        if was != now:
            refused[plan.stack] = (
                f"the plan differs from the one reviewed in the merge request ({reviewed.method[plan.stack]}): "
                f"reviewed: {_listed(was)}; now: {_listed(now)}; "
                f"only in the new plan: {_listed(now - was)}; only in the reviewed one: {_listed(was - now)}. "
                "Plan the change again in a merge request to review what would be applied")
    return refused


@dataclass(frozen=True)
class ReviewVerdict:
    state: Literal["reviewed", "unreviewed"]  # a review of this tree was recorded, or not
    refused: Mapping[StackName, str]  # stack -> why it is refused


def review_verdict(reviewed: Reviewed | None, plans: Sequence[Plan], *, require_reviewed: bool) -> ReviewVerdict:
    """Pure: the stacks refused by the review (or by its absence, with `require_reviewed`)."""
    if reviewed is None:
        why = ("not applied: no review of this tree was recorded and require_reviewed is set; plan it in a merge "
               "request (hypergov plan --base ...) before it is merged")
        return ReviewVerdict("unreviewed", {p.stack: why for p in plans if not p.is_empty} if require_reviewed else {})
    return ReviewVerdict("reviewed", {StackName(s): why for s, why in differing(reviewed, plans).items()})
