"""Terraform `show -json` plans become hypergov ResourceChanges with secrets masked."""

from __future__ import annotations

from engines.plan import MASK, Action
from engines.showplan import UNKNOWN, changes_from_show, drift_from_show, unchanged_from_config


def _entry(address: str, actions: list[str], before: object, after: object, **extra: object) -> dict[str, object]:
    rtype, name = address.split(".", 1)
    return {"address": address, "mode": "managed", "type": rtype, "name": name,
            "change": {"actions": actions, "before": before, "after": after, **extra}}


def test_actions_and_attribute_diffs() -> None:
    data = {"resource_changes": [
        _entry("aws_iam_role.b", ["update"], {"name": "r", "max_session_duration": 3600, "tags_all": {"a": "1"}},
               {"name": "r", "max_session_duration": 7200, "tags_all": {"a": "2"}}),
        _entry("aws_iam_role.a", ["create"], None, {"name": "x"}, after_unknown={"arn": True}),
        _entry("aws_iam_policy.c", ["delete", "create"], {"name": "p1"}, {"name": "p2"}, replace_paths=[["name"]]),
        _entry("aws_iam_policy.d", ["no-op"], {"name": "same"}, {"name": "same"}),
        _entry("aws_iam_policy.e", ["delete"], {"name": "gone"}, None),
    ]}
    changes = changes_from_show(data)
    assert [c.address for c in changes] == ["aws_iam_policy.c", "aws_iam_policy.d", "aws_iam_policy.e",
                                           "aws_iam_role.a", "aws_iam_role.b"]
    by = {c.address: c for c in changes}
    assert by["aws_iam_role.a"].action is Action.CREATE
    assert by["aws_iam_policy.c"].action is Action.REPLACE
    assert by["aws_iam_policy.c"].attributes[0].forces_replacement
    assert by["aws_iam_policy.d"].action is Action.NOOP
    assert by["aws_iam_policy.e"].action is Action.DELETE
    update = by["aws_iam_role.b"]
    assert [(a.path, a.before, a.after) for a in update.attributes] == [("max_session_duration", 3600, 7200)]


def test_sensitive_values_are_masked_before_diffing() -> None:
    data = {"resource_changes": [
        _entry("aws_iam_user_login_profile.x", ["update"], {"password": "old-secret", "user": "u"},
               {"password": "new-secret", "user": "u"},
               before_sensitive={"password": True}, after_sensitive={"password": True}),
    ]}
    (change,) = changes_from_show(data)
    rendered = repr(change)
    assert "secret" not in rendered
    assert change.attributes == () or all(a.before in (MASK, None) for a in change.attributes)


def test_unknown_after_apply_values_are_labelled() -> None:
    data = {"resource_changes": [
        _entry("aws_iam_role.r", ["update"], {"name": "r", "description": "a"}, {"name": "r", "description": None},
               after_unknown={"description": True}),
    ]}
    (change,) = changes_from_show(data)
    assert change.attributes[0].after == UNKNOWN


def test_drift_lists_only_changed_resources() -> None:
    data = {"resource_drift": [
        _entry("aws_iam_role.r", ["update"], {"max_session_duration": 3600}, {"max_session_duration": 43200}),
        _entry("aws_iam_role.s", ["no-op"], {"name": "s"}, {"name": "s"}),
    ]}
    drift = drift_from_show(data)
    assert [c.address for c in drift] == ["aws_iam_role.r"]
    assert drift[0].attributes[0].after == 43200


def test_drift_of_undeclared_computed_attributes_is_ignored() -> None:
    data = {"resource_drift": [
        _entry("aws_iam_role.r", ["update"], {"max_session_duration": 3600, "inline_policy": []},
               {"max_session_duration": 43200, "inline_policy": [{"name": "p"}]}),
        _entry("aws_iam_role.s", ["update"], {"inline_policy": []}, {"inline_policy": [{"name": "q"}]}),
    ]}
    declared = {"aws_iam_role.r": frozenset({"max_session_duration", "name"}), "aws_iam_role.s": frozenset({"name"})}
    (change,) = drift_from_show(data, declared=declared)
    assert change.address == "aws_iam_role.r"
    assert [a.path for a in change.attributes] == ["max_session_duration"]


def test_null_and_an_empty_collection_are_no_drift() -> None:
    """What EKS reads back for a cluster-scope access policy (`namespaces: []`) where the state after
    apply holds null; a real value change in the same attribute still counts."""
    def entry(before_ns: object, after_ns: object) -> dict[str, object]:
        return {"address": "aws_eks_access_policy_association.admin", "type": "aws_eks_access_policy_association",
                "name": "admin", "change": {"actions": ["update"],
                                            "before": {"access_scope": [{"type": "cluster", "namespaces": before_ns}]},
                                            "after": {"access_scope": [{"type": "cluster", "namespaces": after_ns}]}}}

    declared = {"aws_eks_access_policy_association.admin": frozenset({"access_scope"})}
    assert drift_from_show({"resource_drift": [entry(None, [])]}, declared=declared) == ()
    (changed,) = drift_from_show({"resource_drift": [entry(None, ["team-a"])]}, declared=declared)
    assert changed.attributes[0].path == "access_scope"


def test_a_plan_with_nothing_to_do_lists_every_configured_resource_as_a_no_op() -> None:
    """What `show -json` lists when `plan -detailed-exitcode` exits 0, in address order."""
    config = {"provider": {"aws": [{"region": "us-west-2"}]},
              "resource": {"aws_iam_role": {"lead": {"name": "l"}, "engineer": {"name": "e"}},
                           "aws_budgets_budget": {"budget_ml-prod": {"name": "b"}}}}
    assert [(c.address, c.type, c.name, c.action, c.executor, c.attributes)
            for c in unchanged_from_config(config)] == [
        ("aws_budgets_budget.budget_ml-prod", "aws_budgets_budget", "budget_ml-prod", Action.NOOP, "terraform", ()),
        ("aws_iam_role.engineer", "aws_iam_role", "engineer", Action.NOOP, "terraform", ()),
        ("aws_iam_role.lead", "aws_iam_role", "lead", Action.NOOP, "terraform", ())]
    assert unchanged_from_config({"provider": {"aws": [{"region": "us-west-2"}]}}) == ()
