"""The engine-neutral Plan: attribute diffs, masking, fingerprints."""

from __future__ import annotations

from engines.plan import MASK, Action, Plan, ResourceChange, StackName, diff_attributes, mask


def test_diff_attributes_descends_into_mappings() -> None:
    diffs = diff_attributes({"a": 1, "tags": {"x": "1", "y": "2"}}, {"a": 1, "tags": {"x": "1", "y": "3", "z": "4"}})
    assert [(d.path, d.before, d.after) for d in diffs] == [("tags.y", "2", "3"), ("tags.z", None, "4")]


def test_diff_attributes_masks_sensitive_paths() -> None:
    (d,) = diff_attributes({"token": "abc"}, {"token": "def"}, sensitive=frozenset({"token"}))
    assert (d.before, d.after, d.sensitive) == (MASK, MASK, True)


def test_mask_follows_terraform_sensitivity_maps() -> None:
    value = {"a": "public", "b": {"secret": "s3cr3t", "ok": 1}, "l": ["x", "y"]}
    masked = mask(value, {"b": {"secret": True}, "l": [False, True]})
    assert masked == {"a": "public", "b": {"secret": MASK, "ok": 1}, "l": ["x", MASK]}


def test_fingerprint_changes_with_content() -> None:
    one = Plan(StackName("s"), "terraform", (ResourceChange("a.b", "a", "b", Action.CREATE, "terraform"),))
    two = Plan(StackName("s"), "terraform", (ResourceChange("a.b", "a", "b", Action.DELETE, "terraform"),))
    assert one.fingerprint() == Plan(StackName("s"), "terraform", one.changes).fingerprint()
    assert one.fingerprint() != two.fingerprint()
