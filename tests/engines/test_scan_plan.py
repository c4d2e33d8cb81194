"""Terraform's changes decided from the live scan (pure): what terraform's own plan would say for
each case of state (the base tree's objects), configuration (the head's) and live values (the
scan's items: live against the base, as terraform's refresh reads state back). The replacements
follow the AWS provider's documentation ("Forces new resource": an IAM role's `name` and `path`, an
access entry's `principal_arn`)."""

from __future__ import annotations

from typing import Any

from engines.desired import DesiredObject, address_of
from engines.live.items import AttributeDrift, DriftItem
from engines.live.scan_plan import scan_changes, stack_changes, terraform_name
from engines.plan import Action

ROLE = "aws:iam/role:Role"


def role(name: str = "acme-nlp-lead", logical: str = "role-lead@ml-prod", **inputs: Any) -> DesiredObject:
    return DesiredObject(stack="project-nlp", type=ROLE, name=logical, address=address_of(ROLE, logical),
                         account="111122223333", region="us-west-2",
                         inputs={"name": name, "path": "/hypergov/", "maxSessionDuration": 3600, **inputs},
                         property_dependencies={})


def item(obj: DesiredObject, kind: str, *attributes: AttributeDrift) -> DriftItem:
    return DriftItem(kind=kind, stack=obj.stack, address=obj.address, type="aws_iam_role",  # type: ignore[arg-type]
                     account="111122223333", region="us-west-2", fix="f", attributes=attributes)


def actions(changes: tuple[Any, ...]) -> list[tuple[str, Action]]:
    return [(c.address, c.action) for c in changes]


def test_the_address_is_terraforms() -> None:
    assert role().address == "aws_iam_role.role-lead_ml-prod"
    assert terraform_name(ROLE, "maxSessionDuration") == "max_session_duration"
    assert terraform_name(ROLE, "inlinePolicies") == "inline_policy"  # the translation's rename


def test_declared_now_not_before_is_a_create_and_the_reverse_a_delete() -> None:
    new, old = role(), role("acme-nlp-viewer", "role-viewer@ml-prod")
    assert actions(stack_changes([old], [new], [])) == [(new.address, Action.CREATE), (old.address, Action.DELETE)]


def test_live_as_declared_is_nothing_to_do_whatever_the_base_said() -> None:
    assert stack_changes([role()], [role()], []) == ()
    # someone already set the head's value by hand: terraform's refresh reads it, nothing to do
    base, head = role(maxSessionDuration=3600), role(maxSessionDuration=7200)
    by_hand = item(base, "changed", AttributeDrift("maxSessionDuration", 3600, 7200))
    assert stack_changes([base], [head], [by_hand]) == ()


def test_a_changed_input_is_an_update_in_terraforms_names_from_live_to_declared() -> None:
    (change,) = stack_changes([role()], [role(maxSessionDuration=7200)], [])
    assert (change.action, change.type, change.name, change.executor) == (
        Action.UPDATE, "aws_iam_role", "role-lead_ml-prod", "terraform")
    assert [(a.path, a.before, a.after) for a in change.attributes] == [("max_session_duration", 3600, 7200)]


def test_drift_is_undone_from_its_live_value_and_a_head_change_of_it_wins() -> None:
    drift = item(role(), "changed", AttributeDrift("maxSessionDuration", 3600, 43200))
    (undone,) = stack_changes([role()], [role()], [drift])
    assert [(a.path, a.before, a.after) for a in undone.attributes] == [("max_session_duration", 43200, 3600)]
    (changed,) = stack_changes([role()], [role(maxSessionDuration=7200)], [drift])
    assert [(a.path, a.before, a.after) for a in changed.attributes] == [("max_session_duration", 43200, 7200)]


def test_a_document_set_by_hand_to_the_heads_in_another_spelling_is_nothing_to_do() -> None:
    declared = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["sts:AssumeRole"]}]}'
    live = {"Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow"}], "Version": "2012-10-17"}
    base = role(assumeRolePolicy='{"Version": "2012-10-17", "Statement": []}')
    head = role(assumeRolePolicy=declared)
    drift = item(base, "changed", AttributeDrift("assumeRolePolicy", {"Version": "2012-10-17", "Statement": []}, live))
    assert stack_changes([base], [head], [drift]) == ()


def test_an_object_gone_live_is_created_again() -> None:
    assert actions(stack_changes([role()], [role()], [item(role(), "missing")])) == [
        (role().address, Action.CREATE)]


def test_a_new_name_or_path_replaces_the_object() -> None:
    (change,) = stack_changes([role()], [role("acme-nlp-leads")], [])
    assert change.action is Action.REPLACE
    assert [(a.path, a.before, a.after, a.forces_replacement) for a in change.attributes] == [
        ("name", "acme-nlp-lead", "acme-nlp-leads", True)]


def test_a_secret_input_is_masked_in_a_change() -> None:
    (change,) = stack_changes([role(clientSecret="old")], [role(clientSecret="new")], [])
    assert [(a.path, a.before, a.after) for a in change.attributes] == [("client_secret", "(masked)", "(masked)")]


def test_a_removed_boundary_is_an_update_and_unmanaged_objects_are_not_terraforms() -> None:
    head = role(permissionsBoundary="arn:aws:iam::111122223333:policy/b")
    unbounded = item(head, "unbounded", AttributeDrift("permissionsBoundary", "arn:aws:iam::111122223333:policy/b",
                                                       None))
    extra_policy = item(head, "unbounded", AttributeDrift("inlinePolicies.by-hand", None, ["iam:*"]))
    stranger = DriftItem(kind="unmanaged", stack="project-nlp", address="aws_iam_role.console", type="aws_iam_role",
                         account="1", region="r", fix="f")
    changes = stack_changes([head], [head], [unbounded, extra_policy, stranger])
    assert [(c.action, [a.path for a in c.attributes]) for c in changes] == [
        (Action.UPDATE, ["permissions_boundary"])]


def test_every_chosen_stack_gets_its_own_changes() -> None:
    other = DesiredObject(stack="project-vision", type=ROLE, name="role-lead@ml-prod",
                          address=address_of(ROLE, "role-lead@ml-prod"), account="1", region="r",
                          inputs={"name": "acme-vision-lead"}, property_dependencies={})
    found = scan_changes(["project-nlp", "project-vision"], [role()], [role(), other], [])
    assert {s: actions(c) for s, c in found.items()} == {"project-nlp": [],
                                                        "project-vision": [(other.address, Action.CREATE)]}
