"""Terraform's `show -json` plan representation -> hypergov `ResourceChange`s (pure).

Sensitive values are masked with the plan's own `before_sensitive` / `after_sensitive` maps
before anything else sees them; computed-after-apply values read "(known after apply)". `show
-json` holds a sensitive value in clear (marked in `*_sensitive`): the changed attributes are
found on the clear values (so a changed secret is a change), then each is masked and a sensitive
after-value keeps only its SHA-256 (`AttributeChange.digest`, for the reviewed plan's comparison).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from engines.plan import Action, AttributeChange, ResourceChange, diff_attributes, mask, value_digest

UNKNOWN = "(known after apply)"
_IGNORED_ATTRS = frozenset({"tags_all", "id", "arn"})


def _action(actions: list[str]) -> Action:
    if actions in (["delete", "create"], ["create", "delete"]):
        return Action.REPLACE
    return {"create": Action.CREATE, "update": Action.UPDATE, "delete": Action.DELETE,
            "no-op": Action.NOOP, "read": Action.READ}[actions[0]]


def _with_unknowns(after: Any, unknown: Any) -> Any:
    if unknown is True:
        return UNKNOWN
    if isinstance(after, dict) and isinstance(unknown, dict):
        out = dict(after)
        for key, flag in unknown.items():
            out[key] = _with_unknowns(after.get(key), flag)
        return out
    return after


def _paths(replace_paths: list[list[Any]] | None) -> frozenset[str]:
    return frozenset(".".join(str(p) for p in path) for path in (replace_paths or []))


def change_from_entry(entry: dict[str, Any]) -> ResourceChange:
    change = entry["change"]
    action = _action(change["actions"])
    imported = change.get("importing") is not None and action in (Action.NOOP, Action.UPDATE)
    if imported:  # an `import` block: the live object becomes the state's (and is updated where it differs)
        action = Action.IMPORT
    attributes: tuple[AttributeChange, ...] = ()
    if action in (Action.UPDATE, Action.REPLACE, Action.IMPORT):
        before = change.get("before")
        after = _with_unknowns(change.get("after"), change.get("after_unknown", False))
        before_map = {k: v for k, v in (before or {}).items() if k not in _IGNORED_ATTRS}
        after_map = {k: v for k, v in (after or {}).items() if k not in _IGNORED_ATTRS}
        clear = diff_attributes(before_map, after_map, replace_paths=_paths(change.get("replace_paths")))
        attributes = tuple(_masked(a, change.get("before_sensitive", False), change.get("after_sensitive", False))
                           for a in clear)
    return ResourceChange(address=entry["address"], type=entry["type"], name=entry["name"], action=action,
                          executor="terraform", attributes=attributes)


def _sensitivity_at(sensitive: Any, path: str) -> Any:
    """The part of a `*_sensitive` map at a dotted attribute path (True: all of it is sensitive).
    A path the map does not follow (a key with a dot in it) is as sensitive as anything below."""
    for part in path.split("."):
        if sensitive is True or not isinstance(sensitive, dict):
            return sensitive
        if part not in sensitive:
            return _any_sensitive(sensitive)
        sensitive = sensitive[part]
    return sensitive


def _any_sensitive(sensitive: Any) -> bool:
    if isinstance(sensitive, dict):
        return any(_any_sensitive(v) for v in sensitive.values())
    if isinstance(sensitive, list):
        return any(_any_sensitive(v) for v in sensitive)
    return sensitive is True


def _masked(change: AttributeChange, before_sensitive: Any, after_sensitive: Any) -> AttributeChange:
    """One changed attribute with what the plan marks sensitive masked; a sensitive after-value
    keeps its digest only."""
    before = mask(change.before, _sensitivity_at(before_sensitive, change.path))
    after = mask(change.after, _sensitivity_at(after_sensitive, change.path))
    hidden = before != change.before or after != change.after
    if not hidden:
        return change
    return AttributeChange(path=change.path, before=None if change.before is None else before,
                           after=None if change.after is None else after, sensitive=True,
                           forces_replacement=change.forces_replacement,
                           digest=value_digest(change.after) if after != change.after else None)


def changes_from_show(data: dict[str, Any]) -> tuple[ResourceChange, ...]:
    """Planned changes, in address order."""
    entries = sorted(data.get("resource_changes", []), key=lambda e: e["address"])
    return tuple(change_from_entry(e) for e in entries if e.get("mode", "managed") == "managed")


def unchanged_from_config(config: Mapping[str, Any]) -> tuple[ResourceChange, ...]:
    """What `changes_from_show` returns for a plan that terraform says has nothing to do
    (`plan -detailed-exitcode` 0): then configuration and state hold the same resources, and
    `show -json` lists each managed resource of the configuration as a no-op, in address order."""
    return tuple(sorted((ResourceChange(address=f"{tf_type}.{name}", type=tf_type, name=name, action=Action.NOOP,
                                        executor="terraform")
                         for tf_type, bodies in config.get("resource", {}).items() for name in bodies),
                        key=lambda c: c.address))


def drift_from_show(data: dict[str, Any], *,
                    declared: Mapping[str, frozenset[str]] | None = None) -> tuple[ResourceChange, ...]:
    """Out-of-band changes a refresh-only plan found (`resource_drift`). With `declared`
    (address -> attribute names hypergov sets), only drift of declared attributes counts: the
    provider also refreshes computed ones (e.g. a role's `inline_policy`, filled in from the
    separately managed role policies), and those are nobody's drift."""
    changes = []
    for entry in sorted(data.get("resource_drift", []), key=lambda e: e["address"]):
        if entry["change"]["actions"] == ["no-op"]:
            continue
        change = change_from_entry(entry)
        if change.action is Action.UPDATE:
            keep = declared.get(change.address, frozenset()) if declared is not None else None
            attributes = tuple(a for a in change.attributes if (keep is None or a.path.split(".")[0] in keep)
                               and _unset_as_empty(a.before) != _unset_as_empty(a.after))
            if not attributes:
                continue
            change = replace(change, attributes=attributes)
        changes.append(change)
    return tuple(changes)


def _unset_as_empty(value: Any) -> Any:
    """Null and an empty list or map mean the same to AWS (e.g. an EKS cluster-scope access
    policy's `namespaces`: unset in the state after apply, `[]` as the API reads it back), so
    they are no drift."""
    if isinstance(value, dict):
        items = {k: _unset_as_empty(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v is not None} or None
    if isinstance(value, list):
        return [_unset_as_empty(v) for v in value] or None
    return value
