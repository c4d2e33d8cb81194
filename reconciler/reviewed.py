"""What was reviewed is what gets applied: a merge request's plan is kept, by the Git id of the
config tree it planned, and every applier compares its own plan of that tree with it before
applying; a stack whose plan differs is refused with both plans shown.

`hypergov plan --base` writes the record (`reviewed/<tree id>.json`) into the shared record store
(`engines.factory.reconciler_records`: the state bucket under `<prefix>/reconciler/` with
`state_backend: s3://...`, else the state directory), wherever it runs, so a reconciler on
another machine finds it by the tree id of the commit it applies: a squash or merge commit whose
tree is the one reviewed matches. A tree nobody reviewed as such (two merge requests merged one
after the other, a push to the branch) is "unreviewed": applied as planned and recorded so in the
intent audit record and the event log, or, with `require_reviewed: true`, refused.

A record holds, per stack and actionable change, its address, action and each changed
attribute's path and after-value (never the before-value: drift the plan repairs anyway is no
difference). A value "known after apply" is the same marker in both plans. Secrets: a value the
engine marks sensitive is masked in the `Plan` already; where the engine carries its digest
(terraform: `show -json` holds the value, `engines.showplan` keeps its SHA-256 only),
the record holds HMAC-SHA256(key: the tree id, message: that digest), so a changed secret is a
difference and no record holds the secret or an unkeyed hash of it. Where the engine gives no
digest (Pulumi's preview masks secrets itself) the record holds the mask: a changed secret there
shows as the same masked value, and only its address and action are compared.

A stack planned from the live scan (`--terraform-max-stacks`) records what the scan decided.
The scan spells values as the declared inputs and leaves out what terraform alone decides
(computed values, provider defaults), so such a stack is compared loosely: the same (address,
action) pairs, and each attribute the scan showed whose path terraform's plan also shows must
hold the same value (numbers as numbers, JSON documents as parsed, lists in any order).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from engines.live.documents import parsed, same_document
from engines.objects import RecordStore, RecordUnreadable, update
from engines.outcomes import Refusal
from engines.plan import MASK, AttributeChange, Plan, ResourceChange, StackName

REVIEWED_DIR = "reviewed"
LIVE_SCAN = "live scan"
_SHOWN_VALUE = 60  # characters of a value a refusal quotes


@dataclass(frozen=True)
class ReviewedChange:
    """One actionable change as reviewed: `attributes` are (path, value) with the value as
    canonical JSON, or `hmac-sha256:<hex>` for a sensitive one."""

    address: str
    action: str
    attributes: tuple[tuple[str, str], ...] = ()

    def shown(self) -> str:
        values = ", ".join(f"{path}={_quoted(value)}" for path, value in self.attributes)
        return f"{self.action} {self.address}" + (f" [{values}]" if values else "")


def _quoted(value: str) -> str:
    if value.startswith("hmac-sha256:"):
        return MASK
    return value if len(value) <= _SHOWN_VALUE else value[:_SHOWN_VALUE - 3] + "..."


@dataclass(frozen=True)
class Reviewed:
    tree: str
    stacks: Mapping[str, frozenset[ReviewedChange]]
    method: Mapping[str, str]  # stack -> "terraform" | "pulumi" | "live scan"
    where: str = ""  # the record's location, for messages


@dataclass(frozen=True)
class ReviewVerdict:
    state: Literal["reviewed", "unreviewed"]  # a record exists for this tree, or not
    refused: Mapping[StackName, Refusal]  # stack -> why: its plan differs from the reviewed one, or no review


def record_name(tree_id: str) -> str:
    return f"{REVIEWED_DIR}/{tree_id}.json"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _attribute(attribute: AttributeChange, tree_id: str) -> tuple[str, str]:
    if attribute.digest is not None:  # keyed by the tree: equal secrets of other trees look unrelated
        keyed = hmac.new(tree_id.encode(), attribute.digest.encode(), hashlib.sha256).hexdigest()
        return attribute.path, f"hmac-sha256:{keyed}"
    return attribute.path, _canonical(MASK if attribute.sensitive and attribute.after is not None
                                      else attribute.after)


def _change(change: ResourceChange, tree_id: str) -> ReviewedChange:
    return ReviewedChange(change.address, change.action.value,
                          tuple(sorted(_attribute(a, tree_id) for a in change.attributes)))


def shown(plan: Plan, tree_id: str) -> frozenset[ReviewedChange]:
    """What a plan shows of each actionable change (changes not carried out never count)."""
    return frozenset(_change(c, tree_id) for c in plan.actionable)


def record_reviewed(records: RecordStore, tree_id: str, plans: Sequence[Plan], *, method: Mapping[str, str],
                    base_ref: str) -> str:
    """Keep what the merge request shows, per stack (`method`: stack -> "terraform" | "pulumi" |
    "live scan"; default: the plan's engine); a record already there for the tree (the merge
    request planned again) is replaced. Where it went."""
    stacks = {p.stack: {"method": method.get(p.stack, p.engine),
                        "changes": [{"address": c.address, "action": c.action,
                                     "attributes": [{"path": path, "value": value} for path, value in c.attributes]}
                                    for c in sorted(shown(p, tree_id), key=lambda c: (c.address, c.action))]}
              for p in plans}
    data = {"tree": tree_id, "base_ref": base_ref, "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "stacks": stacks}
    update(records, record_name(tree_id), lambda _: data)
    return records.where(record_name(tree_id))


def reviewed_plan(records: RecordStore, tree_id: str | None) -> Reviewed | None:
    """The record of the tree, None when there is none (or it cannot be read: then the tree is
    unreviewed, which `require_reviewed` refuses)."""
    if tree_id is None:
        return None
    try:
        found = records.read(record_name(tree_id))
        if found is None:
            return None
        entries: dict[str, Any] = found.data["stacks"]
        stacks = {s: frozenset(ReviewedChange(str(c["address"]), str(c["action"]), tuple(
            (str(a["path"]), str(a["value"])) for a in c.get("attributes", []))) for c in v["changes"])
            for s, v in entries.items()}
        return Reviewed(tree=tree_id, stacks=stacks, method={s: str(v.get("method", "terraform"))
                                                             for s, v in entries.items()},
                        where=records.where(record_name(tree_id)))
    except (RecordUnreadable, KeyError, TypeError, AttributeError):
        return None


def _loose(text: str) -> Any:
    """A recorded value in one spelling for the live scan's comparison."""
    value = json.loads(text) if not text.startswith("hmac-sha256:") else text
    return _spelled(value)


def _spelled(value: Any) -> Any:
    value = parsed(value) if isinstance(value, str) and value[:1] in "{[" else value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, list):
        return sorted((_spelled(v) for v in value), key=_canonical)
    if isinstance(value, Mapping):
        return {str(k): _spelled(v) for k, v in value.items()}
    return value


def _alike(was: str, now: str) -> bool:
    if was == now:
        return True
    a, b = _loose(was), _loose(now)
    if isinstance(a, Mapping) and isinstance(b, Mapping) and ("Statement" in a or "Statement" in b):
        return same_document(a, b)
    return bool(a == b)


def _scanned_same(was: ReviewedChange, now: ReviewedChange) -> bool:
    """A change the live scan decided against terraform's: same address and action, and every
    attribute both show holds the same value."""
    if (was.address, was.action) != (now.address, now.action):
        return False
    theirs = dict(now.attributes)
    return all(_alike(value, theirs[path]) for path, value in was.attributes if path in theirs)


def _unmatched(ours: frozenset[ReviewedChange], theirs: frozenset[ReviewedChange],
               *, loose: bool) -> list[ReviewedChange]:
    if not loose:
        return sorted(ours - theirs, key=lambda c: (c.address, c.action))
    return sorted((c for c in ours if not any(_scanned_same(c, t) or _scanned_same(t, c) for t in theirs)),
                  key=lambda c: (c.address, c.action))


def _listed(changes: Sequence[ReviewedChange] | frozenset[ReviewedChange]) -> str:
    ordered = sorted(changes, key=lambda c: (c.address, c.action))
    return "; ".join(c.shown() for c in ordered) or "no changes"


def differing(reviewed: Reviewed, plans: Sequence[Plan]) -> dict[StackName, str]:
    """stack -> why it is refused: its plan now differs from the one reviewed (both shown). A
    stack the merge request did not show is not compared."""
    refused: dict[StackName, str] = {}
    for plan in plans:
        if plan.stack not in reviewed.stacks:
            continue
        method = reviewed.method[plan.stack]
        was, now = reviewed.stacks[plan.stack], shown(plan, reviewed.tree)
        added = _unmatched(now, was, loose=method == LIVE_SCAN)
        gone = _unmatched(was, now, loose=method == LIVE_SCAN)
        if added or gone:
            refused[plan.stack] = (
                f"the plan differs from the one reviewed in the merge request ({method}): "
                f"reviewed: {_listed(was)}; now: {_listed(now)}; "
                f"only in the new plan: {_listed(added)}; only in the reviewed one: {_listed(gone)}. "
                "Plan the change again in a merge request to review what would be applied")
    return refused


def not_reviewed(where: str | None) -> str:
    store = where or (f"the reconciler's record store ({REVIEWED_DIR}/<tree id>.json in the state bucket under "
                      "<prefix>/reconciler/ with state_backend, else in the state directory)")
    return ("not reviewed: no merge request's plan of this config tree was recorded, and require_reviewed is set. "
            "Run `hypergov plan --base <target branch>` on the merge request (with the same state_backend "
            "setting as the reconciler) before merging it; the record is looked up by the config tree's Git id in "
            f"{store}")


def review_verdict(reviewed: Reviewed | None, plans: Sequence[Plan], *, require_reviewed: bool,
                   where: str | None = None) -> ReviewVerdict:
    """Pure: whether the tree was reviewed, and the stacks to refuse: those whose plan differs
    from the reviewed one; with `require_reviewed`, also every stack with changes that no
    review showed (`where`: the record looked for, for the message)."""
    if reviewed is None:
        refused = ({p.stack: Refusal("not reviewed", not_reviewed(where)) for p in plans if not p.is_empty}
                   if require_reviewed else {})
        return ReviewVerdict(state="unreviewed", refused=refused)
    refused = {stack: Refusal("plan changed", why) for stack, why in differing(reviewed, plans).items()}
    if require_reviewed:
        for plan in plans:
            if plan.stack not in reviewed.stacks and not plan.is_empty:
                refused[plan.stack] = Refusal("not reviewed", (
                    f"not reviewed: the merge request's plan of this config tree ({reviewed.where or reviewed.tree}) "
                    "did not show this stack, and require_reviewed is set. Plan the change again with "
                    "`hypergov plan --base <target branch>` to review what would be applied"))
    return ReviewVerdict(state="reviewed", refused=refused)
